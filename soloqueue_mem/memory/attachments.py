"""All SQL for ``attachments`` and its FTS index (seed 003 §4.4).

An attachment row describes a file whose bytes are an artifact in the CAS; the row
never holds the bytes. The FTS table is contentless like the other indexes of
memory.db: it holds the index form (CJK characters spaced) of the description,
transcription, extracted text, file name and tags, keyed by the row's rowid, so a
delete passes the same values back.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any, NamedTuple

from soloqueue_mem import jsonio
from soloqueue_mem.db.connect import write_tx
from soloqueue_mem.db.ids import row_by_prefix
from soloqueue_mem.text.cjk import index_form

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


def insert(conn: sqlite3.Connection, attachment: Attachment) -> bool:
    """Add the row and its index entry; False when its id is already there."""
    values = list(attachment)
    for i in _JSON_FIELDS:
        values[i] = jsonio.dumps_compact(values[i])
    cursor = conn.execute(
        f"INSERT INTO attachments ({COLUMNS}) VALUES ({', '.join('?' * len(values))})"  # noqa: S608
        " ON CONFLICT (id) DO NOTHING",
        values,
    )
    if cursor.rowcount == 0:
        return False
    conn.execute(
        "INSERT INTO attachments_fts (rowid, description, transcription, extracted_text,"
        " filename, tags) VALUES (?, ?, ?, ?, ?, ?)",
        (cursor.lastrowid, *_fts_values(attachment)),
    )
    return True


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


def delete(conn: sqlite3.Connection, attachment_id: str) -> None:
    """Remove the row and its index entry (a missing row is no error)."""
    row = conn.execute(
        f"SELECT rowid, {COLUMNS} FROM attachments WHERE id = ?",  # noqa: S608
        (attachment_id,),
    ).fetchone()
    if row is None:
        return
    conn.execute(
        "INSERT INTO attachments_fts (attachments_fts, rowid, description, transcription,"
        " extracted_text, filename, tags) VALUES ('delete', ?, ?, ?, ?, ?, ?)",
        (row[0], *_fts_values(_attachment(row[1:]))),
    )
    conn.execute("DELETE FROM attachments WHERE rowid = ?", (row[0],))


def get(conn: sqlite3.Connection, ref: str) -> Attachment:
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


def _where(filters: Filters) -> tuple[str, dict[str, Any]]:
    clauses = [
        f"attachments.{col} = :{name}"
        for name, col in FILTER_COLUMNS.items()
        if getattr(filters, name)
    ]
    if filters.tag:
        clauses.append("EXISTS (SELECT 1 FROM json_each(attachments.tags) WHERE value = :tag)")
    return " AND ".join([_ACTIVE, *clauses]), filters._asdict()


def list_attachments(
    conn: sqlite3.Connection, filters: Filters, now: str, limit: int
) -> list[Attachment]:
    """Unexpired attachments matching ``filters``, newest first."""
    where, params = _where(filters)
    rows = conn.execute(
        f"SELECT {_QUALIFIED} FROM attachments WHERE {where}"  # noqa: S608 - fixed fragments
        " ORDER BY attachments.created_at DESC, attachments.rowid DESC LIMIT :limit",
        {**params, "now": now, "limit": limit},
    )
    return [_attachment(row) for row in rows]


def search(
    conn: sqlite3.Connection, match: str, filters: Filters, now: str, limit: int
) -> list[tuple[Attachment, float]]:
    """Unexpired attachments matching an FTS5 expression, best BM25 first."""
    where, params = _where(filters)
    rows = conn.execute(
        f"""SELECT {_QUALIFIED}, -bm25(attachments_fts) AS score
            FROM attachments_fts JOIN attachments ON attachments.rowid = attachments_fts.rowid
            WHERE attachments_fts MATCH :match AND {where}
            ORDER BY score DESC, attachments.created_at DESC LIMIT :limit""",  # noqa: S608
        {**params, "match": match, "now": now, "limit": limit},
    )
    return [(_attachment(row[:-1]), float(row[-1])) for row in rows]


def expired(conn: sqlite3.Connection, now: str, limit: int) -> list[Attachment]:
    """Attachments whose ``expires_at`` has passed, oldest expiry first."""
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM attachments WHERE expires_at IS NOT NULL"  # noqa: S608
        " AND expires_at <= ? ORDER BY expires_at LIMIT ?",
        (now, limit),
    )
    return [_attachment(row) for row in rows]


def every(conn: sqlite3.Connection) -> Iterator[Attachment]:
    """Every row, expired ones included, in insertion order (export)."""
    for row in conn.execute(f"SELECT {COLUMNS} FROM attachments ORDER BY rowid"):  # noqa: S608
        yield _attachment(row)


def put_back(conn: sqlite3.Connection, attachment: Attachment) -> str:
    """Put back an exported attachment row: ``added``, ``existing`` or ``conflict``."""
    with write_tx(conn):
        if insert(conn, attachment):
            return "added"
        found = conn.execute(
            f"SELECT {COLUMNS} FROM attachments WHERE id = ?",  # noqa: S608
            (attachment.id,),
        ).fetchone()
    return "existing" if _attachment(found) == attachment else "conflict"
