"""The persistent serial task queue of graph remember (seed 002 §1.4, §5.5).

Tasks run in ``task_id`` order. A task leaves the queue in the same transaction that
writes its nodes, so a worker killed at any moment leaves it queued and whole: it is
run again, never half-applied. A task whose segmentation failed goes to the tail
(a new, larger ``task_id``) with its attempt count raised.

The same functions run on PostgreSQL (:class:`soloqueue_mem.db.adapter.Db`), where an
enqueue holds a transaction-scoped advisory lock on the queue: the size check and the
insert are one step (two hosts cannot both take the last place), and task ids are
committed in the order they are given out, so the worker never runs a later task
before an earlier one that was still being committed. A task leaves the queue by a
``DELETE`` in the transaction that writes its nodes: a second worker that got at it
anyway finds it gone and applies nothing.
"""

from __future__ import annotations

import json

from soloqueue_mem.db.adapter import Db
from soloqueue_mem.errors import TempFail
from soloqueue_mem.graph.store import Scope
from soloqueue_mem.tuples import NamedTuple

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import Any

    from soloqueue_mem.db.adapter import Connection

_QUEUE_LOCK = "graph_tasks"  # PostgreSQL: the enqueue's transaction lock


class Task(NamedTuple):
    id: int
    scope: Scope
    messages: list[dict[str, str]]
    enqueued_at: str
    attempts: int


def enqueue(
    conn: Connection,
    scope: Scope,
    messages: list[dict[str, str]],
    enqueued_at: str,
    max_size: int,
) -> int:
    """Append a task; TempFail (exit 75) when ``max_size`` tasks are waiting."""
    db = Db(conn)
    with db.write():
        db.lock(_QUEUE_LOCK)
        waiting = depth(conn)
        if waiting >= max_size:
            raise queue_full(waiting)
        return db.insert(
            "INSERT INTO graph_tasks (group_id, agent_id, messages_json, enqueued_at)"
            " VALUES (?, ?, ?, ?)",
            (*scope, json.dumps(messages, ensure_ascii=False), enqueued_at),
            key="task_id",
        )


def queue_full(waiting: int) -> TempFail:
    """The error of an enqueue when ``waiting`` tasks fill the queue (exit 75)."""
    return TempFail(
        f"the graph queue is full ({waiting} tasks, graph_max_queue_size);"
        " run `soloqueue-mem graph work` or try again later"
    )


def task_from_row(row: tuple[Any, ...]) -> Task:
    return Task(int(row[0]), Scope(row[1], row[2]), json.loads(row[3]), row[4], int(row[5]))


TASK_COLUMNS = "task_id, group_id, agent_id, messages_json, enqueued_at, attempts"


def head(conn: Connection, after: int = 0) -> Task | None:
    """The first task with an id above ``after``."""
    row = Db(conn).fetchone(
        f"SELECT {TASK_COLUMNS} FROM graph_tasks WHERE task_id > ?"  # noqa: S608 - constant
        " ORDER BY task_id LIMIT 1",
        (after,),
    )
    return task_from_row(row) if row else None


def pending(conn: Connection) -> list[Task]:
    rows = Db(conn).fetchall(f"SELECT {TASK_COLUMNS} FROM graph_tasks ORDER BY task_id")  # noqa: S608
    return [task_from_row(row) for row in rows]


def task(conn: Connection, task_id: int) -> Task | None:
    row = Db(conn).fetchone(
        f"SELECT {TASK_COLUMNS} FROM graph_tasks WHERE task_id = ?",  # noqa: S608 - constant
        (task_id,),
    )
    return task_from_row(row) if row else None


def insert_task(conn: Connection, task: Task) -> None:
    """Put ``task`` back with its own id (an import), inside the caller's transaction;
    no new task takes an id up to it."""
    db = Db(conn)
    db.execute(
        "INSERT INTO graph_tasks (task_id, group_id, agent_id, messages_json, enqueued_at,"
        " attempts) VALUES (?, ?, ?, ?, ?, ?)",
        (
            task.id,
            *task.scope,
            json.dumps(task.messages, ensure_ascii=False),
            task.enqueued_at,
            task.attempts,
        ),
    )
    db.claim_id("graph_tasks", "task_id", task.id)


def take(conn: Connection, task_id: int) -> bool:
    """Remove a task inside the caller's transaction; False if it was gone already."""
    deleted: int = (
        Db(conn).execute("DELETE FROM graph_tasks WHERE task_id = ?", (task_id,)).rowcount
    )
    return deleted == 1


def requeue(conn: Connection, task: Task) -> int:
    """Move ``task`` to the tail with one more attempt; its new id."""
    db = Db(conn)
    with db.write():
        db.lock(_QUEUE_LOCK)
        if not take(conn, task.id):
            return task.id
        return db.insert(
            "INSERT INTO graph_tasks (group_id, agent_id, messages_json, enqueued_at,"
            " attempts) VALUES (?, ?, ?, ?, ?)",
            (
                *task.scope,
                json.dumps(task.messages, ensure_ascii=False),
                task.enqueued_at,
                task.attempts + 1,
            ),
            key="task_id",
        )


def depth(conn: Connection) -> int:
    row = Db(conn).fetchone("SELECT COUNT(*) FROM graph_tasks")
    assert row is not None
    return int(row[0])
