"""The graph worker: one per store, under ``.graph.lock`` (on PostgreSQL an advisory
lock on the database, so one across every host sharing it), processing the queue
strictly in order (seed 002 §1.4).

``graph remember`` enqueues and then starts a detached worker; a worker that finds the
lock held exits at once, because the holder sees the new task: after releasing the
lock it looks for tasks enqueued meanwhile and, if there are any, takes the lock again.
Each task is followed by one compression slice of its graph (§4.3). A task whose
segmentation failed goes to the tail; the worker stops when the task at the head is
one that already failed in this run, so a model that is down does not spin it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from soloqueue_mem.errors import TempFail
from soloqueue_mem.graph.compress import compress_slice
from soloqueue_mem.graph.params import Params
from soloqueue_mem.graph.remember import apply_task
from soloqueue_mem.graph.steps import SegmentationFailed, Steps

if TYPE_CHECKING:
    from soloqueue_mem.graph.db import GraphDb

LOCK_FILE = ".graph.lock"


def lock_path(root: Path) -> Path:
    return root / LOCK_FILE


def drain(db: GraphDb, steps: Steps, params: Params, budget: float | None = None) -> dict[str, int]:
    """Run queued tasks in order until the queue is empty (or only tasks that failed in
    this run are left); counts of what happened. ``budget`` overrides the slice time."""
    report = {"tasks": 0, "nodes": 0, "requeued": 0, "compressed": 0, "deleted": 0}
    failed: set[int] = set()
    while (task := db.head()) is not None and task.id not in failed:
        try:
            ids = apply_task(db, task, steps, params, task.enqueued_at)
        except SegmentationFailed:
            failed.add(db.requeue(task))
            report["requeued"] += 1
            continue
        if ids is None:
            continue
        report["tasks"] += 1
        report["nodes"] += len(ids)
        sliced = compress_slice(db, task.scope, steps, params, budget)
        report["compressed"] += int(sliced["compressed"])
        report["deleted"] += int(sliced["deleted"])
    return report


def work(
    worker_lock: Callable[[bool], AbstractContextManager[Any]],
    open_graph: Callable[[], GraphDb],
    steps: Steps,
    params: Params,
    wait: bool = False,
    budget: float | None = None,
) -> dict[str, Any] | None:
    """Drain the queue under ``worker_lock(wait)`` (:func:`.db.worker_lock`). Without
    ``wait``, None when another worker holds the lock (it will run our tasks); with
    it, wait for that worker."""
    total: dict[str, Any] = {}
    while True:
        try:
            with worker_lock(wait):
                db = open_graph()
                try:
                    report = drain(db, steps, params, budget)
                    seen = db.pending()
                finally:
                    db.close()
        except TempFail:
            if wait:
                raise
            return total or None
        for key, value in report.items():
            total[key] = total.get(key, 0) + value
        # Trigger: a task enqueued after our last look but before we let go of the lock
        # (its own worker found the lock held and left). Outcome: take it too.
        db = open_graph()
        try:
            newer = [t for t in db.pending() if t.id not in {s.id for s in seen}]
        finally:
            db.close()
        if not newer:
            total["queued"] = len(seen)
            return total


def consolidate_graphs(
    worker_lock: Callable[[bool], AbstractContextManager[Any]],
    open_graph: Callable[[], GraphDb | None],
    steps: Steps,
    params: Params,
) -> dict[str, Any]:
    """consolidate's ``graph`` step: run the queue, then one compression slice per
    agent graph, sharing one ``time_slice`` between the graphs. Skipped (with the
    reason) when there is no graph or a worker holds the lock."""
    db = open_graph()
    if db is None:
        return {"skipped": "no graph.db"}
    try:
        with worker_lock(False):
            report: dict[str, Any] = drain(db, steps, params)
            graphs = db.scopes()
            share = params.time_slice / max(1, len(graphs))
            slices = [compress_slice(db, scope, steps, params, share) for scope in graphs]
    except TempFail:
        return {"skipped": "a graph worker is running"}
    finally:
        db.close()
    report["graphs"] = len(graphs)
    for key in ("compressed", "deleted", "kept", "visited"):
        report[key] = report.get(key, 0) + sum(int(s[key]) for s in slices)
    return report
