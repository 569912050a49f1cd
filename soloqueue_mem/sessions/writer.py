"""``log``: append events to the session logs and index them, crash-safely.

For each chunk of events: take the per-session ``flock`` of every session involved
(sorted, so two writers never deadlock), then ``BEGIN IMMEDIATE`` on memory.db; index
any JSONL lines a crashed writer left unindexed; allocate turn indexes inside the
transaction; append the JSONL records in one write; commit. If anything fails before the
commit, the appended bytes are cut off again, so the JSONL and the index agree. A turn
is acknowledged (printed) only after its commit.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime

from soloqueue_mem import faults
from soloqueue_mem.clock import iso
from soloqueue_mem.config import Config
from soloqueue_mem.db.connect import write_tx
from soloqueue_mem.errors import BadInput, TempFail
from soloqueue_mem.home import Home, ensure_private_dir
from soloqueue_mem.sessions import pending, turns
from soloqueue_mem.sessions.events import Event, SessionKey, from_record, redacted, to_record
from soloqueue_mem.sessions.logfile import SessionLog, read_lines
from soloqueue_mem.sessions.markdown import render_turns
from soloqueue_mem.sessions.offload import l1_record
from soloqueue_mem.tuples import NamedTuple

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import Any, Protocol, TypeVar

    from soloqueue_mem.db.adapter import Connection

    R = TypeVar("R")

    class TurnIndex(Protocol):
        """Where a back end indexes the turns ``log`` appends (:func:`index_and_append`):
        memory.db (:class:`MemoryDb`) or PostgreSQL's ``quarantine_logs``, on ``conn``
        (an event id logged before is looked up there by :func:`logged_among`)."""

        conn: Connection

        def first(self, key: SessionKey, log: SessionLog) -> int:
            """The session's next turn index (held until the transaction ends)."""
            ...

        def insert(self, key: SessionKey, index: int, l1: Event, timestamp: str) -> int:
            """Store the turn; its row id."""
            ...

        def appended(self, key: SessionKey, records: list[dict[str, Any]], size: int) -> None:
            """Count the session's new ``records`` (its log now ``size`` bytes long)."""
            ...


class LoggedTurn(NamedTuple):
    """What ``log`` reports for an acknowledged event."""

    id: int
    group: str
    agent: str
    session: str
    turn_index: int
    role: str
    event_id: str | None
    timestamp: str
    content: str
    offloaded: tuple[str, ...] = ()
    duplicate: bool = False
    line: int | None = None
    tool_results: list[dict[str, Any]] = []  # noqa: RUF012 - never mutated


class Rejected(NamedTuple):
    """An input line that was not logged, and why."""

    line: int | None
    reason: str


class Queued(NamedTuple):
    """An accepted event waiting for its chunk to be written."""

    line: int | None
    event: Event  # as logged: the JSONL keeps it whole
    key: SessionKey
    l1: Event  # the view the index holds (offloaded parts replaced by references)
    offloaded: list[dict[str, Any]]


Offload = Callable[[Event, SessionKey], tuple[Event, list[dict]]]  # the offloaded parts


class Flush(NamedTuple):
    """Marker from the input reader: no more input is ready, acknowledge what you have."""


Item = tuple[int | None, Event] | Rejected | Flush
# Writes one chunk and returns its acknowledged turns: another back end's writer
# (PostgreSQL) instead of memory.db's.
WriteChunk = Callable[[list[Queued]], list[LoggedTurn]]


def log_events(
    home: Home,
    conn: sqlite3.Connection | None,
    items: Iterable[Item],
    default: tuple[str, str, str | None],
    config: Config,
    now: datetime,
    chunk_size: int = 500,
    offload: Offload | None = None,
    write: WriteChunk | None = None,
    queue_when_busy: bool = False,
) -> Iterator[LoggedTurn | Rejected]:
    """Log events in chunks; yield each acknowledged turn and each rejected line.

    ``default`` is the (group, agent, session) for events that do not name their own.
    ``offload`` turns an event into its L1 view, saving oversized parts as artifacts
    (before any lock is taken: blobs are never written under the log's locks). With
    ``redact`` on, secrets are replaced first, so no file gets them. With
    ``queue_when_busy``, a chunk that finds memory.db busy past its timeout is appended
    to the logs unindexed instead (see :func:`_append_unindexed`; nothing is yielded
    for it) rather than refused.
    """
    redact = None
    if config.redact:  # its rules compile when a text needs them (see redact.py)
        from soloqueue_mem.redact import redactor

        redact = redactor(config)
    chunk: list[Queued] = []
    if write is None:
        assert conn is not None
        memory_db = conn
        write = lambda queued: _write_chunk(  # noqa: E731
            home, memory_db, queued, config, now, queue_when_busy
        )
    for item in items:
        if isinstance(item, Rejected):
            yield item
            continue
        if isinstance(item, Flush):
            yield from _flush(chunk, write)
            continue
        line, event = item
        session = event.session or default[2]
        if session is None:
            yield Rejected(
                line, "no session: pass --session, set SOLOQUEUE_SESSION or add 'session'"
            )
            continue
        key = SessionKey(event.group or default[0], event.agent or default[1], session)
        if redact is not None:
            event = redacted(event, redact)
        l1, offloaded = offload(event, key) if offload is not None else (event, [])
        chunk.append(Queued(line, event, key, l1, offloaded))
        if len(chunk) >= chunk_size:
            yield from _flush(chunk, write)
    yield from _flush(chunk, write)


