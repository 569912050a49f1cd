"""The extraction queue on PostgreSQL: :mod:`soloqueue_mem.lifecycle.queue`'s functions
(the same names and arguments) over the database's ``extraction_queue`` table.

Several hosts may consume it: :func:`due` claims the items it returns. It takes them
with ``FOR UPDATE SKIP LOCKED`` (a consumer never waits for, nor takes, rows another
one is claiming) and moves their ``next_attempt_at`` a lease ahead in the same
statement, so once it commits no other consumer finds them due. :func:`completed` and
:func:`retry_later` settle a claimed item; an item whose consumer died is due again
when the lease ends.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from soloqueue_mem import jsonio
from soloqueue_mem.clock import iso
from soloqueue_mem.lifecycle.queue import Queued
from soloqueue_mem.sessions.events import SessionKey

if TYPE_CHECKING:
    from typing import Any

    import psycopg

LEASE = timedelta(minutes=10)  # a claimed item is due again after this, if not settled


def enqueue(
    conn: psycopg.Connection,
    key: SessionKey,
    record: dict[str, Any],
    error: str,
    now: datetime,
    next_attempt: datetime,
    max_retries: int,
) -> None:
    """Queue a turn once; queuing it again keeps the first entry."""
    conn.execute(
        "INSERT INTO extraction_queue (group_id, agent_id, session_id, turn_index, role,"
        " content, tool_calls, tool_results, retry_count, max_retries, status, created_at,"
        " last_attempted_at, next_attempt_at, error)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, 1, %s, 'pending', %s, %s, %s, %s)"
        " ON CONFLICT DO NOTHING",
        (
            *key,
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


def due(conn: psycopg.Connection, now: datetime, limit: int) -> list[Queued]:
    """Claim up to ``limit`` pending items that are due, oldest due first (see the
    module doc)."""
    rows = conn.execute(
        "WITH claimed AS (SELECT id, next_attempt_at AS was_due FROM extraction_queue"
        " WHERE status = 'pending' AND next_attempt_at <= %s ORDER BY next_attempt_at, id"
        " LIMIT %s FOR UPDATE SKIP LOCKED)"
        " UPDATE extraction_queue AS q SET next_attempt_at = %s FROM claimed"
        " WHERE q.id = claimed.id RETURNING q.id, q.group_id, q.agent_id, q.session_id,"
        " q.turn_index, q.role, q.content, q.tool_calls, q.tool_results, q.retry_count,"
        " q.max_retries, claimed.was_due",
        (iso(now), limit, iso(now + LEASE)),
    ).fetchall()
    rows.sort(key=lambda row: (row[-1], row[0]))  # the order SQLite's due() gives
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


def completed(conn: psycopg.Connection, item: Queued, now: datetime) -> None:
    conn.execute(
        "UPDATE extraction_queue SET status = 'completed', last_attempted_at = %s,"
        " error = NULL WHERE id = %s",
        (iso(now), item.id),
    )


def retry_later(
    conn: psycopg.Connection, item: Queued, error: str, now: datetime, wait: timedelta
) -> str:
    """One more failed attempt: pending again after ``wait``, or failed for good when
    the retries are spent. Returns the new status."""
    tries = item.retry_count + 1
    status = "failed" if tries >= item.max_retries else "pending"
    conn.execute(
        "UPDATE extraction_queue SET retry_count = %s, status = %s, last_attempted_at = %s,"
        " next_attempt_at = %s, error = %s WHERE id = %s",
        (tries, status, iso(now), iso(now + wait), error[:500], item.id),
    )
    return status


def depth(conn: psycopg.Connection) -> dict[str, int]:
    """Items per status."""
    return dict(conn.execute("SELECT status, COUNT(*) FROM extraction_queue GROUP BY status"))
