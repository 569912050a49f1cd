"""One ``graph remember`` task, end to end (seed 002 §4.1 steps 1-5).

Every model call (segmentation, content, relation names) happens before the write
transaction; the transaction then removes the task from the queue and writes the
nodes, their links and the new focus together, so the task is applied whole or not
at all. Only the worker holding the graph lock runs this, so the focus read before
the transaction is still the focus inside it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from soloqueue_mem.faults import fault
from soloqueue_mem.graph.params import AFTER, BEFORE, FOCUS_STRENGTH, Params
from soloqueue_mem.graph.queue import Task
from soloqueue_mem.graph.steps import Steps

if TYPE_CHECKING:
    from soloqueue_mem.graph.db import GraphDb


def apply_task(
    db: GraphDb, task: Task, steps: Steps, params: Params, created_at: str
) -> list[int] | None:
    """Create the task's nodes and links and update the focus; their ids (None when the
    task had left the queue). Raises SegmentationFailed, creating nothing."""
    pieces = steps.segment(task.messages)
    processed = [steps.process(piece) for piece in pieces]
    focus_ids = db.focus(task.scope)
    focus_nodes = db.get_nodes(focus_ids)
    current = [focus_nodes[i] for i in focus_ids if i in focus_nodes]
    relations = [[steps.relation(p, f) for f in current] for p in processed]
    with db.transaction():
        if not db.take(task.id):
            return None
        ids = [
            db.create_node(task.scope, p.content, p.phrase, p.keywords, created_at)
            for p in processed
        ]
        fault("graph.mid_task")
        strength = params.link_initial_strength
        for earlier, later in zip(ids, ids[1:], strict=False):
            db.create_link(earlier, later, strength, AFTER)
            db.create_link(later, earlier, strength, BEFORE)
        for node_id, names in zip(ids, relations, strict=True):
            for focus_node, name in zip(current, names, strict=True):
                db.create_link(node_id, focus_node.id, FOCUS_STRENGTH, name)
                db.create_link(focus_node.id, node_id, FOCUS_STRENGTH, name)
        db.push_focus(task.scope, ids[-params.max_focus_count :], params.max_focus_count)
    return ids