def _flush(chunk: list[Queued], write: WriteChunk) -> list[LoggedTurn]:
    if not chunk:
        return []
    try:
        return write(chunk)
    finally:
        chunk.clear()


def _write_chunk(
    home: Home,
    conn: sqlite3.Connection,
    chunk: list[Queued],
    config: Config,
    now: datetime,
    queue_when_busy: bool = False,
) -> list[LoggedTurn]:
    keys = sorted({queued.key for queued in chunk})

    def write(logs: dict[SessionKey, SessionLog]) -> list[LoggedTurn]:
        sizes = {key: log.size for key, log in logs.items()}
        for key in keys:
            pending.mark(home, key)
        unindexed = False
        try:
            try:
                with write_tx(conn):
                    return index_and_append(MemoryDb(conn), chunk, logs, now)
            except TempFail:
                if not queue_when_busy:
                    raise
                _cut_back(logs, sizes)
                results, unindexed = _append_unindexed(conn, chunk, logs, now), True
                return results
        finally:
            if not unindexed:  # else the markers tell readers and writers to look
                for key in keys:
                    pending.clear(home, key)

    results = appended_in(home, keys, config.durability == "full", write)
    faults.fault("log.after_commit")
    return results


def appended_in(
    home: Home,
    keys: Iterable[SessionKey],
    fsync: bool,
    write: Callable[[dict[SessionKey, SessionLog]], R],
) -> R:
    """``write(logs)`` over the session logs of ``keys``, each locked (in sorted order:
    two writers never deadlock); what it appended is cut back if it fails."""
    logs: dict[SessionKey, SessionLog] = {}
    try:
        for key in sorted(keys):
            path = home.session_log(key.group, key.agent, key.session)
            ensure_private_dir(home.dir, os.path.dirname(path))
            logs[key] = SessionLog(path, fsync=fsync)
        sizes = {key: log.size for key, log in logs.items()}
        try:
            return write(logs)
        except BaseException:
            _cut_back(logs, sizes)
            raise
    finally:
        for log in reversed(logs.values()):  # their locks, last taken first released
            log.close()


def _cut_back(logs: dict[SessionKey, SessionLog], sizes: dict[SessionKey, int]) -> None:
    """Undo what was appended to ``logs`` since they had ``sizes``."""
    for key, log in logs.items():
        if log.size != sizes[key]:
            log.truncate(sizes[key])


def _append_unindexed(
    conn: sqlite3.Connection,
    chunk: list[Queued],
    logs: dict[SessionKey, SessionLog],
    now: datetime,
) -> list[LoggedTurn]:
    """Append ``chunk`` to the session logs without indexing it, for a writer that must
    not lose an event while memory.db is busy (a hook). The sessions' pending markers
    stay: ``trace`` reads these turns from the logs, and the session's next writer
    indexes them (:func:`catch_up`). Turn indexes follow the highest one indexed or
    appended; an event id logged before is skipped, as the writer skips it. (Reading
    memory.db needs no lock.) Nothing is acknowledged: the turns have no id yet."""
    now_iso = iso(now)
    records: dict[SessionKey, list[dict]] = {key: [] for key in logs}
    last, seen = {}, set()
    for key, log in logs.items():
        last[key] = turns.max_turn_index(conn, key)
        for entry in read_lines(log.path, turns.indexed_bytes(conn, key)):
            record = entry.record
            if record is not None and isinstance(record.get("turn_index"), int):
                last[key] = max(last[key], record["turn_index"])
                seen.add((key, record.get("event_id")))
    for _line, event, key, _l1, offloaded in chunk:
        if event.event_id is not None and (
            (key, event.event_id) in seen or logged_before(conn, key, event.event_id)
        ):
            continue
        seen.add((key, event.event_id))
        last[key] += 1
        records[key].append(_record(event, last[key], now_iso, offloaded))
    for key, new in records.items():
        if new:
            logs[key].append(new, render_turns(key, new, first=logs[key].size == 0))
    return []


