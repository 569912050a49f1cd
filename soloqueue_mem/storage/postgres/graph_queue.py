"""The graph's task queue on PostgreSQL (:mod:`soloqueue_mem.graph.queue`'s rules), and
the worker lock that makes one worker run it at a time across every host.

An enqueue holds a transaction-scoped advisory lock on the queue: the size check and
the insert are one step (two hosts cannot both take the last place), and task ids are
committed in the order they are given out, so the worker never runs a later task
before an earlier one that was still being committed. A task leaves the queue by a
``DELETE`` in the transaction that writes its nodes: a second worker that got at it
anyway finds it gone and applies nothing.

The worker lock is a session advisory lock held on a connection of its own for the
worker's run; the server releases it when that connection ends, a killed worker's
included. Tasks are applied strictly in order, one worker at a time (seed 002 §1.4:
each task reads the focus the one before it left), so workers on several hosts take
turns rather than skip past one another's rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from soloqueue_mem.errors import TempFail
from soloqueue_mem.graph.queue import TASK_COLUMNS, Task, queue_full, task_from_row
from soloqueue_mem.graph.store import Scope

if TYPE_CHECKING:
    import psycopg

_QUEUE_LOCK = "graph_tasks"  # hashed into the enqueue's transaction lock
_WORKER_LOCK = 0x47524150  # the graph worker's session lock ("GRAP")


def enqueue(
    conn: psycopg.Connection,
    scope: Scope,
    messages: list[dict[str, str]],
    enqueued_at: str,
    max_size: int,
) -> int:
    """Append a task; TempFail (exit 75) when ``max_size`` tasks are waiting."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (_QUEUE_LOCK,))
        waiting = depth(conn)
        if waiting >= max_size:
            raise queue_full(waiting)
        row = conn.execute(
            "INSERT INTO graph_tasks (group_id, agent_id, messages_json, enqueued_at)"
            " VALUES (%s, %s, %s, %s) RETURNING task_id",
            (*scope, json.dumps(messages, ensure_ascii=False), enqueued_at),
        ).fetchone()
    assert row is not None
    return int(row[0])


def head(conn: psycopg.Connection, after: int = 0) -> Task | None:
    row = conn.execute(
        f"SELECT {TASK_COLUMNS} FROM graph_tasks WHERE task_id > %s"  # noqa: S608 - constant
        " ORDER BY task_id LIMIT 1",
        (after,),
    ).fetchone()
    return task_from_row(row) if row else None


def pending(conn: psycopg.Connection) -> list[Task]:
    rows = conn.execute(
        f"SELECT {TASK_COLUMNS} FROM graph_tasks ORDER BY task_id"  # noqa: S608 - constant
    ).fetchall()
    return [task_from_row(row) for row in rows]


def task(conn: psycopg.Connection, task_id: int) -> Task | None:
    row = conn.execute(
        f"SELECT {TASK_COLUMNS} FROM graph_tasks WHERE task_id = %s",  # noqa: S608 - constant
        (task_id,),
    ).fetchone()
    return task_from_row(row) if row else None


def insert_task(conn: psycopg.Connection, task: Task) -> None:
    """Put ``task`` back with its own id (an import); no new task takes an id up to it."""
    conn.execute(
        "INSERT INTO graph_tasks (task_id, group_id, agent_id, messages_json, enqueued_at,"
        " attempts) VALUES (%s, %s, %s, %s, %s, %s)",
        (
            task.id,
            *task.scope,
            json.dumps(task.messages, ensure_ascii=False),
            task.enqueued_at,
            task.attempts,
        ),
    )
    raise_sequence(conn, "graph_tasks", "task_id", task.id)


def take(conn: psycopg.Connection, task_id: int) -> bool:
    """Remove a task inside the caller's transaction; False if it was gone already."""
    return conn.execute("DELETE FROM graph_tasks WHERE task_id = %s", (task_id,)).rowcount == 1


def requeue(conn: psycopg.Connection, task: Task) -> int:
    """Move ``task`` to the tail with one more attempt; its new id."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (_QUEUE_LOCK,))
        if not take(conn, task.id):
            return task.id
        row = conn.execute(
            "INSERT INTO graph_tasks (group_id, agent_id, messages_json, enqueued_at,"
            " attempts) VALUES (%s, %s, %s, %s, %s) RETURNING task_id",
            (
                *task.scope,
                json.dumps(task.messages, ensure_ascii=False),
                task.enqueued_at,
                task.attempts + 1,
            ),
        ).fetchone()
    assert row is not None
    return int(row[0])


def depth(conn: psycopg.Connection) -> int:
    row = conn.execute("SELECT COUNT(*) FROM graph_tasks").fetchone()
    assert row is not None
    return int(row[0])


def raise_sequence(conn: psycopg.Connection, table: str, column: str, at_least: int) -> None:
    """No new row of ``table`` takes an id up to ``at_least``: its id sequence is moved
    past it, never back (an id given out once is never given out again)."""
    conn.execute(
        "SELECT setval(pg_get_serial_sequence(%(t)s, %(c)s), %(n)s) WHERE %(n)s > COALESCE("
        "pg_sequence_last_value(pg_get_serial_sequence(%(t)s, %(c)s)::regclass), 0)",
        {"t": table, "c": column, "n": at_least},
    )


@contextmanager
def worker_lock(url: str, wait: bool) -> Iterator[None]:
    """Hold the graph worker's lock for the block; TempFail when another worker (on
    any host) holds it and not ``wait``."""
    from soloqueue_mem.storage.postgres.connect import connect

    conn = connect(url)
    try:
        if wait:
            conn.execute("SELECT pg_advisory_lock(%s)", (_WORKER_LOCK,))
        else:
            row = conn.execute("SELECT pg_try_advisory_lock(%s)", (_WORKER_LOCK,)).fetchone()
            if not (row and row[0]):
                raise TempFail("the graph worker lock is held by another worker (any host)")
        yield
    finally:
        conn.close()
