"""One ``graph remember`` task, end to end (seed 002 §4.1 steps 1-5).

Every model call (segmentation, content, relation names) happens before the write
transaction; the transaction then removes the task from the queue and writes the
nodes, their links and the new focus together, so the task is applied whole or not
at all. Only the worker holding the graph lock runs this, so the focus read before
the transaction is still the focus inside it.
"""

from __future__ import annotations

import sqlite3

from soloqueue_mem.db.connect import write_tx
from soloqueue_mem.faults import fault
from soloqueue_mem.graph import queue, store
from soloqueue_mem.graph.params import AFTER, BEFORE, FOCUS_STRENGTH, Params
from soloqueue_mem.graph.queue import Task
from soloqueue_mem.graph.steps import Steps


def apply_task(
    conn: sqlite3.Connection, task: Task, steps: Steps, params: Params, created_at: str
) -> list[int] | None:
    """Create the task's nodes and links and update the focus; their ids (None when the
    task had left the queue). Raises SegmentationFailed, creating nothing."""
    pieces = steps.segment(task.messages)
    processed = [steps.process(piece) for piece in pieces]
    focus_ids = store.focus(conn, task.scope)
    focus_nodes = store.get_nodes(conn, focus_ids)
    current = [focus_nodes[i] for i in focus_ids if i in focus_nodes]
    relations = [[steps.relation(p, f) for f in current] for p in processed]
    with write_tx(conn):
        if not queue.take(conn, task.id):
            return None
        ids = [
            store.create_node(conn, task.scope, p.content, p.phrase, p.keywords, created_at)
            for p in processed
        ]
        fault("graph.mid_task")
        strength = params.link_initial_strength
        for earlier, later in zip(ids, ids[1:], strict=False):
            store.create_link(conn, earlier, later, strength, AFTER)
            store.create_link(conn, later, earlier, strength, BEFORE)
        for node_id, names in zip(ids, relations, strict=True):
            for focus_node, name in zip(current, names, strict=True):
                store.create_link(conn, node_id, focus_node.id, FOCUS_STRENGTH, name)
                store.create_link(conn, focus_node.id, node_id, FOCUS_STRENGTH, name)
        store.push_focus(conn, task.scope, ids[-params.max_focus_count :], params.max_focus_count)
    return ids
