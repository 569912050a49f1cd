"""``memories`` on PostgreSQL: its full-text index (the ``search`` column) for the SQL
written once in :mod:`soloqueue_mem.memory.store` (``remember``, the reads, erasing),
and the search that uses it.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from soloqueue_mem.db.adapter import Db, postgres_sql
from soloqueue_mem.memory.model import Memory
from soloqueue_mem.memory.store import _COLUMNS, DERIVED, Filters, filter_sql, stored_values
from soloqueue_mem.memory.store import _memory as memory_from_row
from soloqueue_mem.storage.postgres.newest import newest_ranked
from soloqueue_mem.storage.postgres.text import document, insert_indexed, term_query
from soloqueue_mem.text.fts import RECENT_WINDOW as WINDOW

if TYPE_CHECKING:
    import psycopg


def _search_text(memory: Memory) -> str:
    """What the lexical index holds: content, subject, predicate and tags."""
    return document(" ".join([memory.content, memory.subject, memory.predicate, *memory.tags]))


class TsVector:
    """:class:`soloqueue_mem.memory.store.FullText` on PostgreSQL: the ``search`` column."""

    order = "seq"

    def insert(self, db: Db, memory: Memory) -> None:
        values = stored_values(memory)
        insert_indexed(db, "memories", f"{_COLUMNS}, {DERIVED}", values, _search_text(memory))

    def changed(self, db: Db, old: Memory, new: Memory) -> None:
        if _search_text(new) != _search_text(old):
            db.execute(
                "UPDATE memories SET search = to_tsvector('simple', ?) WHERE id = ?",
                (_search_text(new), new.id),
            )

    def search(
        self, db: Db, words: list[str], filters: Filters, now: datetime, limit: int
    ) -> list[tuple[Memory, float]]:
        return search(db.conn, words, filters, now, limit)

    def dropped(self, db: Db, memory: Memory) -> None:
        """Nothing: the entry is the row's own ``search`` column."""


TSVECTOR = TsVector()


def search(
    conn: psycopg.Connection, terms: list[str], filters: Filters, now: datetime, limit: int
) -> list[tuple[Memory, float]]:
    """Active memories matching any of ``terms``, best ``ts_rank`` first, among each
    term's ``WINDOW`` newest matches (as :func:`soloqueue_mem.storage.postgres.turns.trace`)."""
    phrases = [q for q in (term_query(t) for t in terms) if q]
    if not phrases:
        return []
    where, params = filter_sql(Db(conn), filters, now)
    where = postgres_sql(where, named=True)
    ranked = newest_ranked(conn, "memories", "seq", phrases, where, params, WINDOW, ", updated_at")
    best = sorted(ranked, key=lambda seq: ranked[seq], reverse=True)[:limit]
    rows = conn.execute(
        f"SELECT seq, {_COLUMNS} FROM memories WHERE seq = ANY(%s)",  # noqa: S608 - constants
        (best,),
    ).fetchall()
    by_seq = {row[0]: memory_from_row(row[1:]) for row in rows}
    return [(by_seq[seq], float(ranked[seq][0])) for seq in best if seq in by_seq]


def held_words(conn: psycopg.Connection, words: list[str]) -> set[str]:
    """The ``words`` that some memory, turn, episode or attachment holds, each asked
    of the GIN indexes recall searches (an existence test: the index's first match)."""
    held = set()
    for word in words:
        query = term_query(word)
        if query is not None and any(
            conn.execute(
                f"SELECT 1 FROM {table}"  # noqa: S608 - constants
                " WHERE search @@ to_tsquery('simple', %s) LIMIT 1",
                (query,),
            ).fetchone()
            for table in ("memories", "quarantine_logs", "episodes", "attachments")
        ):
            held.add(word)
    return held
