"""The ``graph`` recall channel: seed 002's graph recall as candidates for the fused
recall. The query's terms (from the text module) are the keywords; every graph in the
request's scope is searched from its focus, at the configured depth. ``relevance`` is
the path strength times the share of the terms the node matched. A store without
graph.db costs one ``stat``; recall never changes a graph's focus. On PostgreSQL the
graph is the back end's (``context.source``), searched the same way.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from soloqueue_mem.graph.params import params
from soloqueue_mem.graph.recall import recall

if TYPE_CHECKING:
    from soloqueue_mem.graph.db import GraphDb
    from soloqueue_mem.memory.recall import Candidate, Context

NODE_IMPORTANCE = 0.5  # a graph node has no importance of its own in recall's scale


def graph_channel(context: Context) -> list[Candidate]:
    from soloqueue_mem.memory.recall import Candidate

    if not context.terms:
        return []
    db = _graph_db(context)
    if db is None:
        return []
    p = params(context.config)
    request = context.request
    found = []
    try:
        for scope in db.scopes():
            if request.group not in (None, scope.group) or request.agent not in (None, scope.agent):
                continue
            result = recall(
                db,
                scope,
                context.terms,
                None,
                p.default_search_depth,
                context.pool,
                p.link_break_threshold,
            )
            found += result.found
    finally:
        if context.source is None:
            db.close()
    return sorted(
        (
            Candidate(
                key=f"graph:{f.node.id}",
                channel="graph",
                content=f.node.content,
                relevance=round(f.strength * len(f.matched) / len(context.terms), 6),
                timestamp=f.node.created_at,
                importance=NODE_IMPORTANCE,
                access_count=0,
                graph_node=f.node,
            )
            for f in found
        ),
        key=lambda c: -c.relevance,
    )[: context.pool]


def _graph_db(context: Context) -> GraphDb | None:
    """The back end's graph (its connection, left open), or graph.db when it exists."""
    if context.source is not None:
        return context.source.graph_db()
    from soloqueue_mem.graph.db import SqliteGraph
    from soloqueue_mem.storage.sqlite.stores import open_graph

    if not os.path.exists(context.home.graph_db):
        return None
    conn = open_graph(context.home, context.config, create=False)
    return None if conn is None else SqliteGraph(conn)
