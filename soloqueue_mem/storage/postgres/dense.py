"""The dense channel on PostgreSQL: the ``embedding`` columns (pgvector) of memories,
episodes and turns, and their HNSW indexes.

With the ``semantic`` extra and ``search_backend`` = ``hybrid`` or ``dense``,
``remember`` in a process that holds the model (``serve``, ``mcp``, the ``Store`` API)
and ``promote`` write the memory's passage embedding (multilingual-e5-small, 384
dimensions, L2-normalised), ``consolidate`` embeds memories and episodes, ``index
--embed --turns`` turns too (:mod:`soloqueue_mem.storage.postgres.embed`), as on SQLite; recall's
``dense`` channel asks the HNSW indexes (``vector_cosine_ops``) for the nearest active
memories, episodes and turns in scope, and :mod:`soloqueue_mem.semantic.channel` fuses
them as it fuses SQLite's. Without the extra, or without pgvector on the server, the
channel is off and recall says why once (:func:`off_reason`).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from soloqueue_mem.clock import iso
from soloqueue_mem.db.adapter import Db, postgres_sql
from soloqueue_mem.memory.backend import BACKENDS, DENSE_BACKENDS
from soloqueue_mem.memory.store import _COLUMNS, Filters, filter_sql
from soloqueue_mem.memory.store import _memory as memory_from_row

if TYPE_CHECKING:
    import numpy as np
    import psycopg

    from soloqueue_mem.semantic.dense import DenseHit, DenseQuery, Scope
    from soloqueue_mem.semantic.model import Embedder

# The HNSW search keeps this many candidates (pgvector's default is 40): the channel
# asks for up to LANGUAGE_POOL (200) neighbours, and a scan returns at most ef_search.
EF_SEARCH = 200
NO_PGVECTOR = "the server has no pgvector (CREATE EXTENSION vector failed)"


def has_embedding_column(conn: psycopg.Connection) -> bool:
    row = conn.execute(
        "SELECT 1 FROM pg_attribute WHERE attrelid = 'memories'::regclass"
        " AND attname = 'embedding' AND NOT attisdropped"
    ).fetchone()
    return row is not None


def off_reason(conn: psycopg.Connection, search_backend: str) -> str | None:
    """Why the dense channel cannot run here (None: it can, or it was not asked for)."""
    if search_backend not in BACKENDS:  # as on SQLite, a name it does not know is said
        return f"search backend {search_backend!r} is not available; lexical only"
    if search_backend not in DENSE_BACKENDS:
        return None
    from soloqueue_mem.semantic.model import unavailable

    reason = unavailable()
    if reason is None and not has_embedding_column(conn):
        reason = NO_PGVECTOR
    if reason is None:
        return None
    return f"search backend {search_backend!r}: the dense channel is off ({reason}); lexical only"


def vector_text(vector: np.ndarray) -> str:
    """pgvector's text form, ``[0.1,0.2,…]`` (no adapter to register per connection)."""
    return "[" + ",".join(f"{x:.7g}" for x in vector.tolist()) + "]"


def embed_memories(
    conn: psycopg.Connection, embedder: Embedder, memory_ids: list[str], now: datetime
) -> None:
    """Give the memories the vectors of their current texts: embedded (or taken from the
    cache) when new or edited, nothing to do where a vector is current."""
    from soloqueue_mem.semantic.index import Item, embed_items
    from soloqueue_mem.storage.postgres.embed import to_columns

    rows = conn.execute(
        "SELECT id, group_id, agent_id, content FROM memories WHERE id = ANY(%s)", (memory_ids,)
    ).fetchall()
    embed_items(conn, embedder, [Item("memory", *row) for row in rows], now, copy=to_columns(conn))


