"""All SQL for ``attachments`` on PostgreSQL (as :mod:`soloqueue_mem.memory.attachments`
does in memory.db).

The row and its extracted text are shared by every host; the blob is in the CAS of the
host that attached it (``local_path``, ``artifact_id`` name its place there). ``search``
holds the bigram lexemes (:mod:`soloqueue_mem.storage.postgres.text`) of the description,
transcription, extracted text, file name and tags, so recall's ``attachments`` channel
finds a row as the SQLite index does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from soloqueue_mem import jsonio
from soloqueue_mem.db.ids import row_by_prefix
from soloqueue_mem.memory.attachments import (
    _JSON_FIELDS,
    COLUMNS,
    FILTER_COLUMNS,
    Attachment,
    Filters,
)
from soloqueue_mem.memory.attachments import _attachment as attachment_from_row
from soloqueue_mem.storage.postgres.text import any_query, document

if TYPE_CHECKING:
    import psycopg

_ACTIVE = "(expires_at IS NULL OR expires_at > %(now)s)"


def search_text(a: Attachment) -> str:
    """What the lexical index holds: the texts the SQLite index holds."""
    return document(
        " ".join([a.description, a.transcription, a.extracted_text, a.filename, *a.tags])
    )


def insert(conn: psycopg.Connection, attachment: Attachment) -> bool:
    """Add the row unless its id is taken; whether it was added."""
    values: list[Any] = list(attachment)
    for i in _JSON_FIELDS:
        values[i] = jsonio.dumps_compact(values[i])
    cursor = conn.execute(
        f"INSERT INTO attachments ({COLUMNS}, search)"  # noqa: S608 - constant columns
        f" VALUES ({', '.join(['%s'] * len(values))}, to_tsvector('simple', %s))"
        " ON CONFLICT (id) DO NOTHING",
        (*values, search_text(attachment)),
    )
    return cursor.rowcount == 1


def put_back(conn: psycopg.Connection, attachment: Attachment) -> str:
    """Put back an exported row: ``added``, ``existing`` or ``conflict``."""
    with conn.transaction():
        if insert(conn, attachment):
            return "added"
        found = conn.execute(
            f"SELECT {COLUMNS} FROM attachments WHERE id = %s",  # noqa: S608
            (attachment.id,),
        ).fetchone()
    same = found is not None and attachment_from_row(found) == attachment
    return "existing" if same else "conflict"


def _where(filters: Filters) -> tuple[str, dict[str, Any]]:
    clauses = [
        f"{col} = %({name})s" for name, col in FILTER_COLUMNS.items() if getattr(filters, name)
    ]
    if filters.tag:
        clauses.append("(tags::jsonb) ? %(tag)s")
    return " AND ".join([_ACTIVE, *clauses]), filters._asdict()


def search(
    conn: psycopg.Connection, terms: list[str], filters: Filters, now: str, limit: int
) -> list[tuple[Attachment, float]]:
    """Unexpired attachments matching any of ``terms``, best ``ts_rank`` first."""
    match = any_query(terms)
    if match is None:
        return []
    where, params = _where(filters)
    rows = conn.execute(
        f"SELECT {COLUMNS}, ts_rank(search, q) AS score"  # noqa: S608 - fixed fragments
        f" FROM attachments, to_tsquery('simple', %(match)s) AS q WHERE search @@ q AND {where}"
        " ORDER BY score DESC, created_at DESC LIMIT %(limit)s",
        {**params, "match": match, "now": now, "limit": limit},
    ).fetchall()
    return [(attachment_from_row(row[:-1]), float(row[-1])) for row in rows]


def every(conn: psycopg.Connection) -> Iterator[Attachment]:
    """Every row, expired ones included, in insertion order (export)."""
    for row in conn.execute(f"SELECT {COLUMNS} FROM attachments ORDER BY seq"):  # noqa: S608
        yield attachment_from_row(row)


class PostgresRows:
    """The rows in the database (:class:`soloqueue_mem.memory.attach.Rows`)."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn

    def insert(self, row: Attachment) -> None:
        with self.conn.transaction():
            insert(self.conn, row)

    def get(self, ref: str) -> Attachment:
        row = row_by_prefix(self.conn, "attachments", COLUMNS, ref, "attachment")
        return attachment_from_row(row)

    def listed(self, filters: Filters, now: str, limit: int) -> list[Attachment]:
        """Unexpired attachments matching ``filters``, newest first."""
        where, params = _where(filters)
        rows = self.conn.execute(
            f"SELECT {COLUMNS} FROM attachments WHERE {where}"  # noqa: S608 - fixed fragments
            " ORDER BY created_at DESC, seq DESC LIMIT %(limit)s",
            {**params, "now": now, "limit": limit},
        ).fetchall()
        return [attachment_from_row(row) for row in rows]

    def expired(self, now: str, limit: int) -> list[Attachment]:
        """Attachments whose ``expires_at`` has passed, oldest expiry first."""
        rows = self.conn.execute(
            f"SELECT {COLUMNS} FROM attachments WHERE expires_at IS NOT NULL"  # noqa: S608
            " AND expires_at <= %s ORDER BY expires_at, seq LIMIT %s",
            (now, limit),
        ).fetchall()
        return [attachment_from_row(row) for row in rows]

    def delete(self, rows: list[Attachment]) -> None:
        with self.conn.transaction():
            self.conn.execute(
                "DELETE FROM attachments WHERE id = ANY(%s)", ([row.id for row in rows],)
            )
