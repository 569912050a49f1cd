"""Seed 002's graph memory on PostgreSQL: :class:`soloqueue_mem.graph.db.SqlGraph` on the
database's connection, the SQL written once for both back ends, row for row
the same results in the same order (text is ordered by ``COLLATE "C"``, as SQLite's
binary order), so recall's paths and scores do not depend on the back end.

Several hosts share one graph: node ids come from a sequence, a link is upserted on
its key (``ON CONFLICT``), and a focus push holds a transaction-scoped advisory lock
on its graph, so two pushes never interleave their read of the top position with
their writes. The queue is :mod:`soloqueue_mem.graph.queue`'s, on this connection.

The graph worker's lock is a session advisory lock held on a connection of its own for
the worker's run; the server releases it when that connection ends, a killed worker's
included. Tasks are applied strictly in order, one worker at a time (each task reads
the focus the one before it left), so workers on several hosts take turns rather than
skip past one another's rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

_WORKER_LOCK = 0x47524150  # the graph worker's session lock ("GRAP")
BUSY = "the graph worker lock is held by another worker (any host)"


@contextmanager
def worker_lock(url: str, wait: bool) -> Iterator[None]:
    """Hold the graph worker's lock for the block; TempFail when another worker (on
    any host) holds it and not ``wait``."""
    from soloqueue_mem.storage.postgres.connect import connect, held_alone

    conn = connect(url)
    try:
        with held_alone(conn, _WORKER_LOCK, wait, BUSY):
            yield
    finally:
        conn.close()
