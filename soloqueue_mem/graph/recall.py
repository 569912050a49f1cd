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
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from soloqueue_mem.errors import UsageError
from soloqueue_mem.graph.params import Params
from soloqueue_mem.graph.store import Link, Node, Scope
from soloqueue_mem.text.strings import text as fixed_text

if TYPE_CHECKING:
    from soloqueue_mem.graph.db import GraphDb

SEPARATOR = "\n---\n"


class Found(NamedTuple):
    node: Node
    matched: list[str]
    path: list[int]  # node ids from the focus node to this one
    relations: list[str | None]  # relation of each link on the path
    strength: float


class Recalled(NamedTuple):
    found: list[Found]
    dangling: list[Link]  # links from returned nodes to deleted ones


def checked_request(
    keywords: Iterable[str], depth: int | None, limit: int | None, params: Params
) -> tuple[list[str], int, int]:
    """The keywords (each value split on commas), depth and limit (the config's when
    None) of a recall; UsageError for no keyword or a negative number."""
    words = [w.strip() for value in keywords for w in value.split(",") if w.strip()]
    depth = params.default_search_depth if depth is None else depth
    limit = params.max_search_results if limit is None else limit
    if not words:
        raise UsageError("give at least one keyword (--keywords)")
    if depth < 0 or limit < 0:
        raise UsageError("depth and limit (--depth, --limit) must not be negative")
    return words, depth, limit


def recall(
    db: GraphDb,
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
    focus_ids = db.focus(scope)
    texts = db.texts_of(focus_ids)  # what matching reads, of the nodes seen
    links: dict[int, list[Link]] = {}  # out-links of the nodes loaded so far
    # (-strength, focus rank, hops, node id, path, relations)
    heap: list[tuple[float, int, int, int, list[int], list[str | None]]] = [
        (-1.0, rank, 0, node_id, [node_id], []) for rank, node_id in enumerate(focus_ids)
    ]
    heapq.heapify(heap)
    taken: set[int] = set()
    hits: list[tuple[int, list[str], list[int], list[str | None], float]] = []
    while heap and (not limit or len(hits) < limit):
        negative, rank, hops, node_id, path, names = heapq.heappop(heap)
        if node_id in taken or node_id not in texts:
            continue
        taken.add(node_id)
        matched = _matched(*texts[node_id], wanted)
        if matched and (allowed is None or hops > 0):
            hits.append((node_id, matched, path, names, round(-negative, 6)))
        if hops >= depth:
            continue
        if node_id not in links:
            _load(db, [node_id, *_waiting(heap, depth, links, taken)], links, texts, floor)
        for link in links[node_id]:
            if (
                link.to_id not in taken
                and link.to_id in texts  # a deleted target is skipped (reported below)
                and (allowed is None or link.relation in allowed)
            ):
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
    nodes = db.get_nodes([hit[0] for hit in hits])  # a node deleted meanwhile: absent
    found = [
        Found(nodes[node_id], matched, path, relations, strength)
        for node_id, matched, path, relations, strength in hits
        if node_id in nodes
    ]
    dangling = db.dangling_from([f.node.id for f in found], floor)
    return Recalled(found, dangling)


def _waiting(
    heap: list[tuple[float, int, int, int, list[int], list[str | None]]],
    depth: int,
    links: dict[int, list[Link]],
    taken: set[int],
) -> set[int]:
    """The queued nodes that may still be expanded and whose links are not loaded: the
    rest of the hop being searched, loaded with the node that needs its links now."""
    return {
        entry[3]
        for entry in heap
        if entry[2] < depth and entry[3] not in links and entry[3] not in taken
    }


def _load(
    db: GraphDb,
    sources: list[int],
    links: dict[int, list[Link]],
    texts: dict[int, tuple[str, str]],
    floor: float,
) -> None:
    """Load the out-links of ``sources`` and the texts of the nodes they point at, one
    query each (a hop's frontier at once, not a query per node)."""
    loaded = db.out_links_of(dict.fromkeys(sources), floor)
    links.update(loaded)
    targets = {link.to_id for out in loaded.values() for link in out} - texts.keys()
    texts.update(db.texts_of(targets))


def _matched(content: str, keywords_json: str, wanted: list[str]) -> list[str]:
    """The wanted words in the content or equal to a keyword (case-insensitively). The
    keywords are parsed only when the content lacks a word that their JSON text may
    hold: plain ASCII keywords (no escapes) that do not contain a word cannot equal it."""
    lowered = content.lower()
    missing = [word for word in wanted if word not in lowered]
    if not missing:
        return list(wanted)
    raw = keywords_json.lower()
    plain = keywords_json.isascii() and "\\" not in keywords_json
    if plain and not any(word in raw for word in missing):
        return [word for word in wanted if word in lowered]
    own = {k.lower() for k in json.loads(keywords_json)}
    return [word for word in wanted if word in lowered or word in own]


def as_text(result: Recalled, language: str) -> str:
    """``[记忆] …`` (``[memory] …`` in English) blocks separated by ``---``, no ids;
    then one perception line per forgotten thing, in the ``language`` setting's
    language."""
    prefix = fixed_text(language, "memory_prefix")
    blocks = [prefix + f.node.content for f in result.found]
    blocks += [prefix + forgotten_line(link, language) for link in result.dangling]
    return SEPARATOR.join(blocks) + ("\n" if blocks else "")


def forgotten_line(link: Link, language: str) -> str:
    if link.relation:
        return fixed_text(language, "graph_forgotten_relation").format(relation=link.relation)
    return fixed_text(language, "graph_forgotten")


def as_json(result: Recalled, language: str) -> dict[str, Any]:
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
                "text": forgotten_line(link, language),
            }
            for link in result.dangling
        ],
        "text": as_text(result, language),
    }