def nearest(conn: psycopg.Connection, embedder: Embedder, asked: DenseQuery) -> list[DenseHit]:
    """The ``limit`` items of ``kinds`` in ``scope`` nearest to ``query``, best first
    (score: the cosine): active memories, episodes and embedded turns, each table asked
    through its HNSW index (only memories when the scope names a memory type).
    pgvector ≥ 0.8 continues an index scan until ``limit`` rows pass the filters
    (``hnsw.iterative_scan``); older ones may return fewer."""
    kinds = asked.searched_kinds()
    if not kinds:
        return []
    scope, now, limit = asked.scope, asked.now, asked.limit
    vector = vector_text(embedder.query(asked.text))
    since = iso(scope.since) if scope.since is not None else None
    with conn.transaction():
        conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(EF_SEARCH),))
        conn.execute("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true)")
        hits = _memories(conn, vector, scope, since, now, limit) if "memory" in kinds else []
        if "episode" in kinds:
            hits += _episodes(conn, vector, scope, since, limit)
        if "turn" in kinds:
            hits += _turns(conn, vector, scope, since, limit)
    hits.sort(key=lambda hit: -hit.score)  # relaxed order: each scan's order is near-sorted
    return hits[:limit]


def _nearest_rows(
    conn: psycopg.Connection,
    table: str,
    columns: str,
    where: str,
    params: dict[str, Any],
    vector: str,
    limit: int,
) -> list[tuple[Any, ...]]:
    """``table``'s rows passing ``where`` nearest to ``vector``, each with its cosine last."""
    return conn.execute(
        f"SELECT {columns}, 1 - (embedding <=> %(q)s::vector) FROM {table}"  # noqa: S608
        f" WHERE embedding IS NOT NULL AND {where}"
        " ORDER BY embedding <=> %(q)s::vector LIMIT %(limit)s",
        {**params, "q": vector, "limit": limit},
    ).fetchall()


def _memories(
    conn: psycopg.Connection,
    vector: str,
    scope: Scope,
    since: str | None,
    now: datetime,
    limit: int,
) -> list[DenseHit]:
    from soloqueue_mem.semantic.dense import DenseHit

    filters = Filters(group=scope.group, agent=scope.agent, type=scope.type, since=since)
    where, params = filter_sql(Db(conn), filters, now)
    where = postgres_sql(where, named=True)
    rows = _nearest_rows(conn, "memories", _COLUMNS, where, params, vector, limit)
    return [DenseHit("memory", row[0], float(row[-1]), memory_from_row(row[:-1])) for row in rows]


def _episodes(
    conn: psycopg.Connection, vector: str, scope: Scope, since: str | None, limit: int
) -> list[DenseHit]:
    from soloqueue_mem.memory import episodes
    from soloqueue_mem.memory.episodes import EpisodeFilters
    from soloqueue_mem.memory.episodes import _episode as episode_from_row
    from soloqueue_mem.semantic.dense import DenseHit

    where, params = episodes.where(EpisodeFilters(scope.group, scope.agent, None, since))
    where = postgres_sql(where, named=True)
    rows = _nearest_rows(conn, "episodes", episodes.COLUMNS, where, params, vector, limit)
    return [DenseHit("episode", row[0], float(row[-1]), episode_from_row(row[:-1])) for row in rows]


def _turns(
    conn: psycopg.Connection, vector: str, scope: Scope, since: str | None, limit: int
) -> list[DenseHit]:
    from soloqueue_mem.semantic.dense import DenseHit
    from soloqueue_mem.sessions import turns
    from soloqueue_mem.sessions.turns import _turn as turn_from_row
    from soloqueue_mem.storage.postgres.turns import _COLUMNS as TURN_COLUMNS

    within = turns.Scope(scope.group, scope.agent, since=since)
    where = postgres_sql(within.where(), named=True)  # the alias t its filters name
    rows = _nearest_rows(
        conn, "quarantine_logs AS t", TURN_COLUMNS, where, within.params(), vector, limit
    )
    found = [(turn_from_row(row[:-1]), float(row[-1])) for row in rows]
    return [DenseHit("turn", turns.turn_name(turn), score, turn) for turn, score in found]
