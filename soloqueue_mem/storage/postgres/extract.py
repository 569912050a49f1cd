"""``extract_on_log`` on PostgreSQL: which sessions may still claim a turn, one query
over the database's ``log_extractions`` for the sessions ``log`` names.

The worker itself is :func:`soloqueue_mem.lifecycle.on_log.extract_turns`, written once:
it claims a turn in one transaction under a lock on its session (a transaction-scoped
advisory lock, so ``log`` writers of the session never wait for it), so workers on
any host never claim a turn twice nor more than ``MAX_PER_SESSION`` turns of a session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from soloqueue_mem.lifecycle.on_log import MAX_PER_SESSION

if TYPE_CHECKING:
    import psycopg


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
