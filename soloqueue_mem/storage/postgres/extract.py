"""``extract_on_log`` on PostgreSQL: :mod:`soloqueue_mem.lifecycle.on_log` over the
database's ``log_extractions`` table (the one state.db holds on SQLite).

``log`` starts the same background worker; the worker reads the turn from
``quarantine_logs`` and claims it in one transaction under a lock on its session
(a transaction-scoped advisory lock, so ``log`` writers of the session never wait
for it): workers on any host never claim a turn twice nor more than
``MAX_PER_SESSION`` turns of a session. The claim is recorded before the memories
are written and marked done after, so a worker killed in between leaves the turn to
the session's digest, as on SQLite.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from soloqueue_mem.clock import iso
from soloqueue_mem.lifecycle import extract
from soloqueue_mem.lifecycle.on_log import MAX_PER_SESSION, SOURCE, is_candidate
from soloqueue_mem.sessions.events import SessionKey

if TYPE_CHECKING:
    import psycopg

    from soloqueue_mem.lifecycle.vocabulary import Vocabulary
    from soloqueue_mem.memory.store import Draft, Remembered

_SESSION_LOCK = 0x6C6F6778  # "logx": the first key of a session's claim lock


def open_sessions(conn: psycopg.Connection, chosen: list[list]) -> list[list]:
    """The targets whose session has claimed fewer than ``MAX_PER_SESSION`` turns."""
    keys = sorted({tuple(target[:3]) for target in chosen})
    if not keys:
        return chosen
    groups, agents, sessions = (list(column) for column in zip(*keys, strict=True))
    full = {
        tuple(row)
        for row in conn.execute(
            "SELECT group_id, agent_id, session_id FROM log_extractions"
            " JOIN unnest(%s::text[], %s::text[], %s::text[]) AS k(g, a, s)"
            " ON group_id = g AND agent_id = a AND session_id = s"
            " GROUP BY group_id, agent_id, session_id HAVING COUNT(*) >= %s",
            (groups, agents, sessions, MAX_PER_SESSION),
        )
    }
    return [target for target in chosen if tuple(target[:3]) not in full]


def extracted_turns(conn: psycopg.Connection, key: SessionKey) -> set[int]:
    """Turn indexes of the session whose extraction on log finished."""
    rows = conn.execute(
        "SELECT turn_index FROM log_extractions WHERE group_id = %s AND agent_id = %s"
        " AND session_id = %s AND extracted_at IS NOT NULL",
        tuple(key),
    )
    return {row[0] for row in rows}


def _reserve(conn: psycopg.Connection, key: SessionKey, index: int, now: str) -> bool:
    """Claim a turn unless it was claimed or its session has claimed ``MAX_PER_SESSION``."""
    with conn.transaction():
        conn.execute(
            "SELECT pg_advisory_xact_lock(%s, hashtext(%s))",
            (_SESSION_LOCK, "/".join(key)),
        )
        claimed, this = conn.execute(
            "SELECT COUNT(*), COUNT(*) FILTER (WHERE turn_index = %s) FROM log_extractions"
            " WHERE group_id = %s AND agent_id = %s AND session_id = %s",
            (index, *key),
        ).fetchone() or (0, 0)
        if claimed >= MAX_PER_SESSION or this:
            return False
        conn.execute(
            "INSERT INTO log_extractions (group_id, agent_id, session_id, turn_index,"
            " reserved_at) VALUES (%s, %s, %s, %s, %s)",
            (*key, index, now),
        )
    return True


def _user_turn(conn: psycopg.Connection, key: SessionKey, index: int) -> dict | None:
    row = conn.execute(
        "SELECT role, content, timestamp FROM quarantine_logs WHERE group_id = %s"
        " AND agent_id = %s AND session_id = %s AND turn_index = %s",
        (*key, index),
    ).fetchone()
    if row is None or not is_candidate(row[0], row[1], False):
        return None
    return {"role": "user", "content": row[1], "timestamp": row[2]}


def extract_turns(
    conn: psycopg.Connection,
    targets: Iterable[tuple[SessionKey, int]],
    now: datetime,
    remember: Callable[[Draft, str, str], Remembered],
    words: Vocabulary | None = None,
) -> list[Remembered]:
    """:func:`soloqueue_mem.lifecycle.on_log.extract_turns` on the database;
    ``remember(draft, group, agent)`` stores a memory (the back end's, which also
    embeds it when the dense channel runs)."""
    found: list[Remembered] = []
    for key, index in targets:
        record = _user_turn(conn, key, index)
        if record is None or not _reserve(conn, key, index, iso(now)):
            continue
        drafts = extract.from_turn(record, {}, words)
        remembered = [remember(d._replace(source=SOURCE), key.group, key.agent) for d in drafts]
        conn.execute(
            "UPDATE log_extractions SET extracted_at = %s, memories = %s WHERE group_id = %s"
            " AND agent_id = %s AND session_id = %s AND turn_index = %s",
            (iso(now), len(remembered), *key, index),
        )
        found += remembered
    return found
