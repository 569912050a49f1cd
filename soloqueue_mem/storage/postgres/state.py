"""Session variables on PostgreSQL: :func:`soloqueue_mem.state.session.set_variable`
with the variable and the scratchpad it keeps in step written in one transaction,
under the scratchpad's lock (see :mod:`soloqueue_mem.storage.postgres.scratchpad`)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from soloqueue_mem.sessions.events import SessionKey
from soloqueue_mem.state.session import TABLE, synced, syncs_scratchpad, text_of
from soloqueue_mem.state.values import Entry
from soloqueue_mem.storage.postgres import scratchpad, values

if TYPE_CHECKING:
    import psycopg


def set_variable(
    conn: psycopg.Connection, key: SessionKey, name: str, value: Any, now: datetime, template: str
) -> Entry:
    """Set a session variable; ``current_task`` and ``next_step`` (text) update the
    scratchpad of the session's group and agent (``template`` when none was written) in
    the same transaction."""
    with conn.transaction():
        if syncs_scratchpad(name, value):
            scratchpad.lock(conn, key.group, key.agent)
            previous = text_of(lambda: values.get(conn, TABLE, key, name))
            pad = scratchpad.get(conn, key.group, key.agent, template).content
            new = synced(pad, name, value, previous, now)
            scratchpad.put(conn, key.group, key.agent, new, now)
        return values.put(conn, TABLE, key, name, value, now)
