"""The ``graph`` recall channel: seed 002's graph recall as candidates for the fused
recall. The query's terms (from the text module) are the keywords; every graph in the
request's scope is searched from its focus, at the configured depth. ``relevance`` is
the path strength times the share of the terms the node matched. The graph is the back
end's (``context.source.existing_graph()``: on SQLite graph.db, when it exists); recall
never changes a graph's focus.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from soloqueue_mem.graph.params import params
from soloqueue_mem.graph.recall import recall
from soloqueue_mem.memory.channels import Candidate

if TYPE_CHECKING:
    from soloqueue_mem.graph.db import GraphDb
    from soloqueue_mem.memory.channels import Context

NODE_IMPORTANCE = 0.5  # a graph node has no importance of its own in recall's scale


def graph_channel(context: Context, db: GraphDb) -> list[Candidate]:
    """The nodes of ``db`` (the back end's graph) that hold the query's terms."""
    if not context.terms:
        return []
    p = params(context.config)
    request = context.request
    found = []
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
