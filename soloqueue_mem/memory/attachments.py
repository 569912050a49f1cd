"""All SQL for ``attachments`` (seed 003 §4.4), written once for both back ends
(:mod:`soloqueue_mem.db.adapter`), and its FTS5 index; PostgreSQL's full-text index is
its :class:`FullText` in :mod:`soloqueue_mem.storage.postgres.attachments`.

An attachment row describes a file whose bytes are an artifact in the CAS; the row
never holds the bytes. The FTS table is contentless like the other indexes of
memory.db: it holds the index form (CJK characters spaced) of the description,
transcription, extracted text, file name and tags, keyed by the row's rowid, so a
delete passes the same values back.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from soloqueue_mem import jsonio
from soloqueue_mem.db.adapter import Db
from soloqueue_mem.db.ids import row_by_prefix
from soloqueue_mem.text.cjk import index_form
from soloqueue_mem.text.fts import match_expression
from soloqueue_mem.tuples import NamedTuple, Protocol

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import Any

    from soloqueue_mem.db.adapter import Connection

DIRECTIONS = ("inbound", "outbound")


class Attachment(NamedTuple):
    id: str
    group: str
    agent: str
    session: str
    episode_id: str
    filename: str
    original_filename: str
    mime_type: str
    file_size: int
    local_path: str  # the blob's path inside the data directory
    url: str
    direction: str  # inbound (user → agent) or outbound (agent → user)
    description: str
    transcription: str
    extracted_text: str
    tags: list[str]
    linked_memory_ids: list[str]
    created_at: str
    expires_at: str | None
    artifact_id: int | None
    content_hash: str


COLUMNS = (
    "id, group_id, agent_id, session_id, episode_id, filename, original_filename, "
    "mime_type, file_size, local_path, url, direction, description, transcription, "
    "extracted_text, tags, linked_memory_ids, created_at, expires_at, artifact_id, "
    "content_hash"
)
_QUALIFIED = ", ".join(f"attachments.{name}" for name in COLUMNS.split(", "))
_JSON_FIELDS = (15, 16)
_ACTIVE = "(attachments.expires_at IS NULL OR attachments.expires_at > :now)"


def _attachment(row: tuple[Any, ...]) -> Attachment:
    values = list(row)
    for i in _JSON_FIELDS:
        values[i] = jsonio.loads(values[i])
    return Attachment(*values)


def _fts_values(a: Attachment) -> tuple[str, str, str, str, str]:
    return (
        index_form(a.description),
        index_form(a.transcription),
        index_form(a.extracted_text),
        index_form(a.filename),
        index_form(" ".join(a.tags)),
    )


class FullText(Protocol):
    """How a back end's full-text index of attachments follows the table."""

    order: str  # the column that orders rows as they were inserted

    def insert(self, db: Db, values: list[Any], attachment: Attachment) -> bool:
        """Add the row (its stored ``values``) and index it, unless its id is taken;
        whether it was added."""
        ...

    def forget(self, db: Db, attachment_id: str) -> None:
        """Drop the index entry of the row about to be deleted."""
        ...

    def search(
        self, db: Db, terms: list[str], filters: Filters, now: str, limit: int
    ) -> list[tuple[Attachment, float]]:
        """Unexpired attachments matching any of ``terms``, best first, with their scores."""
        ...


class Fts5:
    """:class:`FullText` on memory.db: the contentless ``attachments_fts``, by rowid."""

    order = "rowid"

    def insert(self, db: Db, values: list[Any], attachment: Attachment) -> bool:
        cursor = db.execute(
            f"INSERT INTO attachments ({COLUMNS}) VALUES ({', '.join('?' * len(values))})"  # noqa: S608
            " ON CONFLICT (id) DO NOTHING",
            values,
        )
        if cursor.rowcount == 0:
            return False
        db.execute(
            "INSERT INTO attachments_fts (rowid, description, transcription, extracted_text,"
            " filename, tags) VALUES (?, ?, ?, ?, ?, ?)",
            (cursor.lastrowid, *_fts_values(attachment)),
        )
        return True

    def forget(self, db: Db, attachment_id: str) -> None:
        row = db.fetchone(
            f"SELECT rowid, {COLUMNS} FROM attachments WHERE id = ?",  # noqa: S608
            (attachment_id,),
        )
        if row is not None:  # the index is contentless: it is given the values back
            db.execute(
                "INSERT INTO attachments_fts (attachments_fts, rowid, description,"
                " transcription, extracted_text, filename, tags)"
                " VALUES ('delete', ?, ?, ?, ?, ?, ?)",
                (row[0], *_fts_values(_attachment(row[1:]))),
            )

    def search(
        self, db: Db, terms: list[str], filters: Filters, now: str, limit: int
    ) -> list[tuple[Attachment, float]]:
        match = match_expression(terms)
        return [] if match is None else search(db.conn, match, filters, now, limit)


FTS5 = Fts5()


