"""Embedding on PostgreSQL: the pass of :mod:`soloqueue_mem.semantic.embed` and
:mod:`soloqueue_mem.semantic.index` (written once for both back ends) over the
database's items.

As in memory.db, ``embedding_cache`` keeps each vector once per (model, content hash)
as stored bytes (little-endian float32) and ``embedded_items`` which item has which
content hash under which model; here each item also gets a copy of its vector in its
own ``embedding`` column (pgvector, :func:`to_columns`), which the HNSW indexes search
(storage/postgres/dense.py). ``consolidate`` embeds memories and episodes, ``index
--embed`` those and, with ``--turns``, the turns; ``remember`` in a process holding the
model, and ``promote``, embed their memories at once.
"""

from __future__ import annotations

import struct
from datetime import datetime
from typing import TYPE_CHECKING, Any

from soloqueue_mem.semantic.dump import Linked, put_back_linked
from soloqueue_mem.semantic.embed import deadline_after, embed_store, memory_items, turn_items
from soloqueue_mem.semantic.index import Copy, Item, Progress, cached_vectors, content_hash
from soloqueue_mem.storage.postgres.episodes import INDEXES

if TYPE_CHECKING:
    import psycopg

    from soloqueue_mem.semantic.model import Embedder

TABLES = {"memory": "memories", "episode": "episodes", "turn": "quarantine_logs"}
_ID_TYPES = {"memory": "text", "episode": "text", "turn": "bigint"}


def floats(data: bytes) -> list[float]:
    """A stored vector's values (no numpy needed)."""
    return list(struct.unpack(f"<{len(data) // 4}f", data))


def to_columns(conn: psycopg.Connection) -> Copy:
    """The embedding pass's ``copy``: each linked item's vector into its own column."""

    def copy(items: list[Item], vectors: dict[str, bytes]) -> None:
        with conn.cursor() as cur:
            for kind in TABLES:
                rows = [
                    (floats(vectors[content_hash(i.text)]), i.id) for i in items if i.kind == kind
                ]
                if rows:
                    cur.executemany(_set_embedding(kind), rows)

    return copy


def embed_all(
    conn: psycopg.Connection,
    embedder: Embedder,
    now: datetime,
    with_turns: bool = False,
    time_budget: float | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """:func:`soloqueue_mem.semantic.embed.embed_store` over the database's memories and
    episodes (and turns) within ``time_budget`` seconds, each vector copied into its
    item's column."""
    deadline = deadline_after(time_budget)
    turns = turn_items(conn) if with_turns else None
    memories = memory_items(conn, now, INDEXES)
    return embed_store(conn, embedder, now, memories, turns, deadline, progress, to_columns(conn))


# -- import (a link's vector copied into its item's column) -------------------------


def put_back_link(conn: psycopg.Connection, row: Linked) -> str:
    """An exported item's link as :func:`soloqueue_mem.semantic.dump.put_back_linked`
    puts it back, ``missing-item`` when the database lacks the item; an added link
    copies the vector into the item's column (when the server has pgvector)."""
    table = TABLES.get(row.kind)
    if (
        table is None
        or not conn.execute(
            f"SELECT 1 FROM {table} WHERE id = %s::{_ID_TYPES[row.kind]}",  # noqa: S608 - constants
            (row.item_id,),
        ).fetchone()
    ):
        return "missing-item"
    outcome = put_back_linked(conn, row)
    from soloqueue_mem.semantic.model import MODEL_NAME
    from soloqueue_mem.storage.postgres.dense import has_embedding_column

    if outcome == "added" and row.model == MODEL_NAME and has_embedding_column(conn):
        vector = cached_vectors(conn, row.model, [row.content_hash])  # the model recall asks
        conn.execute(_set_embedding(row.kind), (floats(vector[row.content_hash]), row.item_id))
    return outcome


def _set_embedding(kind: str) -> str:
    """The statement writing a vector (then the id) into a ``kind`` item's column."""
    table, id_type = TABLES[kind], _ID_TYPES[kind]
    return f"UPDATE {table} SET embedding = %s::real[]::vector WHERE id = %s::{id_type}"  # noqa: S608