def _record(event: Event, index: int, now_iso: str, offloaded: list[dict]) -> dict[str, Any]:
    """The JSONL record of ``event`` as turn ``index`` (stamped ``now_iso`` when it has
    no time of its own: most live events)."""
    timestamp = now_iso if event.timestamp is None else iso(event.timestamp)
    record = to_record(event, index, timestamp)
    if offloaded:
        record["offloaded"] = offloaded
    return record


class MemoryDb:
    """memory.db as :class:`TurnIndex`: a session's indexes follow the last one in its
    JSONL log, after indexing what a crashed writer appended (:func:`catch_up`)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def first(self, key: SessionKey, log: SessionLog) -> int:
        return catch_up(self.conn, key, log) + 1

    def insert(self, key: SessionKey, index: int, l1: Event, timestamp: str) -> int:
        return turns.insert_turn(self.conn, key, index, l1, timestamp)

    def appended(self, key: SessionKey, records: list[dict[str, Any]], size: int) -> None:
        stamps = [r["timestamp"] for r in records]
        turns.record_appends(self.conn, key, min(stamps), max(stamps), len(records), size)


def index_and_append(
    index: TurnIndex,
    chunk: list[Queued],
    logs: dict[SessionKey, SessionLog],
    now: datetime,
) -> list[LoggedTurn]:
    """Inside the caller's write transaction: give each event of ``chunk`` the next
    index of its session, store it in ``index`` (a repeated event id is reported as
    the duplicate of the turn it logged first) and append the new records to ``logs``."""
    next_index = {key: index.first(key, log) for key, log in logs.items()}
    records: dict[SessionKey, list[dict]] = {key: [] for key in logs}
    seen = _logged_earlier(index, chunk)
    results: list[LoggedTurn] = []
    now_iso = iso(now)
    for line, event, key, l1, offloaded in chunk:
        if event.event_id is not None:
            earlier = seen.get((key, event.event_id))
            if earlier is not None:
                results.append(_as_duplicate(earlier, line))
                continue
        turn_index = next_index[key]
        next_index[key] += 1
        record = _record(event, turn_index, now_iso, offloaded)
        timestamp = record["timestamp"]
        turn_id = index.insert(key, turn_index, l1, timestamp)
        records[key].append(record)
        logged = acknowledged(turn_id, key, turn_index, event, l1, timestamp, offloaded, line)
        if event.event_id is not None:
            seen[(key, event.event_id)] = logged
        results.append(logged)
    for key, new in records.items():
        if new:
            size = logs[key].append(new, render_turns(key, new, first=logs[key].size == 0))
            index.appended(key, new, size)
    faults.fault("log.before_commit")
    return results


def _logged_earlier(
    index: TurnIndex, chunk: list[Queued]
) -> dict[tuple[SessionKey, str], LoggedTurn]:
    """The turns logged before with the event ids of ``chunk``, asked once per session."""
    asked: dict[SessionKey, list[str]] = {}
    for _line, event, key, _l1, _offloaded in chunk:
        if event.event_id is not None:
            asked.setdefault(key, []).append(event.event_id)
    return {
        (key, event_id): turn
        for key, event_ids in asked.items()
        for event_id, turn in logged_among(index.conn, key, event_ids).items()
    }


def acknowledged(
    turn_id: int,
    key: SessionKey,
    index: int,
    event: Event,
    l1: Event,
    timestamp: str,
    offloaded: list[dict[str, Any]],
    line: int | None,
) -> LoggedTurn:
    """What ``log`` reports for a turn it stored."""
    return LoggedTurn(
        turn_id,
        key.group,
        key.agent,
        key.session,
        index,
        event.role,
        event.event_id,
        timestamp,
        l1.content,
        tuple(item["artifact_id"] for item in offloaded) if offloaded else (),
        line=line,
        tool_results=l1.tool_results,
    )


def logged_turn(turn: turns.Turn) -> LoggedTurn:
    """What ``log`` reports for a turn stored earlier (a duplicate event id)."""
    return LoggedTurn(
        turn.id,
        turn.group,
        turn.agent,
        turn.session,
        turn.turn_index,
        turn.role,
        turn.event_id,
        turn.timestamp,
        turn.content,
        tool_results=turn.tool_results,
    )


def catch_up(conn: sqlite3.Connection, key: SessionKey, log: SessionLog) -> int:
    """Index JSONL records a crashed writer appended but never indexed.

    Returns the session's last turn index (-1 when empty).
    """
    last = turns.max_turn_index(conn, key)
    indexed = turns.indexed_bytes(conn, key)
    if log.size <= indexed:
        return last
    # ``last`` is read as the loop moves on: each record must pass the last one indexed.
    newer = lambda index: index > last  # noqa: E731, B023
    for index in _index_records(conn, key, log, indexed, newer):
        last = index
    return last


def reindex_log(conn: sqlite3.Connection, key: SessionKey, log: SessionLog) -> int:
    """Index every record of the session's log that the index lacks, wherever it is in
    the log (``verify --repair``); return how many were added."""
    indexed = {turn.turn_index for turn in turns.session_turns(conn, key)}
    return len(list(_index_records(conn, key, log, 0, lambda index: index not in indexed)))


def _index_records(
    conn: sqlite3.Connection,
    key: SessionKey,
    log: SessionLog,
    offset: int,
    missing: Callable[[int], bool],
) -> Iterator[int]:
    """Index the log's records from byte ``offset`` whose turn index ``missing`` accepts
    (asked in log order, after each yielded index), yielding each index added; once
    exhausted, record the appends and that the index now covers the whole log."""
    added: list[str] = []
    for entry in read_lines(log.path, offset):
        record = entry.record
        if record is None or not isinstance(record.get("turn_index"), int):
            continue
        if missing(record["turn_index"]):
            try:
                event = from_record(l1_record(record))
            except (BadInput, KeyError):
                continue
            turns.insert_turn(conn, key, record["turn_index"], event, record["timestamp"])
            added.append(record["timestamp"])
            yield record["turn_index"]
    if added:
        turns.record_appends(conn, key, min(added), max(added), len(added), log.size)
    else:
        turns.set_indexed_bytes(conn, key, log.size)


def logged_before(conn: Connection, key: SessionKey, event_id: str) -> LoggedTurn | None:
    """What ``log`` reported for the session's turn logged with ``event_id``, if any."""
    turn = turns.find_by_event_id(conn, key, event_id)
    return None if turn is None else logged_turn(turn)


