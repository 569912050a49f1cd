"""All SQL for ``scratchpad`` on PostgreSQL: one per group and agent, with the parsing
and checks of :mod:`soloqueue_mem.memory.scratchpad` (the same fields, the same JSON).

A read-modify-write of one scratchpad (a session variable synced into it, an episode
noted under 近期进展) holds :func:`lock` for its transaction, so writers on several
hosts never lose each other's change.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from soloqueue_mem.clock import iso
from soloqueue_mem.memory.scratchpad import (
    Scratchpad,
    check,
    from_content,
    row_values,
)

if TYPE_CHECKING:
    import psycopg


def lock(conn: psycopg.Connection, group: str, agent: str) -> None:
    """Hold the scratchpad of (group, agent) until the transaction ends."""
    conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"scratchpad/{group}/{agent}",))


def get(conn: psycopg.Connection, group: str, agent: str, template: str) -> Scratchpad:
    """The scratchpad of (group, agent); ``template`` when none was written."""
    row = conn.execute(
        "SELECT content, updated_at FROM scratchpad WHERE group_id = %s AND agent_id = %s",
        (group, agent),
    ).fetchone()
    content, updated_at = row if row else (template, None)
    return from_content(group, agent, content, updated_at)


def put(
    conn: psycopg.Connection, group: str, agent: str, content: str, now: datetime
) -> Scratchpad:
    """Replace the scratchpad of (group, agent)."""
    pad = from_content(group, agent, check(content), iso(now))
    _write(conn, pad, replace=True)
    return pad


def _write(conn: psycopg.Connection, pad: Scratchpad, replace: bool) -> int:
    on_conflict = (
        "DO UPDATE SET content = EXCLUDED.content, active_projects = EXCLUDED.active_projects,"
        " current_focus = EXCLUDED.current_focus, open_questions = EXCLUDED.open_questions,"
        " next_steps = EXCLUDED.next_steps, updated_at = EXCLUDED.updated_at"
        if replace
        else "DO NOTHING"
    )
    return conn.execute(
        "INSERT INTO scratchpad (group_id, agent_id, content, active_projects, current_focus,"
        " open_questions, next_steps, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
        f" ON CONFLICT (group_id, agent_id) {on_conflict}",
        row_values(pad),
    ).rowcount


def every(conn: psycopg.Connection) -> list[Scratchpad]:
    """Every written scratchpad, by group and agent (export)."""
    rows = conn.execute(
        "SELECT group_id, agent_id, content, updated_at FROM scratchpad"
        ' ORDER BY group_id COLLATE "C", agent_id COLLATE "C"'
    ).fetchall()
    return [from_content(*row) for row in rows]


def put_back(conn: psycopg.Connection, pad: Scratchpad) -> str:
    """Put back an exported scratchpad where none was written: ``added``, ``existing``
    or ``conflict`` (another text is there)."""
    fresh = from_content(pad.group, pad.agent, check(pad.content), pad.updated_at)
    if _write(conn, fresh, replace=False):
        return "added"
    found = get(conn, pad.group, pad.agent, template="")  # there: no template needed
    return (
        "existing"
        if (found.content, found.updated_at) == (pad.content, pad.updated_at)
        else ("conflict")
    )
