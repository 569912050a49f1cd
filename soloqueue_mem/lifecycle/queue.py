"""The extraction queue (seed 001, 003 §4.6) in state.db: turns whose model-based
extraction failed, retried with exponential backoff by later consolidations.

A turn is queued once (UNIQUE per turn). The quick rules have already extracted what
they can from it when it is queued, so nothing is lost while the model is away; a
later success adds what only the model saw, through ``remember``'s update rules.

On PostgreSQL (the same functions over the database's table) several hosts may consume
the queue: :func:`due` claims the items it returns. It takes them with ``FOR UPDATE
SKIP LOCKED`` (a consumer never waits for, nor takes, rows another one is claiming)
and moves their ``next_attempt_at`` a lease ahead in the same statement, so once it
commits no other consumer finds them due. :func:`completed` and :func:`retry_later`
settle a claimed item; an item whose consumer died is due again when the lease ends.
SQLite has one consumer at a time (consolidate's run lock) and claims nothing.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, NamedTuple

from soloqueue_mem import jsonio
from soloqueue_mem.clock import iso
from soloqueue_mem.db.adapter import Db
from soloqueue_mem.sessions.events import SessionKey

if TYPE_CHECKING:
    from soloqueue_mem.db.adapter import Connection

LEASE = timedelta(minutes=10)  # PostgreSQL: a claimed item is due again after this, if not settled


class Queued(NamedTuple):
    id: int
    key: SessionKey
    turn_index: int
    record: dict[str, Any]  # role, content, tool_calls, tool_results (as in the JSONL)
    retry_count: int
    max_retries: int


def backoff(retry_count: int, base: float, cap: float) -> timedelta:
    """1 s, 2 s, 4 s ... doubling up to 30 s (with the default base and cap)."""
    return timedelta(seconds=min(cap, base * 2**retry_count))


def enqueue(
    conn: Connection,
    key: SessionKey,
    record: dict[str, Any],
    error: str,
    now: datetime,
    next_attempt: datetime,
    max_retries: int,
) -> None:
    """Queue a turn once; queuing it again keeps the first entry."""
    db = Db(conn)
    with db.write():
        db.execute(
            "INSERT INTO extraction_queue (group_id, agent_id, session_id, turn_index,"
            " role, content, tool_calls, tool_results, retry_count, max_retries, status,"
            " created_at, last_attempted_at, next_attempt_at, error)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, 'pending', ?, ?, ?, ?)"
            " ON CONFLICT DO NOTHING",
            (
                key.group,
                key.agent,
                key.session,
                record["turn_index"],
                record["role"],
                record.get("content") or "",
                jsonio.dumps_compact(record.get("tool_calls") or []),
                jsonio.dumps_compact(record.get("tool_results") or []),
                max_retries,
                iso(now),
                iso(now),
                iso(next_attempt),
                error[:500],
            ),
        )


_COLUMNS = (
    "id, group_id, agent_id, session_id, turn_index, role, content, tool_calls,"
    " tool_results, retry_count, max_retries"
)


def due(conn: Connection, now: datetime, limit: int) -> list[Queued]:
    """Up to ``limit`` pending items that are due, oldest due first; claimed on
    PostgreSQL (see the module doc)."""
    db = Db(conn)
    if db.postgres:
        rows = db.fetchall(
            "WITH claimed AS (SELECT id, next_attempt_at AS was_due FROM extraction_queue"
            " WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, id"
            " LIMIT ? FOR UPDATE SKIP LOCKED)"
            " UPDATE extraction_queue AS q SET next_attempt_at = ? FROM claimed"
            " WHERE q.id = claimed.id RETURNING q.id, q.group_id, q.agent_id, q.session_id,"
            " q.turn_index, q.role, q.content, q.tool_calls, q.tool_results, q.retry_count,"
            " q.max_retries, claimed.was_due",
            (iso(now), limit, iso(now + LEASE)),
        )
        rows.sort(key=lambda row: (row[-1], row[0]))  # oldest due first, as SQLite's
    else:
        rows = db.fetchall(
            f"SELECT {_COLUMNS} FROM extraction_queue"  # noqa: S608 - constant columns
            " WHERE status = 'pending' AND next_attempt_at <= ?"
            " ORDER BY next_attempt_at, id LIMIT ?",
            (iso(now), limit),
        )
    return [
        Queued(
            row[0],
            SessionKey(row[1], row[2], row[3]),
            row[4],
            {
                "turn_index": row[4],
                "role": row[5],
                "content": row[6],
                "tool_calls": jsonio.loads(row[7]),
                "tool_results": jsonio.loads(row[8]),
            },
            row[9],
            row[10],
        )
        for row in rows
    ]


def completed(conn: Connection, item: Queued, now: datetime) -> None:
    db = Db(conn)
    with db.write():
        db.execute(
            "UPDATE extraction_queue SET status = 'completed', last_attempted_at = ?,"
            " error = NULL WHERE id = ?",
            (iso(now), item.id),
        )


def retry_later(conn: Connection, item: Queued, error: str, now: datetime, wait: timedelta) -> str:
    """One more failed attempt: pending again after ``wait``, or failed for good when
    the retries are spent. Returns the new status."""
    tries = item.retry_count + 1
    status = "failed" if tries >= item.max_retries else "pending"
    db = Db(conn)
    with db.write():
        db.execute(
            "UPDATE extraction_queue SET retry_count = ?, status = ?, last_attempted_at = ?,"
            " next_attempt_at = ?, error = ? WHERE id = ?",
            (tries, status, iso(now), iso(now + wait), error[:500], item.id),
        )
    return status


def depth(conn: Connection) -> dict[str, int]:
    """Items per status (``stats`` shows the queue depth)."""
    rows = Db(conn).fetchall("SELECT status, COUNT(*) FROM extraction_queue GROUP BY status")
    return dict(rows)
