"""Per-turn extraction (``extract_on_log = true``, seed 001 §6): the quick rules run on
a user's turn soon after it is logged, at most ``MAX_PER_SESSION`` turns per session
and only turns of at least ``MIN_CHARS`` characters.

It runs in a background process (seed 001: 后台异步提取) so ``log`` stays within its
start-up budget: ``log`` only picks the candidates and starts the worker, which holds a
shared lock on ``.extract.lock`` from before ``log`` exits until it is done (anyone can
wait for every worker by taking the lock exclusively). The turns it extracted are
recorded in state.db, so the session's digest (``session end``, ``consolidate``) does
not count the same statement twice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from itertools import chain
from typing import TYPE_CHECKING

from soloqueue_mem.db.adapter import Db
from soloqueue_mem.sessions.events import SessionKey

if TYPE_CHECKING:
    from soloqueue_mem.db.adapter import Connection
    from soloqueue_mem.lifecycle.vocabulary import Vocabulary
    from soloqueue_mem.memory.store import Draft, Remembered

MAX_PER_SESSION = 5
MIN_CHARS = 30
SOURCE = "log"


def is_candidate(role: str, content: str, duplicate: bool) -> bool:
    """Whether a logged turn is worth extracting: a new user statement, long enough."""
    return role == "user" and not duplicate and len(content) >= MIN_CHARS


def targets(logged: Iterable[tuple[str, str, str, int, str, str, bool]]) -> list[list]:
    """``[group, agent, session, turn_index]`` of the candidates among logged turns
    ``(group, agent, session, turn_index, role, content, duplicate)``, at most
    ``MAX_PER_SESSION`` per session."""
    chosen: list[list] = []
    per_session: dict[tuple[str, str, str], int] = {}
    for group, agent, session, index, role, content, duplicate in logged:
        key = (group, agent, session)
        if is_candidate(role, content, duplicate) and per_session.get(key, 0) < MAX_PER_SESSION:
            per_session[key] = per_session.get(key, 0) + 1
            chosen.append([group, agent, session, index])
    return chosen


SESSIONS_PER_QUERY = 300


def open_sessions(state: Connection | None, chosen: list[list]) -> list[list]:
    """The targets whose session has claimed fewer than ``MAX_PER_SESSION`` turns (so
    ``log`` starts no worker that would only find the session full); ``state``: where
    ``log_extractions`` is. Only the targets' sessions are read: on PostgreSQL the
    table holds every host's."""
    keys = sorted({tuple(target[:3]) for target in chosen})
    if state is None or not keys:
        return chosen
    one = "(group_id = ? AND agent_id = ? AND session_id = ?)"
    full: set[tuple] = set()
    # a chunk's OR chain stays within SQLite's expression depth (1,000) and variables
    for start in range(0, len(keys), SESSIONS_PER_QUERY):
        chunk = keys[start : start + SESSIONS_PER_QUERY]
        full.update(
            tuple(row)
            for row in Db(state).fetchall(
                "SELECT group_id, agent_id, session_id FROM log_extractions"  # noqa: S608
                f" WHERE {' OR '.join([one] * len(chunk))}"
                " GROUP BY group_id, agent_id, session_id HAVING COUNT(*) >= ?",
                [*chain.from_iterable(chunk), MAX_PER_SESSION],
            )
        )
    return [target for target in chosen if tuple(target[:3]) not in full]


def extracted_turns(state: Connection | None, key: SessionKey) -> set[int]:
    """Turn indexes of the session whose extraction on log finished (``state``: where
    ``log_extractions`` is: state.db, or the PostgreSQL database)."""
    if state is None:
        return set()
    rows = Db(state).fetchall(
        "SELECT turn_index FROM log_extractions WHERE group_id = ? AND agent_id = ?"
        " AND session_id = ? AND extracted_at IS NOT NULL",
        key,
    )
    return {row[0] for row in rows}


def _reserve(state: Connection, key: SessionKey, index: int, now: str) -> bool:
    """Claim a turn for extraction, unless it was claimed or its session has claimed
    ``MAX_PER_SESSION`` (one transaction holding the session's claim lock, so
    concurrent workers, on any host, never exceed it; ``log`` writers never wait on it)."""
    db = Db(state)
    with db.write():
        db.lock("log_extractions/" + "/".join(key))
        claimed = db.fetchone(
            "SELECT COUNT(*), COUNT(*) FILTER (WHERE turn_index = ?) FROM log_extractions"
            " WHERE group_id = ? AND agent_id = ? AND session_id = ?",
            (index, *key),
        ) or (0, 0)
        if claimed[0] >= MAX_PER_SESSION or claimed[1]:
            return False
        db.execute(
            "INSERT INTO log_extractions (group_id, agent_id, session_id, turn_index,"
            " reserved_at) VALUES (?, ?, ?, ?, ?)",
            (*key, index, now),
        )
    return True


def extract_turns(
    memory: Connection,
    state: Connection,
    targets: Iterable[tuple[SessionKey, int]],
    remember: Callable[[Draft, str, str], Remembered],
    now: datetime,
    words: Vocabulary | None = None,
) -> list[Remembered]:
    """Extract each target turn not claimed yet, while its session has claimed fewer
    than ``MAX_PER_SESSION``; return what was remembered (``remember(draft, group,
    agent)``: the back end's). ``memory`` holds the turns, ``state`` the claims (one
    database on PostgreSQL). A worker that dies after its claim leaves the turn to the
    session's digest (it is marked extracted only after)."""
    from soloqueue_mem.clock import iso
    from soloqueue_mem.lifecycle import extract
    from soloqueue_mem.sessions import turns

    found: list[Remembered] = []
    for key, index in targets:
        turn = turns.turn_at(memory, key, index)
        if turn is None or not is_candidate(turn.role, turn.content, False):
            continue
        if not _reserve(state, key, index, iso(now)):
            continue
        record = {"role": "user", "content": turn.content, "timestamp": turn.timestamp}
        drafts = extract.from_turn(record, {}, words)
        remembered = [remember(d._replace(source=SOURCE), key.group, key.agent) for d in drafts]
        db = Db(state)
        with db.write():
            db.execute(
                "UPDATE log_extractions SET extracted_at = ?, memories = ? WHERE group_id = ?"
                " AND agent_id = ? AND session_id = ? AND turn_index = ?",
                (iso(now), len(remembered), *key, index),
            )
        found += remembered
    return found
