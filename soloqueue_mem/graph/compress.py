"""Compression, scheme B (seed 002 §3.6, §4.3): one time slice over a graph's nodes in
scan-count order (fewest scans first, then oldest).

For each node: a focus node is skipped; importance is the sum of the strengths of the
links pointing at it (those below ``link_break_threshold`` aside); importance 0 →
delete; target length = length × min(importance, 1); below ``delete_threshold`` →
delete; at least the length → the content stays; otherwise the content, phrase and
keywords are compressed to the target. Then the node's links (in and out) decay by
``decay_rate`` — except links *from* a focus node, which never decay — links falling
below ``link_break_threshold`` are deleted, and the scan count is raised (so the next
slice starts with the nodes this one missed).

Why links decay on a node whose content stays: every node created while there was a
focus gets links of 1.0 from and to the focus nodes, so its importance is at least 1.
If only compressed nodes decayed, such nodes (and the old focus nodes pointing at them)
would never be compressed and nothing would ever be forgotten; the seed wants an old
focus node's out-links to "decay normally from the next compression" (§3.4), which
only this reading gives. Deleting a node deletes its out-links; links into it stay,
dangling.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from contextlib import nullcontext
from typing import TYPE_CHECKING

from soloqueue_mem.graph.params import Params
from soloqueue_mem.graph.steps import Steps
from soloqueue_mem.graph.store import Scope

if TYPE_CHECKING:
    from soloqueue_mem.graph.db import GraphDb

OUTCOMES = ("compressed", "deleted", "kept", "focus")
WRITE_SECONDS = 0.05  # the longest an offline slice holds the write lock at a time


def target_length(length: int, importance: float) -> int:
    """Seed §3.6 step 4: the length a node of this importance keeps."""
    return int(length * min(importance, 1.0))


def compress_slice(
    db: GraphDb,
    scope: Scope,
    steps: Steps,
    params: Params,
    budget: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, int | bool]:
    """Visit the graph's nodes in scan order until done or ``budget`` seconds (default
    ``time_slice``) have passed; counts per outcome and whether it stopped early.

    Offline, the nodes of up to ``WRITE_SECONDS`` share one write transaction (a commit
    per node made a slice over a growing graph the worker's main cost); with a model,
    each node is its own transaction, since no model is called inside one."""
    deadline = clock() + (params.time_slice if budget is None else budget)
    focus = set(db.focus(scope))
    order = db.scan_order(scope)
    counts: Counter[str] = Counter()
    visited = 0
    while visited < len(order) and clock() < deadline:
        with db.transaction() if steps.llm is None else nullcontext():
            until = min(deadline, clock() + WRITE_SECONDS)
            while visited < len(order) and clock() < until:
                counts[compress_node(db, order[visited], focus, steps, params)] += 1
                visited += 1
    stopped = visited < len(order)
    return {**{k: counts[k] for k in OUTCOMES}, "visited": visited, "stopped": stopped}


def compress_node(db: GraphDb, node_id: int, focus: set[int], steps: Steps, params: Params) -> str:
    """One node through §3.6's steps; the outcome (one of ``OUTCOMES``)."""
    if node_id in focus:
        return "focus"
    node = db.get_node(node_id)
    if node is None:
        return "deleted"
    weight = db.importance(node_id, params.link_break_threshold)
    target = target_length(len(node.content), weight)
    if weight == 0 or target < params.delete_threshold:
        with db.transaction():
            db.delete_node(node_id)
        return "deleted"
    shorter = None
    if target < len(node.content):
        shorter = steps.process(node.content, target)  # the model is called outside the write
    with db.transaction():
        if shorter is not None:
            db.update_content(node_id, shorter.content, shorter.phrase, shorter.keywords)
        db.decay_links(node_id, params.decay_rate, params.link_break_threshold, focus)
        db.increment_scan_count(node_id)
    return "kept" if shorter is None else "compressed"
