"""``episodes`` on PostgreSQL: its full-text index (the ``search`` column) for the
episode SQL written once in :mod:`soloqueue_mem.memory.episodes`, the search that uses
it, and what bulk copy reads here.

A session is digested (:class:`soloqueue_mem.lifecycle.digest.DbTarget`) in one
transaction holding a transaction-scoped advisory lock on the session: a second host
digesting the same session at once waits on the lock, then finds the stretch done and
skips it: no duplicate episode, no memory confirmed twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from soloqueue_mem.db.adapter import Db
from soloqueue_mem.memory.episodes import COLUMNS, Episode, EpisodeFilters, where
from soloqueue_mem.memory.episodes import _episode as episode_from_row
from soloqueue_mem.memory.fulltexts import FullTexts
from soloqueue_mem.storage.postgres import attachments
from soloqueue_mem.storage.postgres.memories import TSVECTOR
from soloqueue_mem.storage.postgres.text import UNLESS_TAKEN, any_query, document, insert_indexed

if TYPE_CHECKING:
    import psycopg


def search_text(episode: Episode) -> str:
    """What the lexical index holds: summary, goal, entities, tags and tools."""
    return document(
        " ".join(
            [episode.summary, episode.goal, *episode.entities, *episode.tags, *episode.tools_used]
        )
    )


class TsVector:
    """:class:`soloqueue_mem.memory.episodes.FullText` on PostgreSQL: the ``search``
    column."""

    order = "seq"

    def insert(self, db: Db, values: list[Any], episode: Episode) -> None:
        insert_indexed(db, "episodes", COLUMNS, values, search_text(episode))

    def search(
        self, db: Db, terms: list[str], filters: EpisodeFilters, limit: int
    ) -> list[tuple[Episode, float]]:
        """Best ``ts_rank`` first."""
        match = any_query(terms)
        if match is None:
            return []
        condition, params = where(filters)
        rows = db.fetchall(
            f"SELECT {COLUMNS}, ts_rank(search, q) AS score"  # noqa: S608 - fixed fragments
            f" FROM episodes, to_tsquery('simple', :match) AS q WHERE search @@ q"
            f" AND {condition} ORDER BY score DESC, ended_at DESC LIMIT :limit",
            {**params, "match": match, "limit": limit},
        )
        return [(episode_from_row(row[:-1]), float(row[-1])) for row in rows]


# The full-text indexes of this back end, for the SQL written once.
INDEXES = FullTexts(TSVECTOR, TsVector(), attachments.TSVECTOR)


def copy_in(conn: psycopg.Connection, row: tuple[Any, ...]) -> bool:
    """Insert memory.db's episode ``row`` (its columns as stored) unless the id is
    taken; whether it was inserted (``migrate --to``)."""
    indexed = search_text(episode_from_row(row))
    return bool(insert_indexed(Db(conn), "episodes", COLUMNS, row, indexed, UNLESS_TAKEN).rowcount)


def read_back(conn: psycopg.Connection, ids: list[str]) -> dict[str, tuple[Any, ...]]:
    """The episodes among ``ids``, their columns as memory.db stores them, by id."""
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM episodes WHERE id = ANY(%s)",  # noqa: S608 - constants
        (ids,),
    ).fetchall()
    return {row[0]: tuple(row) for row in rows}
