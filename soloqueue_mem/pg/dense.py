"""The dense channel on PostgreSQL: ``memories.embedding`` (pgvector) and its HNSW index.

With the ``semantic`` extra and ``search_backend`` = ``hybrid`` or ``dense``,
``remember`` writes the memory's passage embedding (multilingual-e5-small, 384
dimensions, L2-normalised) into ``memories.embedding``, and recall's ``dense`` channel
asks the HNSW index (``vector_cosine_ops``) for the nearest active memories in scope;
:mod:`soloqueue_mem.semantic.channel` fuses them as it fuses SQLite's. Only memories
are embedded here (seed 004 puts the vector on ``memories``); turns and episodes are
found lexically. Without the extra, or without pgvector on the server, the channel is
off and recall says why once (:func:`off_reason`).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from soloqueue_mem.clock import iso
from soloqueue_mem.memory.backend import DENSE_BACKENDS
from soloqueue_mem.memory.store import Filters
from soloqueue_mem.memory.store import _memory as memory_from_row
from soloqueue_mem.pg.memories import _COLUMNS, _filter_sql

if TYPE_CHECKING:
    import numpy as np
    import psycopg

    from soloqueue_mem.semantic.dense import DenseHit, Scope
    from soloqueue_mem.semantic.model import Embedder

# The HNSW search keeps this many candidates (pgvector's default is 40): the channel
# asks for up to LANGUAGE_POOL (200) neighbours, and a scan returns at most ef_search.
EF_SEARCH = 200


def has_embedding_column(conn: psycopg.Connection) -> bool:
    row = conn.execute(
        "SELECT 1 FROM pg_attribute WHERE attrelid = 'memories'::regclass"
        " AND attname = 'embedding' AND NOT attisdropped"
    ).fetchone()
    return row is not None


def off_reason(conn: psycopg.Connection, search_backend: str) -> str | None:
    """Why the dense channel cannot run here (None: it can, or it was not asked for)."""
    if search_backend not in DENSE_BACKENDS:
        return None
    from soloqueue_mem.semantic.model import unavailable

    reason = unavailable()
    if reason is None and not has_embedding_column(conn):
        reason = "the server has no pgvector (CREATE EXTENSION vector failed)"
    if reason is None:
        return None
    return f"search backend {search_backend!r}: the dense channel is off ({reason}); lexical only"


def vector_text(vector: np.ndarray) -> str:
    """pgvector's text form, ``[0.1,0.2,…]`` (no adapter to register per connection)."""
    return "[" + ",".join(f"{x:.7g}" for x in vector.tolist()) + "]"


def embed_memory(conn: psycopg.Connection, embedder: Embedder, memory_id: str) -> None:
    """Write the memory's embedding if it has none (a confirmed memory keeps its own)."""
    row = conn.execute(
        "SELECT content FROM memories WHERE id = %s AND embedding IS NULL", (memory_id,)
    ).fetchone()
    if row is None:
        return
    (vector,) = embedder.passages([row[0]])
    conn.execute(
        "UPDATE memories SET embedding = %s::vector WHERE id = %s",
        (vector_text(vector), memory_id),
    )


def nearest(
    conn: psycopg.Connection,
    embedder: Embedder,
    query: str,
    scope: Scope,
    now: datetime,
    limit: int,
) -> list[DenseHit]:
    """The ``limit`` active memories in ``scope`` nearest to ``query``, best first
    (score: the cosine). pgvector ≥ 0.8 continues the index scan until ``limit``
    rows pass the filters (``hnsw.iterative_scan``); older ones may return fewer."""
    from soloqueue_mem.semantic.dense import DenseHit

    filters = Filters(
        group=scope.group,
        agent=scope.agent,
        type=scope.type,
        since=iso(scope.since) if scope.since is not None else None,
    )
    where, params = _filter_sql(filters, now)
    with conn.transaction():
        conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(EF_SEARCH),))
        conn.execute("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true)")
        rows = conn.execute(
            f"SELECT {_COLUMNS}, 1 - (embedding <=> %(q)s::vector) FROM memories"  # noqa: S608
            f" WHERE embedding IS NOT NULL AND {where}"
            " ORDER BY embedding <=> %(q)s::vector LIMIT %(limit)s",
            {**params, "q": vector_text(embedder.query(query)), "limit": limit},
        ).fetchall()
    hits = [DenseHit("memory", row[0], float(row[-1]), memory_from_row(row[:-1])) for row in rows]
    hits.sort(key=lambda hit: -hit.score)  # relaxed order: the scan's order is near-sorted
    return hits
