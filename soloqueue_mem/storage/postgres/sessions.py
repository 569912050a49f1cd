"""Sessions on PostgreSQL: listing them and reading a session's turns back.

The database holds every host's turns; a host's JSONL log holds only the turns that
host wrote, with what the database lacks (the original of offloaded tool output, the
OpenAI message as given). A session is read from the database, each turn replaced by
this host's JSONL record of it when there is one (same session, same turn index: the
index was taken from the database when the turn was written).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from soloqueue_mem.errors import NotFound
from soloqueue_mem.home import Home
from soloqueue_mem.sessions import turns
from soloqueue_mem.sessions.events import Event, SessionKey, to_record
from soloqueue_mem.sessions.reader import SessionLogContent, read_session
from soloqueue_mem.sessions.turns import SessionRow, Turn

if TYPE_CHECKING:
    import psycopg


def list_sessions(
    conn: psycopg.Connection, home: Home, group: str | None, agent: str | None, limit: int
) -> list[SessionRow]:
    """Sessions as :func:`soloqueue_mem.sessions.turns.list_sessions` lists them;
    ``jsonl_bytes`` is the size of this host's log."""
    return [
        row._replace(jsonl_bytes=_log_size(home, SessionKey(*row[:3])))
        for row in turns.list_sessions(conn, group, agent, limit)
    ]


def _log_size(home: Home, key: SessionKey) -> int:
    try:
        return os.stat(home.session_log(*key)).st_size
    except FileNotFoundError:
        return 0


def read(conn: psycopg.Connection, home: Home, key: SessionKey) -> SessionLogContent:
    """The session's records (see the module doc); NotFound when it has no turn."""
    found = turns.session_turns(conn, key)
    if not found:
        raise NotFound(
            f"session {key.group}/{key.agent}/{key.session} not found "
            "(try: soloqueue-mem session list)"
        )
    local: dict[int, dict[str, Any]] = {}
    problems: list[str] = []
    if os.path.exists(home.session_log(*key)):
        content = read_session(home, key)
        local = {r["turn_index"]: r for r in content.records}
        problems = content.problems
    return SessionLogContent(key, [local.get(t.turn_index) or record(t) for t in found], problems)


def record(turn: Turn) -> dict[str, Any]:
    """A turn as its JSONL record, from what the database holds."""
    event = Event(
        turn.role,
        turn.content,
        turn.tool_calls,
        turn.tool_results,
        metadata=turn.metadata,
        event_id=turn.event_id,
    )
    return to_record(event, turn.turn_index, turn.timestamp)
