"""The extraction queue (seed 001, 003 §4.6) in state.db: turns whose model-based
extraction failed, retried with exponential backoff by later consolidations.

A turn is queued once (UNIQUE per turn). The quick rules have already extracted what
they can from it when it is queued, so nothing is lost while the model is away; a
later success adds what only the model saw, through ``remember``'s update rules.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from soloqueue_mem import jsonio
from soloqueue_mem.clock import iso
from soloqueue_mem.db.connect import write_tx
from soloqueue_mem.sessions.events import SessionKey


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
    conn: sqlite3.Connection,
    key: SessionKey,
    record: dict[str, Any],
    error: str,
    now: datetime,
    next_attempt: datetime,
    max_retries: int,
) -> None:
    """Queue a turn once; queuing it again keeps the first entry."""
    with write_tx(conn):
        conn.execute(
            "INSERT OR IGNORE INTO extraction_queue (group_id, agent_id, session_id, turn_index,"
            " role, content, tool_calls, tool_results, retry_count, max_retries, status,"
            " created_at, last_attempted_at, next_attempt_at, error)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, 'pending', ?, ?, ?, ?)",
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


def due(conn: sqlite3.Connection, now: datetime, limit: int) -> list[Queued]:
    rows = conn.execute(
        "SELECT id, group_id, agent_id, session_id, turn_index, role, content, tool_calls,"
        " tool_results, retry_count, max_retries FROM extraction_queue"
        " WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?",
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


def completed(conn: sqlite3.Connection, item: Queued, now: datetime) -> None:
    with write_tx(conn):
        conn.execute(
            "UPDATE extraction_queue SET status = 'completed', last_attempted_at = ?,"
            " error = NULL WHERE id = ?",
            (iso(now), item.id),
        )


def retry_later(
    conn: sqlite3.Connection, item: Queued, error: str, now: datetime, wait: timedelta
) -> str:
    """One more failed attempt: pending again after ``wait``, or failed for good when
    the retries are spent. Returns the new status."""
    tries = item.retry_count + 1
    status = "failed" if tries >= item.max_retries else "pending"
    with write_tx(conn):
        conn.execute(
            "UPDATE extraction_queue SET retry_count = ?, status = ?, last_attempted_at = ?,"
            " next_attempt_at = ?, error = ? WHERE id = ?",
            (tries, status, iso(now), iso(now + wait), error[:500], item.id),
        )
    return status


def depth(conn: sqlite3.Connection) -> dict[str, int]:
    """Items per status (``stats`` shows the queue depth)."""
    return dict(conn.execute("SELECT status, COUNT(*) FROM extraction_queue GROUP BY status"))
