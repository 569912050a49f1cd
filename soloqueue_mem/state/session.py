"""Session state (seed 001 §2, §4): variables of one session in ``session_state``, and
what the session changes in the scratchpad and the memories.

``current_task`` and ``next_step`` are the scratchpad's current projects and next steps
kept in step with the session (the current task is updated every turn; a task replaced
by another is archived under recent progress with its date). Ending a session
clears its TRANSIENT memories.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from datetime import datetime
from typing import TYPE_CHECKING, Any

from soloqueue_mem.clock import iso
from soloqueue_mem.db.adapter import Db
from soloqueue_mem.errors import NotFound
from soloqueue_mem.memory import scratchpad, store
from soloqueue_mem.sessions import turns
from soloqueue_mem.sessions.events import SessionKey
from soloqueue_mem.state import values
from soloqueue_mem.state.values import Entry

if TYPE_CHECKING:
    from soloqueue_mem.db.adapter import Connection

TABLE = "session_state"
CURRENT_TASK, NEXT_STEP = "current_task", "next_step"


def set_variable(
    state: Connection,
    memory: Connection,
    key: SessionKey,
    name: str,
    value: Any,
    now: datetime,
    template: str,
) -> Entry:
    """Set a session variable; ``current_task`` and ``next_step`` (text) update the
    scratchpad of the session's group and agent first (``template`` when none was
    written: the ``language`` setting's headings). Where both live in one database
    (PostgreSQL: ``state`` is ``memory``) they are written in one transaction, under
    the scratchpad's lock."""
    with Db(memory).write() if state is memory else nullcontext():
        if syncs_scratchpad(name, value):
            scratchpad.lock(memory, key.group, key.agent)
            previous = text_of(lambda: values.get(state, TABLE, key, name))
            pad = scratchpad.get(memory, key.group, key.agent, template).content
            new = synced(pad, name, value, previous, now)
            scratchpad.put(memory, key.group, key.agent, new, now)
        return values.put(state, TABLE, key, name, value, now)


def syncs_scratchpad(name: str, value: Any) -> bool:
    """Whether setting ``name`` to ``value`` changes the scratchpad too."""
    return name in (CURRENT_TASK, NEXT_STEP) and isinstance(value, str) and bool(value.strip())


def text_of(entry: Callable[[], Entry]) -> str | None:
    """The text the variable held (None: unset, or not text)."""
    try:
        value = entry().value
    except NotFound:
        return None
    return value if isinstance(value, str) else None


def synced(pad: str, name: str, value: str, previous: str | None, now: datetime) -> str:
    """The scratchpad ``pad`` once ``name`` changed from ``previous`` to ``value``."""
    if name == NEXT_STEP:
        return scratchpad.with_first(pad, "next_steps", value)
    if previous and previous != value:
        day = iso(now)[5:10].replace("-", "/")
        pad = scratchpad.with_first(pad, "recent_progress", f"{day}: {previous}")
    return scratchpad.with_first(pad, "active_projects", value, drop=previous)


def clear_transients(
    memory: Connection, key: SessionKey, index: store.FullText = store.FTS5
) -> list[str]:
    """Delete the session's TRANSIENT memories (see ``store.session_transients``) and
    their ``index`` entries."""
    row = turns.get_session(memory, key)
    if row is None:
        return []
    with Db(memory).write():
        ids = store.session_transients(memory, key.group, key.agent, key.session, row.started_at)
        store.delete(memory, ids, index)
    return ids
