"""Graph recall (seed 002 §3.5, §4.2): best-first search from every focus node at once.

One global priority queue holds paths ordered by path strength (the product of the
link strengths along the path), strongest first; on equal strength the path from the
newer focus node comes first, then the shorter, then the smaller node id. A node is
taken once, by the first (strongest) path that reaches it; paths stop at ``depth``
hops; links below ``link_break_threshold`` are ignored. A taken node matches when a
keyword occurs, case-insensitively, in its content or equals one of its keywords.
With ``relations``, only paths whose every link has one of those relations count, so
focus nodes themselves (paths of no link) are not returned. Links to a deleted node
are skipped; those leaving a returned node are reported as forgotten things. Recall
only reads: the focus never changes. An empty focus gives an empty answer.
"""

from __future__ import annotations

import heapq
import sqlite3
from typing import NamedTuple

from soloqueue_mem.graph import store
from soloqueue_mem.graph.store import Link, Node, Scope

PREFIX = "[记忆] "
SEPARATOR = "\n---\n"
FORGOTTEN = "与某个已遗忘的事物有关联"


class Found(NamedTuple):
    node: Node
    matched: list[str]
    path: list[int]  # node ids from the focus node to this one
    relations: list[str | None]  # relation of each link on the path
    strength: float


class Recalled(NamedTuple):
    found: list[Found]
    dangling: list[Link]  # links from returned nodes to deleted ones


def recall(
    conn: sqlite3.Connection,
    scope: Scope,
    keywords: list[str],
    relations: list[str] | None,
    depth: int,
    limit: int,
    floor: float,
) -> Recalled:
    """The matching nodes, strongest path first (``limit`` 0: no limit)."""
    wanted = [k.lower() for k in keywords if k.strip()]
    allowed = set(relations) if relations else None
    focus_ids = store.focus(conn, scope)
    nodes = store.get_nodes(conn, focus_ids)
    # (-strength, focus rank, hops, node id, path, relations)
    heap: list[tuple[float, int, int, int, list[int], list[str | None]]] = [
        (-1.0, rank, 0, node_id, [node_id], []) for rank, node_id in enumerate(focus_ids)
    ]
    heapq.heapify(heap)
    taken: set[int] = set()
    found: list[Found] = []
    while heap and (not limit or len(found) < limit):
        negative, rank, hops, node_id, path, names = heapq.heappop(heap)
        if node_id in taken or node_id not in nodes:
            continue
        taken.add(node_id)
        node = nodes[node_id]
        matched = _matched(node, wanted)
        if matched and (allowed is None or hops > 0):
            found.append(Found(node, matched, path, names, round(-negative, 6)))
        if hops >= depth:
            continue
        links = [
            link
            for link in store.out_links(conn, node_id, floor)
            if link.to_id not in taken and (allowed is None or link.relation in allowed)
        ]
        nodes.update(
            store.get_nodes(conn, [link.to_id for link in links if link.to_id not in nodes])
        )
        for link in links:
            if link.to_id in nodes:  # a deleted target is skipped (reported below)
                heapq.heappush(
                    heap,
                    (
                        negative * link.strength,
                        rank,
                        hops + 1,
                        link.to_id,
                        [*path, link.to_id],
                        [*names, link.relation],
                    ),
                )
    dangling = [link for f in found for link in store.dangling_from(conn, f.node.id, floor)]
    return Recalled(found, dangling)


def _matched(node: Node, wanted: list[str]) -> list[str]:
    content = node.content.lower()
    own = {k.lower() for k in node.keywords}
    return [word for word in wanted if word in content or word in own]


def as_text(result: Recalled) -> str:
    """Seed §3.5's text: ``[记忆] …`` blocks separated by ``---``, no ids; then one
    perception line per forgotten thing."""
    blocks = [PREFIX + f.node.content for f in result.found]
    blocks += [PREFIX + forgotten_line(link) for link in result.dangling]
    return SEPARATOR.join(blocks) + ("\n" if blocks else "")


def forgotten_line(link: Link) -> str:
    if link.relation:
        return f"它有个{link.relation}，但我想不起来了"
    return FORGOTTEN


def as_json(result: Recalled) -> dict[str, object]:
    return {
        "results": [
            {
                "node_id": str(f.node.id),
                "content": f.node.content,
                "phrase": f.node.phrase,
                "keywords": f.node.keywords,
                "matched_keywords": f.matched,
                "path": [str(n) for n in f.path],
                "relations": f.relations,
                "path_strength": f.strength,
            }
            for f in result.found
        ],
        "forgotten": [
            {
                "from_id": str(link.from_id),
                "to_id": str(link.to_id),
                "strength": round(link.strength, 6),
                "relation": link.relation,
                "text": forgotten_line(link),
            }
            for link in result.dangling
        ],
        "text": as_text(result),
    }
