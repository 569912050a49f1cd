"""Schema step: rewrite every row's ``search`` with the bigram lexemes of
:mod:`soloqueue_mem.pg.text` (databases written before it indexed CJK characters one by
one). Rows are read and rewritten in batches of ``BATCH`` by key, so memory stays flat
at any size; it runs inside the migration's transaction, so the switch is atomic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from soloqueue_mem.memory.store import _memory as memory_from_row
from soloqueue_mem.pg.memories import _COLUMNS as MEMORY_COLUMNS
from soloqueue_mem.pg.memories import _search_text as memory_search_text
from soloqueue_mem.pg.text import document
from soloqueue_mem.pg.turns import stored_body

if TYPE_CHECKING:
    import psycopg

BATCH = 5_000


def reindex_bigrams(conn: psycopg.Connection) -> None:
    """Re-index the turns and the memories (see the module doc)."""
    last = 0
    while rows := conn.execute(
        "SELECT id, role, content, tool_calls, tool_results FROM quarantine_logs"
        " WHERE id > %s ORDER BY id LIMIT %s",
        (last, BATCH),
    ).fetchall():
        ids = [row[0] for row in rows]
        docs = [document(stored_body(*row[1:])) for row in rows]
        _rewrite(conn, "quarantine_logs", "id", ids, docs)
        last = ids[-1]
    last = 0
    while rows := conn.execute(
        f"SELECT seq, {MEMORY_COLUMNS} FROM memories"  # noqa: S608 - constant names
        " WHERE seq > %s ORDER BY seq LIMIT %s",
        (last, BATCH),
    ).fetchall():
        seqs = [row[0] for row in rows]
        docs = [memory_search_text(memory_from_row(row[1:])) for row in rows]
        _rewrite(conn, "memories", "seq", seqs, docs)
        last = seqs[-1]


def _rewrite(
    conn: psycopg.Connection, table: str, key: str, keys: list[int], docs: list[str]
) -> None:
    conn.execute(
        f"UPDATE {table} SET search = to_tsvector('simple', u.doc)"  # noqa: S608 - constants
        f" FROM unnest(%s::bigint[], %s::text[]) AS u(k, doc) WHERE {table}.{key} = u.k",
        (keys, docs),
    )