def insert(conn: Connection, attachment: Attachment, index: FullText = FTS5) -> bool:
    """Add the row and its index entry; False when its id is already there."""
    values: list[Any] = list(attachment)
    for i in _JSON_FIELDS:
        values[i] = jsonio.dumps_compact(values[i])
    return index.insert(Db(conn), values, attachment)


def rebuild_fts(conn: sqlite3.Connection) -> int:
    """Re-create the attachment index from the table (inside the caller's write
    transaction); return the number of attachments indexed."""
    conn.execute("INSERT INTO attachments_fts (attachments_fts) VALUES ('delete-all')")
    rows = conn.execute(f"SELECT rowid, {COLUMNS} FROM attachments").fetchall()  # noqa: S608
    conn.executemany(
        "INSERT INTO attachments_fts (rowid, description, transcription, extracted_text,"
        " filename, tags) VALUES (?, ?, ?, ?, ?, ?)",
        [(row[0], *_fts_values(_attachment(row[1:]))) for row in rows],
    )
    return len(rows)


def delete(conn: Connection, attachment_id: str, index: FullText = FTS5) -> None:
    """Remove the row and its index entry (a missing row is no error)."""
    db = Db(conn)
    index.forget(db, attachment_id)
    db.execute("DELETE FROM attachments WHERE id = ?", (attachment_id,))


def get(conn: Connection, ref: str) -> Attachment:
    """The attachment with id ``ref`` or the only one whose id starts with it."""
    return _attachment(row_by_prefix(conn, "attachments", COLUMNS, ref, "attachment"))


class Filters(NamedTuple):
    group: str | None = None
    agent: str | None = None
    session: str | None = None
    direction: str | None = None
    tag: str | None = None


FILTER_COLUMNS = {
    "group": "group_id",
    "agent": "agent_id",
    "session": "session_id",
    "direction": "direction",
}  # the filters compared with a column (``tag`` is matched in the list)


def where(db: Db, filters: Filters) -> tuple[str, dict[str, Any]]:
    """The SQL condition (``:name`` marks) of ``filters`` on unexpired rows (``:now``)
    and its parameters."""
    clauses = [
        f"attachments.{col} = :{name}"
        for name, col in FILTER_COLUMNS.items()
        if getattr(filters, name)
    ]
    if filters.tag:
        clauses.append(db.json_holds("attachments.tags", ":tag"))
    return " AND ".join([_ACTIVE, *clauses]), filters._asdict()


def list_attachments(
    conn: Connection, filters: Filters, now: str, limit: int, index: FullText = FTS5
) -> list[Attachment]:
    """Unexpired attachments matching ``filters``, newest first."""
    db = Db(conn)
    condition, params = where(db, filters)
    rows = db.fetchall(
        f"SELECT {_QUALIFIED} FROM attachments WHERE {condition}"  # noqa: S608 - fixed fragments
        f" ORDER BY attachments.created_at DESC, attachments.{index.order} DESC LIMIT :limit",
        {**params, "now": now, "limit": limit},
    )
    return [_attachment(row) for row in rows]


def search(
    conn: sqlite3.Connection, match: str, filters: Filters, now: str, limit: int
) -> list[tuple[Attachment, float]]:
    """Unexpired attachments matching an FTS5 expression, best BM25 first."""
    condition, params = where(Db(conn), filters)
    rows = conn.execute(
        f"""SELECT {_QUALIFIED}, -bm25(attachments_fts) AS score
            FROM attachments_fts JOIN attachments ON attachments.rowid = attachments_fts.rowid
            WHERE attachments_fts MATCH :match AND {condition}
            ORDER BY score DESC, attachments.created_at DESC LIMIT :limit""",  # noqa: S608
        {**params, "match": match, "now": now, "limit": limit},
    )
    return [(_attachment(row[:-1]), float(row[-1])) for row in rows]


def expired(conn: Connection, now: str, limit: int, index: FullText = FTS5) -> list[Attachment]:
    """Attachments whose ``expires_at`` has passed, oldest expiry first."""
    rows = Db(conn).fetchall(
        f"SELECT {COLUMNS} FROM attachments WHERE expires_at IS NOT NULL"  # noqa: S608
        f" AND expires_at <= ? ORDER BY expires_at, {index.order} LIMIT ?",
        (now, limit),
    )
    return [_attachment(row) for row in rows]


def every(conn: Connection, index: FullText = FTS5) -> Iterator[Attachment]:
    """Every row, expired ones included, in insertion order (export)."""
    db = Db(conn)
    order = f"SELECT {COLUMNS} FROM attachments ORDER BY {index.order}"  # noqa: S608
    for row in db.execute(order):
        yield _attachment(row)


def put_back(conn: Connection, attachment: Attachment, index: FullText = FTS5) -> str:
    """Put back an exported attachment row: ``added``, ``existing`` or ``conflict``."""
    db = Db(conn)
    with db.write():
        if insert(conn, attachment, index):
            return "added"
        found = db.fetchone(
            f"SELECT {COLUMNS} FROM attachments WHERE id = ?",  # noqa: S608
            (attachment.id,),
        )
    return "existing" if found is not None and _attachment(found) == attachment else "conflict"