def logged_among(conn: Connection, key: SessionKey, event_ids: list[str]) -> dict[str, LoggedTurn]:
    """:func:`logged_before` of many event ids, by event id, in one query."""
    found = turns.find_by_event_ids(conn, key, event_ids)
    return {event_id: logged_turn(turn) for event_id, turn in found.items()}


def _as_duplicate(turn: LoggedTurn, line: int | None) -> LoggedTurn:
    return turn._replace(duplicate=True, line=line)


def put_back_session(
    home: Home,
    conn: sqlite3.Connection,
    key: SessionKey,
    records: list[dict[str, Any]],
    config: Config,
    states: list[tuple[bool, str | None]],
    ended_at: str | None,
) -> str:
    """Write an exported session's JSONL records as they were and index them, with
    each turn's extraction state (``extracted``, episode id) and when the session
    ended, in one transaction.

    Returns ``added``; ``existing`` when the session's log already holds exactly
    these records, all indexed; ``conflict`` when it holds others (nothing is written).
    A log holding the first of these records and no others (an import killed after
    writing them, or one of a dump cut short) is completed: what the index lacks is
    indexed and the rest appended (``added``), so importing again resumes. Raises
    BadInput for a record that is not one of our log's.
    """
    events = [_checked_record(record) for record in records]

    def write(logs: dict[SessionKey, SessionLog]) -> str:
        log = logs[key]
        held = [line.record for line in read_lines(log.path)] if log.size > 0 else []
        if held != records[: len(held)]:
            return "conflict"
        rest = records[len(held) :]
        if not rest and turns.indexed_bytes(conn, key) >= log.size:
            return "existing"
        pending.mark(home, key)
        try:
            with write_tx(conn):
                before = turns.max_turn_index(conn, key)
                caught_up = catch_up(conn, key, log) != before
                for record, event in zip(rest, events[len(held) :], strict=True):
                    turns.insert_turn(conn, key, record["turn_index"], event, record["timestamp"])
                if rest:
                    end = log.append(rest, render_turns(key, rest, first=not held))
                    stamps = [r["timestamp"] for r in rest]
                    turns.record_appends(conn, key, min(stamps), max(stamps), len(rest), end)
                _restore_states(conn, key, records, states, ended_at)
                faults.fault("import.before_commit")
        finally:
            pending.clear(home, key)
        return "added" if rest or caught_up else "existing"

    return appended_in(home, [key], config.durability == "full", write)


def _restore_states(
    conn: sqlite3.Connection,
    key: SessionKey,
    records: list[dict[str, Any]],
    states: list[tuple[bool, str | None]],
    ended_at: str | None,
) -> None:
    for record, (extracted, episode) in zip(records, states, strict=True):
        if extracted or episode is not None:
            turns.set_turn_state(conn, key, record["turn_index"], extracted, episode)
    if ended_at is not None:
        turns.mark_ended(conn, key, ended_at)


def _checked_record(record: Any) -> Event:
    """The L1 event of one of our JSONL records; BadInput when it is not one."""
    index = record.get("turn_index") if isinstance(record, dict) else None
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise BadInput("a session record needs a 'turn_index' (a whole number ≥ 0)")
    try:
        return from_record(l1_record(record))
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise BadInput(f"not a session record: {exc}") from None
