"""The graph worker: one per store, under ``.graph.lock``, processing the queue strictly
in order (seed 002 §1.4).

``graph remember`` enqueues and then starts a detached worker; a worker that finds the
lock held exits at once, because the holder sees the new task: after releasing the
lock it looks for tasks enqueued meanwhile and, if there are any, takes the lock again.
Each task is followed by one compression slice of its graph (§4.3). A task whose
segmentation failed goes to the tail; the worker stops when the task at the head is
one that already failed in this run, so a model that is down does not spin it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from soloqueue_mem import lock
from soloqueue_mem.errors import TempFail
from soloqueue_mem.graph import queue
from soloqueue_mem.graph.compress import compress_slice
from soloqueue_mem.graph.params import Params
from soloqueue_mem.graph.remember import apply_task
from soloqueue_mem.graph.steps import SegmentationFailed, Steps

LOCK_FILE = ".graph.lock"


def lock_path(root: Path) -> Path:
    return root / LOCK_FILE


def drain(
    conn: sqlite3.Connection, steps: Steps, params: Params, budget: float | None = None
) -> dict[str, int]:
    """Run queued tasks in order until the queue is empty (or only tasks that failed in
    this run are left); counts of what happened. ``budget`` overrides the slice time."""
    report = {"tasks": 0, "nodes": 0, "requeued": 0, "compressed": 0, "deleted": 0}
    failed: set[int] = set()
    while (task := queue.head(conn)) is not None and task.id not in failed:
        try:
            ids = apply_task(conn, task, steps, params, task.enqueued_at)
        except SegmentationFailed:
            failed.add(queue.requeue(conn, task))
            report["requeued"] += 1
            continue
        if ids is None:
            continue
        report["tasks"] += 1
        report["nodes"] += len(ids)
        sliced = compress_slice(conn, task.scope, steps, params, budget)
        report["compressed"] += int(sliced["compressed"])
        report["deleted"] += int(sliced["deleted"])
    return report


def work(
    root: Path,
    open_graph: Callable[[], sqlite3.Connection],
    steps: Steps,
    params: Params,
    wait: bool = False,
    budget: float | None = None,
) -> dict[str, Any] | None:
    """Drain the queue under the worker lock. Without ``wait``, None when another
    worker holds the lock (it will run our tasks); with it, wait for that worker."""
    total: dict[str, Any] = {}
    while True:
        try:
            with lock.exclusive(lock_path(root), "graph worker", wait=wait):
                conn = open_graph()
                try:
                    report = drain(conn, steps, params, budget)
                    seen = queue.pending(conn)
                finally:
                    conn.close()
        except TempFail:
            if wait:
                raise
            return total or None
        for key, value in report.items():
            total[key] = total.get(key, 0) + value
        # Trigger: a task enqueued after our last look but before we let go of the lock
        # (its own worker found the lock held and left). Outcome: take it too.
        conn = open_graph()
        try:
            newer = [t for t in queue.pending(conn) if t.id not in {s.id for s in seen}]
        finally:
            conn.close()
        if not newer:
            total["queued"] = len(seen)
            return total


def consolidate_graphs(
    root: Path,
    open_graph: Callable[[], sqlite3.Connection | None],
    steps: Steps,
    params: Params,
) -> dict[str, Any]:
    """consolidate's ``graph`` step: run the queue, then one compression slice per
    agent graph, sharing one ``time_slice`` between the graphs. Skipped (with the
    reason) when there is no graph or a worker holds the lock."""
    from soloqueue_mem.graph import store

    conn = open_graph()
    if conn is None:
        return {"skipped": "no graph.db"}
    try:
        with lock.exclusive(lock_path(root), "graph worker"):
            report: dict[str, Any] = drain(conn, steps, params)
            graphs = store.scopes(conn)
            share = params.time_slice / max(1, len(graphs))
            slices = [compress_slice(conn, scope, steps, params, share) for scope in graphs]
    except TempFail:
        return {"skipped": "a graph worker is running"}
    finally:
        conn.close()
    report["graphs"] = len(graphs)
    for key in ("compressed", "deleted", "kept", "visited"):
        report[key] = report.get(key, 0) + sum(int(s[key]) for s in slices)
    return report
