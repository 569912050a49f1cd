"""Schema step: rewrite every row's ``search`` with the bigram lexemes of
:mod:`soloqueue_mem.pg.text` (databases written before it indexed CJK characters one by
one). Rows are read and rewritten in batches of ``BATCH`` by key, so memory stays flat
at any size; it runs inside the migration's transaction, so the switch is atomic (the
tables stay locked against other sessions until it commits).
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


# The GIN indexes are dropped first and built again at the end: building one in bulk
# is many times faster than updating it row by row.
INDEXES = {"quarantine_logs": "quarantine_logs_search", "memories": "memories_search"}
BUILD_MEMORY = "256MB"  # maintenance_work_mem for those builds, this transaction only


def reindex_bigrams(conn: psycopg.Connection) -> None:
    """Re-index the turns and the memories (see the module doc)."""
    conn.execute("SELECT set_config('maintenance_work_mem', %s, true)", (BUILD_MEMORY,))
    for index in INDEXES.values():
        conn.execute(f"DROP INDEX IF EXISTS {index}")  # constant names
    _reindex_rows(conn)
    for table, index in INDEXES.items():
        conn.execute(f"CREATE INDEX {index} ON {table} USING GIN (search)")  # constants


def _reindex_rows(conn: psycopg.Connection) -> None:
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
