"""The ``dense`` recall channel: a thin adapter from :func:`dense.search` to the
recall engine's candidates. Active only when the chosen back end is ``hybrid`` or
``dense`` (which means the model loaded); otherwise it finds nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from soloqueue_mem.memory.backend import DENSE_BACKENDS
from soloqueue_mem.semantic.dense import DenseHit, Scope, search

if TYPE_CHECKING:
    from soloqueue_mem.memory.recall import Candidate, Context

TURN_IMPORTANCE = 0.5  # as recall's: a turn has no importance of its own


def dense_channel(context: Context) -> list[Candidate]:
    """The ``context.pool`` nearest items, in cosine order (the list order is the
    channel's rank); ``relevance`` is the raw cosine similarity."""
    if context.backend.name not in DENSE_BACKENDS:
        return []
    from soloqueue_mem.semantic.model import load

    request = context.request
    scope = Scope(request.group, request.agent, request.type, request.since)
    hits = search(context.conn, load(), request.query, scope, context.now, context.pool)
    return [_candidate(hit) for hit in hits]


def _candidate(hit: DenseHit) -> Candidate:
    from soloqueue_mem.memory.episodes import Episode
    from soloqueue_mem.memory.recall import Candidate
    from soloqueue_mem.memory.store import Memory

    item = hit.item
    if isinstance(item, Memory):
        own = (item.content, item.updated_at, item.importance, item.access_count)
        link = {"memory": item}
    elif isinstance(item, Episode):
        own = (item.summary, item.ended_at, item.importance, item.access_count)
        link = {"episode": item}
    else:
        own = (item.content, item.timestamp, TURN_IMPORTANCE, 0)
        link = {"turn": item}
    content, timestamp, importance, accesses = own
    return Candidate(
        key=f"{hit.kind}:{hit.id}",
        channel="dense",
        content=content,
        relevance=hit.score,
        timestamp=timestamp,
        importance=importance,
        access_count=accesses,
        **link,  # type: ignore[arg-type]
    )
