"""``export``/``import`` on PostgreSQL: the dump records of the tables the database
holds, and putting them back.

The database says which turns exist; a turn's record is the one in this host's JSONL
log when that log holds it (the complete record: offloaded output's original text,
``openai_message``, ``offloaded``) and matches the row, else it is rebuilt from the row
(the L1 view the database indexes: another host's turn). The export reads one
REPEATABLE READ snapshot, through server-side cursors, so its memory
stays bounded and hosts may keep writing.

:mod:`soloqueue_mem.ops.table_records` gives the records of the tables memory.db holds
alike, the vectors' among them, and :mod:`soloqueue_mem.ops.import_dump` puts them back
with this back end's full-text indexes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from soloqueue_mem import clock
from soloqueue_mem.db.adapter import Db
from soloqueue_mem.db.ids import scope_where
from soloqueue_mem.home import Home
from soloqueue_mem.ops.dump_format import session_records
from soloqueue_mem.ops.table_records import table_records, vector_records
from soloqueue_mem.sessions.events import SessionKey, index_body
from soloqueue_mem.sessions.logfile import SessionLog, read_lines
from soloqueue_mem.sessions.markdown import render_turns
from soloqueue_mem.sessions.offload import l1_record
from soloqueue_mem.sessions.turns import _TURN_COLUMNS as TURN_COLUMNS
from soloqueue_mem.sessions.turns import _turn as turn_from_row
from soloqueue_mem.sessions.turns import stored_json
from soloqueue_mem.sessions.writer import _checked_record as checked_record
from soloqueue_mem.sessions.writer import appended_in
from soloqueue_mem.storage.postgres.episodes import INDEXES
from soloqueue_mem.storage.postgres.sessions import record as turn_record
from soloqueue_mem.storage.postgres.text import document
from soloqueue_mem.storage.postgres.turns import advance_session, lock_session
from soloqueue_mem.text.cjk import estimate_tokens

if TYPE_CHECKING:
    import psycopg

    from soloqueue_mem.ops.export import Scope

_COLUMNS = f"{TURN_COLUMNS}, extracted, episode_id"


@contextmanager
def snapshot(conn: psycopg.Connection) -> Iterator[None]:
    """One read-only REPEATABLE READ transaction: the export sees one moment."""
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield


def records(home: Home, conn: psycopg.Connection, scope: Scope) -> Iterator[dict[str, Any]]:
    """The dump records of the database's tables, in the dump's order."""
    with snapshot(conn):
        yield from _sessions(home, conn, scope)
        yield from table_records(conn, scope, INDEXES)
        yield from vector_records(conn, scope)


def _sessions(home: Home, conn: psycopg.Connection, scope: Scope) -> Iterator[dict[str, Any]]:
    db = Db(conn)
    where, params = scope_where(scope.group, scope.agent)
    order = ", ".join(db.bytewise(column) for column in ("group_id", "agent_id", "session_id"))
    for group, agent, session, ended_at in db.stream(
        f"SELECT group_id, agent_id, session_id, ended_at FROM sessions WHERE {where}"  # noqa: S608
        f" ORDER BY {order}",
        params,
    ):
        key = SessionKey(group, agent, session)
        yield from session_records(key, ended_at, _turn_records(home, conn, key))


def _turn_records(
    home: Home, conn: psycopg.Connection, key: SessionKey
) -> Iterator[tuple[dict[str, Any], tuple[bool, str | None]]]:
    """The session's turns in index order, each as this host logged it where it did,
    with its extraction state (extracted, episode id).
    A host's log is in index order; it may hold a turn a killed writer appended but
    never committed (another turn then holds that index): only a match is taken."""
    local = _local_records(home.session_log(*key))
    pending = next(local, None)
    for row in _rows(conn, key):
        chosen = rebuilt = _row_record(row)
        while pending is not None and pending["turn_index"] <= rebuilt["turn_index"]:
            if chosen is rebuilt and pending["turn_index"] == rebuilt["turn_index"]:
                chosen = pending if _view(pending) == rebuilt else rebuilt
            pending = next(local, None)
        yield chosen, (row[-2], row[-1])


def _local_records(path: Any) -> Iterator[dict[str, Any]]:
    for line in read_lines(path):
        index = line.record.get("turn_index") if line.record is not None else None
        if isinstance(index, int):
            yield line.record  # type: ignore[misc]  # checked above


def _rows(conn: psycopg.Connection, key: SessionKey) -> Iterator[tuple[Any, ...]]:
    """The session's turn rows in index order, a page at a time (inside the caller's
    transaction)."""
    return Db(conn).stream(
        f"SELECT {_COLUMNS} FROM quarantine_logs"  # noqa: S608 - constant columns
        " WHERE group_id = ? AND agent_id = ? AND session_id = ? ORDER BY turn_index",
        tuple(key),
    )


def _row_record(row: tuple[Any, ...]) -> dict[str, Any]:
    """A turn row (with its extraction state) as a JSONL record."""
    return turn_record(turn_from_row(row[:-2]))


def _view(turn: dict[str, Any]) -> dict[str, Any]:
    """What the database holds of a JSONL record: its L1 view, without the fields the
    database does not keep."""
    view = l1_record(turn)
    return {k: v for k, v in view.items() if k not in ("openai_message", "offloaded")}


# -- import --------------------------------------------------------------------------


def put_back_session(
    home: Home,
    conn: psycopg.Connection,
    key: SessionKey,
    turns: list[dict[str, Any]],
    states: list[tuple[bool, str | None]],
    ended_at: str | None,
    fsync: bool,
) -> str:
    """Write an exported session's turns at their indexes, and append them to this
    host's log: ``added``; ``existing`` when the database holds exactly these turns;
    ``conflict`` when it holds others (nothing is written). The session's row is
    locked as ``log`` locks it, so writers elsewhere continue after the last index."""
    events = [checked_record(turn) for turn in turns]

    def write(logs: dict[SessionKey, SessionLog]) -> str:
        first = logs[key].size == 0
        with conn.transaction():
            outcome = _put_back_turns(conn, key, turns, states, events, ended_at)
            if outcome == "added" and turns:
                logs[key].append(turns, render_turns(key, turns, first=first))
        return outcome

    return appended_in(home, [key], fsync, write)


def _put_back_turns(
    conn: psycopg.Connection,
    key: SessionKey,
    turns: list[dict[str, Any]],
    states: list[tuple[bool, str | None]],
    events: list[Any],
    ended_at: str | None,
) -> str:
    stamps = [turn["timestamp"] for turn in turns] or [ended_at or clock.iso(clock.now())]
    if lock_session(conn, key, min(stamps)):  # the session holds turns already
        held = [_row_record(row) for row in _rows(conn, key)]
        if held:
            return "existing" if held == [_view(turn) for turn in turns] else "conflict"
    rows, documents = [], []
    for turn, (extracted, episode), event in zip(turns, states, events, strict=True):
        body = index_body(event)
        calls, results, metadata = stored_json(event)
        rows.append((
            *key, turn["turn_index"], event.role, event.content, calls, results,
            turn["timestamp"], event.event_id, metadata, estimate_tokens(body), extracted, episode,
        ))  # fmt: skip
        documents.append(document(body))
    insert_turns(conn, rows, documents)
    top = max((turn["turn_index"] for turn in turns), default=-1)
    advance_session(conn, key, len(turns), top, min(stamps), max(stamps), ended_at)
    return "added"


_INSERT_TURNS = (
    "INSERT INTO quarantine_logs (group_id, agent_id, session_id, turn_index, role, content,"
    " tool_calls, tool_results, timestamp, event_id, metadata_json, token_estimate, extracted,"
    " episode_id, search) SELECT g, a, s, i, r, c, tc, tr, ts, e, m, te, x, ep,"
    " to_tsvector('simple', b) FROM unnest(%s::text[], %s::text[], %s::text[], %s::int4[],"
    " %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[],"
    " %s::int4[], %s::bool[], %s::text[], %s::text[])"
    " AS u(g, a, s, i, r, c, tc, tr, ts, e, m, te, x, ep, b)"
    " ON CONFLICT DO NOTHING RETURNING group_id, agent_id, session_id, turn_index, timestamp"
)


def insert_turns(
    conn: psycopg.Connection, rows: list[tuple[Any, ...]], documents: list[str]
) -> list[tuple[Any, ...]]:
    """Insert the turn rows the database lacks — each its session key, turn_index, role,
    content, tool_calls, tool_results, timestamp, event_id, metadata_json,
    token_estimate, extracted and episode_id — with their search ``documents``, in one
    statement; each inserted turn's session key, turn index and timestamp."""
    if not rows:
        return []
    columns = [list(column) for column in zip(*rows, strict=True)]
    columns[-2] = [bool(extracted) for extracted in columns[-2]]  # SQLite's 0 and 1
    return list(conn.execute(_INSERT_TURNS, [*columns, documents]).fetchall())
