"""New memories embedded at once, not only by the next ``consolidate``: ``promote``
(a deliberate act: it loads e5, the model ``query`` searches by) and ``remember`` in a
process that already holds a model (a warm API, HTTP or MCP server; a CLI
``remember`` holds none, so it stays light). Only the models held, or just loaded,
embed; ``consolidate`` gives the others their vectors."""

from __future__ import annotations

from typing import TYPE_CHECKING

from soloqueue_mem.semantic.model import MODELS, Embedder, Unavailable, held, load

if TYPE_CHECKING:
    import sqlite3
    from datetime import datetime


def embed_new(
    conn: sqlite3.Connection,
    memory_ids: list[str],
    now: datetime,
    search_backend: str,
    *,
    load_e5: bool,
) -> list[str]:
    """Give ``memory_ids`` vectors by every model this process holds (and e5, loaded
    first when ``load_e5``) when ``search_backend`` is hybrid or dense; the names of the
    models that did. Without the extra: nothing, quietly (recall warns already)."""
    from soloqueue_mem.memory.backend import DENSE_BACKENDS

    if not memory_ids or search_backend not in DENSE_BACKENDS:
        return []
    if load_e5:
        try:
            load("e5")
        except Unavailable:
            pass
    embedders: list[Embedder] = [m for m in (held(key) for key in MODELS) if m is not None]
    if not embedders:
        return []
    from soloqueue_mem.semantic.embed import embed_memories

    embed_memories(conn, memory_ids, now, embedders)
    return [embedder.name for embedder in embedders]
