"""Reading sessions back: listings from the index, content from the canonical JSONL."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime

from soloqueue_mem.clock import iso
from soloqueue_mem.db.adapter import Db
from soloqueue_mem.errors import InvalidId, NotFound
from soloqueue_mem.home import Home, validate_id
from soloqueue_mem.sessions import turns
from soloqueue_mem.sessions.events import Event, SessionKey, from_record, to_openai
from soloqueue_mem.sessions.logfile import read_lines
from soloqueue_mem.tuples import NamedTuple

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import Any

    from soloqueue_mem.db.adapter import Connection


class SessionLogContent(NamedTuple):
    """A session's records as its JSONL holds them, plus the lines that did not parse."""

    key: SessionKey
    records: list[dict[str, Any]]
    problems: list[str]


def read_session(home: Home, key: SessionKey) -> SessionLogContent:
    """Every record of the session's JSONL; NotFound if the session has no log."""
    path = home.session_log(key.group, key.agent, key.session)
    if not os.path.exists(path):
        raise NotFound(
            f"session {key.group}/{key.agent}/{key.session} not found "
            "(try: soloqueue-mem session list)"
        )
    records, problems = [], []
    for entry in read_lines(path):
        if entry.record is None:
            problems.append(f"{os.path.basename(path)}:{entry.number}: {entry.error}")
        else:
            records.append(entry.record)
    return SessionLogContent(key, records, problems)


def openai_messages(records: list[dict[str, Any]], full: bool = False) -> list[dict[str, Any]]:
    """The chat messages the session's events stand for, in order (thoughts left out):
    their L1 view (offloaded output as references), or with ``full`` the originals."""
    return [message for event in _events(records, full) for message in to_openai(event)]


def anthropic_messages(records: list[dict[str, Any]], full: bool = False) -> dict[str, Any]:
    """``{"system", "messages"}`` of the Messages API for the session (views as in
    :func:`openai_messages`)."""
    from soloqueue_mem.sessions.chat_formats import to_anthropic

    return to_anthropic(list(_events(records, full)))


def _events(records: list[dict[str, Any]], full: bool) -> Iterator[Event]:
    from soloqueue_mem.sessions.offload import l1_record

    view = (lambda r: r) if full else l1_record
    return (from_record(view(record)) for record in records)


def end_session(conn: Connection, key: SessionKey, now: datetime) -> str:
    """Mark the session ended; episodes are written by the consolidation layer later."""
    ended_at = iso(now)
    with Db(conn).write():
        if not turns.mark_ended(conn, key, ended_at):
            raise NotFound(f"session {key.group}/{key.agent}/{key.session} not found")
    return ended_at


def session_files(
    home: Home, group: str | None, agent: str | None
) -> Iterator[tuple[SessionKey, str]]:
    """JSONL logs on disk within the scope; names that are not valid ids are skipped."""
    groups_dir = home.path("groups")
    for group_name in _child_dirs(groups_dir, group):
        sessions_dir = os.path.join(groups_dir, group_name, "sessions")
        for agent_name in _child_dirs(sessions_dir, agent):
            folder = os.path.join(sessions_dir, agent_name)
            with os.scandir(folder) as entries:
                for entry in entries:
                    if not entry.name.endswith(".jsonl") or not entry.is_file(
                        follow_symlinks=False
                    ):
                        continue
                    try:
                        session = validate_id("session", entry.name[: -len(".jsonl")])
                    except InvalidId:
                        continue
                    yield SessionKey(group_name, agent_name, session), entry.path


def _child_dirs(folder: str, only: str | None) -> list[str]:
    if only is not None:
        child = os.path.join(folder, only)
        return [only] if os.path.isdir(child) and not os.path.islink(child) else []
    try:
        with os.scandir(folder) as entries:
            names = [e.name for e in entries if e.is_dir(follow_symlinks=False)]
    except FileNotFoundError:
        return []
    valid = []
    for name in sorted(names):
        try:
            valid.append(validate_id("name", name))
        except InvalidId:
            continue
    return valid
