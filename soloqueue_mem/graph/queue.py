"""The persistent serial task queue of graph remember (seed 002 §1.4, §5.5).

Tasks run in ``task_id`` order. A task leaves the queue in the same transaction that
writes its nodes, so a worker killed at any moment leaves it queued and whole: it is
run again, never half-applied. A task whose segmentation failed goes to the tail
(a new, larger ``task_id``) with its attempt count raised.
"""

from __future__ import annotations

import json
import sqlite3

from soloqueue_mem.db.connect import write_tx
from soloqueue_mem.errors import TempFail
from soloqueue_mem.graph.store import Scope
from soloqueue_mem.tuples import NamedTuple

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import Any


class Task(NamedTuple):
    id: int
    scope: Scope
    messages: list[dict[str, str]]
    enqueued_at: str
    attempts: int


def enqueue(
    conn: sqlite3.Connection,
    scope: Scope,
    messages: list[dict[str, str]],
    enqueued_at: str,
    max_size: int,
) -> int:
    """Append a task; TempFail (exit 75) when ``max_size`` tasks are waiting."""
    with write_tx(conn):
        waiting = conn.execute("SELECT COUNT(*) FROM graph_tasks").fetchone()[0]
        if waiting >= max_size:
            raise queue_full(waiting)
        cursor = conn.execute(
            "INSERT INTO graph_tasks (group_id, agent_id, messages_json, enqueued_at)"
            " VALUES (?, ?, ?, ?)",
            (*scope, json.dumps(messages, ensure_ascii=False), enqueued_at),
        )
    return int(cursor.lastrowid or 0)


def queue_full(waiting: int) -> TempFail:
    """The error of an enqueue when ``waiting`` tasks fill the queue (exit 75)."""
    return TempFail(
        f"the graph queue is full ({waiting} tasks, graph_max_queue_size);"
        " run `soloqueue-mem graph work` or try again later"
    )


def task_from_row(row: tuple[Any, ...]) -> Task:
    return Task(int(row[0]), Scope(row[1], row[2]), json.loads(row[3]), row[4], int(row[5]))


TASK_COLUMNS = "task_id, group_id, agent_id, messages_json, enqueued_at, attempts"


def head(conn: sqlite3.Connection, after: int = 0) -> Task | None:
    """The first task with an id above ``after``."""
    row = conn.execute(
        f"SELECT {TASK_COLUMNS} FROM graph_tasks WHERE task_id > ?"  # noqa: S608 - constant
        " ORDER BY task_id LIMIT 1",
        (after,),
    ).fetchone()
    return task_from_row(row) if row else None


def pending(conn: sqlite3.Connection) -> list[Task]:
    rows = conn.execute(f"SELECT {TASK_COLUMNS} FROM graph_tasks ORDER BY task_id")  # noqa: S608
    return [task_from_row(row) for row in rows]


def task(conn: sqlite3.Connection, task_id: int) -> Task | None:
    row = conn.execute(
        f"SELECT {TASK_COLUMNS} FROM graph_tasks WHERE task_id = ?",  # noqa: S608 - constant
        (task_id,),
    ).fetchone()
    return task_from_row(row) if row else None


def insert_task(conn: sqlite3.Connection, task: Task) -> None:
    """Put ``task`` back with its own id (an import), inside the caller's transaction."""
    conn.execute(
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


def take(conn: sqlite3.Connection, task_id: int) -> bool:
    """Remove a task inside the caller's transaction; False if it was gone already."""
    return conn.execute("DELETE FROM graph_tasks WHERE task_id = ?", (task_id,)).rowcount == 1


def requeue(conn: sqlite3.Connection, task: Task) -> int:
    """Move ``task`` to the tail with one more attempt; its new id."""
    with write_tx(conn):
        if not take(conn, task.id):
            return task.id
        cursor = conn.execute(
            "INSERT INTO graph_tasks (group_id, agent_id, messages_json, enqueued_at,"
            " attempts) VALUES (?, ?, ?, ?, ?)",
            (
                *task.scope,
                json.dumps(task.messages, ensure_ascii=False),
                task.enqueued_at,
                task.attempts + 1,
            ),
        )
    return int(cursor.lastrowid or 0)


def depth(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM graph_tasks").fetchone()[0])
