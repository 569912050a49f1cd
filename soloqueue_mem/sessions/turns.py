"""All SQL for ``conversation_turns``, its FTS index and the ``sessions`` table.

Rows become :class:`Turn` values here; ``sqlite3.Row`` never leaves this module.
Scope (group/agent/session) is always a SQL ``WHERE`` on the turns table, never an
FTS column filter, so a query cannot reach another agent's turns.
"""

from __future__ import annotations

import sqlite3

from soloqueue_mem import jsonio
from soloqueue_mem.db.adapter import Connection, Db
from soloqueue_mem.sessions.events import Event, SessionKey, index_body
from soloqueue_mem.text.cjk import estimate_tokens, index_form, index_forms
from soloqueue_mem.tuples import Any, NamedTuple


class Turn(NamedTuple):
    id: int
    group: str
    agent: str
    session: str
    turn_index: int
    role: str
    content: str
    tool_calls: list[dict[str, Any]]
    tool_results: list[dict[str, Any]]
    timestamp: str
    token_estimate: int | None
    event_id: str | None
    metadata: dict[str, Any] | None


class SessionRow(NamedTuple):
    group: str
    agent: str
    session: str
    started_at: str
    last_turn_at: str
    turn_count: int
    jsonl_bytes: int
    ended_at: str | None


_TURN_COLUMNS = (
    "id, group_id, agent_id, session_id, turn_index, role, content, tool_calls, "
    "tool_results, timestamp, token_estimate, event_id, metadata_json"
)


def _turn(row: tuple[Any, ...]) -> Turn:
    return Turn(
        id=row[0],
        group=row[1],
        agent=row[2],
        session=row[3],
        turn_index=row[4],
        role=row[5],
        content=row[6],
        tool_calls=jsonio.loads(row[7]) if row[7] else [],
        tool_results=jsonio.loads(row[8]) if row[8] else [],
        timestamp=row[9],
        token_estimate=row[10],
        event_id=row[11],
        metadata=jsonio.loads(row[12]) if row[12] else None,
    )


def turn_name(turn: Turn) -> str:
    """How a search hit names a turn: ``group/agent/session#index``."""
    return f"{turn.group}/{turn.agent}/{turn.session}#{turn.turn_index}"


def max_turn_index(conn: sqlite3.Connection, key: SessionKey) -> int:
    """The highest indexed turn of the session, -1 if it has none."""
    row = conn.execute(
        "SELECT MAX(turn_index) FROM conversation_turns"
        " WHERE group_id = ? AND agent_id = ? AND session_id = ?",
        (key.group, key.agent, key.session),
    ).fetchone()
    return -1 if row[0] is None else int(row[0])


def find_by_event_id(conn: Connection, key: SessionKey, event_id: str) -> Turn | None:
    return _one_turn(conn, key, "event_id", event_id)


def find_by_event_ids(conn: Connection, key: SessionKey, event_ids: list[str]) -> dict[str, Turn]:
    """The session's turns logged with any of ``event_ids``, by event id (one query per
    500 ids: a batch's chunk asks once, not once per event)."""
    db = Db(conn)
    found: dict[str, Turn] = {}
    for start in range(0, len(event_ids), 500):
        part = event_ids[start : start + 500]
        rows = db.fetchall(
            f"SELECT {_TURN_COLUMNS} FROM {db.turns}"  # noqa: S608 - constant names
            " WHERE group_id = ? AND agent_id = ? AND session_id = ?"
            f" AND event_id IN ({', '.join('?' * len(part))})",
            (key.group, key.agent, key.session, *part),
        )
        found.update((row[11], _turn(row)) for row in rows)  # row[11]: event_id
    return found


def turn_at(conn: Connection, key: SessionKey, turn_index: int) -> Turn | None:
    return _one_turn(conn, key, "turn_index", turn_index)


def _one_turn(conn: Connection, key: SessionKey, column: str, value: str | int) -> Turn | None:
    """The session's turn whose ``column`` (a constant name) holds ``value``."""
    db = Db(conn)
    row = db.fetchone(
        f"SELECT {_TURN_COLUMNS} FROM {db.turns}"  # noqa: S608 - constant names
        f" WHERE group_id = ? AND agent_id = ? AND session_id = ? AND {column} = ?",
        (key.group, key.agent, key.session, value),
    )
    return _turn(row) if row else None


# A new turn's columns, as :func:`new_turn` gives their values (each back end's index
# column follows).
NEW_TURN_COLUMNS = (
    "group_id, agent_id, session_id, turn_index, role, content, tool_calls, tool_results,"
    " timestamp, token_estimate, event_id, metadata_json"
)
_INSERT_TURN_SQL = (
    f"INSERT INTO conversation_turns ({NEW_TURN_COLUMNS}, has_tool_calls)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def new_turn(
    key: SessionKey, turn_index: int, event: Event, timestamp: str, body: str
) -> tuple[Any, ...]:
    """The values of :data:`NEW_TURN_COLUMNS` for ``event`` logged as ``turn_index``
    (``body``: its searchable text, :func:`~soloqueue_mem.sessions.events.index_body`)."""
    calls, results, metadata = stored_json(event)
    return (*key, turn_index, event.role, event.content, calls, results, timestamp,
            estimate_tokens(body), event.event_id, metadata)  # fmt: skip


def stored_json(event: Event) -> tuple[str | None, str | None, str | None]:
    """``event``'s tool calls, tool results and metadata as a turn's row holds them
    (``tool_calls``, ``tool_results``, ``metadata_json``): compact JSON, or NULL when
    it has none."""
    return (
        jsonio.dumps_compact(event.tool_calls) if event.tool_calls else None,
        jsonio.dumps_compact(event.tool_results) if event.tool_results else None,
        jsonio.dumps_compact(event.metadata) if event.metadata is not None else None,
    )


def stored_body(role: str, content: str, tool_calls: str | None, tool_results: str | None) -> str:
    """A stored turn's searchable text, as ``log`` indexes it (its JSON columns parsed)."""
    calls = jsonio.loads(tool_calls) if tool_calls else []
    results = jsonio.loads(tool_results) if tool_results else []
    return index_body(Event(role, content, calls, results))


def insert_turn(
    conn: sqlite3.Connection, key: SessionKey, turn_index: int, event: Event, timestamp: str
) -> int:
    """Insert one turn and its full-text entry; return the row id."""
    body = index_body(event)
    cursor = conn.execute(
        _INSERT_TURN_SQL,
        (*new_turn(key, turn_index, event, timestamp, body), int(bool(event.tool_calls))),
    )
    turn_id = int(cursor.lastrowid or 0)
    conn.execute(
        "INSERT INTO conversation_turns_fts (rowid, body) VALUES (?, ?)",
        (turn_id, index_form(body)),
    )
    return turn_id


_UPSERT_SESSION_SQL = """
INSERT INTO sessions (group_id, agent_id, session_id, started_at, last_turn_at,
                      turn_count, jsonl_bytes)
VALUES (:group, :agent, :session, :first, :last, :added, :bytes)
ON CONFLICT (group_id, agent_id, session_id) DO UPDATE SET
    started_at = MIN(started_at, :first),
    last_turn_at = MAX(last_turn_at, :last),
    turn_count = turn_count + :added,
    jsonl_bytes = :bytes
"""


def record_appends(
    conn: sqlite3.Connection, key: SessionKey, first: str, last: str, added: int, jsonl_bytes: int
) -> None:
    """Count ``added`` turns and remember how far the JSONL has been indexed."""
    conn.execute(
        _UPSERT_SESSION_SQL,
        {
            "group": key.group,
            "agent": key.agent,
            "session": key.session,
            "first": first,
            "last": last,
            "added": added,
            "bytes": jsonl_bytes,
        },
    )


def set_indexed_bytes(conn: sqlite3.Connection, key: SessionKey, jsonl_bytes: int) -> None:
    conn.execute(
        "UPDATE sessions SET jsonl_bytes = ?"
        " WHERE group_id = ? AND agent_id = ? AND session_id = ?",
        (jsonl_bytes, key.group, key.agent, key.session),
    )


def indexed_bytes(conn: sqlite3.Connection, key: SessionKey) -> int:
    row = conn.execute(
        "SELECT jsonl_bytes FROM sessions WHERE group_id = ? AND agent_id = ? AND session_id = ?",
        (key.group, key.agent, key.session),
    ).fetchone()
    return int(row[0]) if row else 0


_SESSION_COLUMNS = (
    "group_id, agent_id, session_id, started_at, last_turn_at, turn_count, jsonl_bytes, ended_at"
)


def get_session(conn: Connection, key: SessionKey) -> SessionRow | None:
    db = Db(conn)
    row = db.fetchone(
        f"SELECT {_session_columns(db)} FROM sessions"  # noqa: S608 - constant columns
        " WHERE group_id = ? AND agent_id = ? AND session_id = ?",
        key,
    )
    return SessionRow(*row) if row else None


def list_sessions(
    conn: Connection, group: str | None, agent: str | None, limit: int
) -> list[SessionRow]:
    """Sessions, most recently active first, optionally within a group/agent."""
    db = Db(conn)
    rows = db.fetchall(
        f"SELECT {_session_columns(db)} FROM sessions"  # noqa: S608 - constant columns
        " WHERE (CAST(:group AS TEXT) IS NULL OR group_id = :group)"
        " AND (CAST(:agent AS TEXT) IS NULL OR agent_id = :agent)"
        " ORDER BY last_turn_at DESC, group_id, agent_id, session_id LIMIT :limit",
        {"group": group, "agent": agent, "limit": limit},
    )
    return [SessionRow(*row) for row in rows]


def _session_columns(db: Db) -> str:
    """A session row's columns; ``jsonl_bytes`` is 0 on PostgreSQL (the logs are each
    host's, not the database's)."""
    return _SESSION_COLUMNS.replace("jsonl_bytes", "0") if db.postgres else _SESSION_COLUMNS


def mark_ended(conn: Connection, key: SessionKey, ended_at: str) -> bool:
    cursor = Db(conn).execute(
        "UPDATE sessions SET ended_at = ? WHERE group_id = ? AND agent_id = ? AND session_id = ?",
        (ended_at, *key),
    )
    return cursor.rowcount > 0


def indexed_turn_indexes(conn: sqlite3.Connection) -> dict[SessionKey, set[int]]:
    """Every session's indexed turn indexes (for verify)."""
    found: dict[SessionKey, set[int]] = {}
    rows = conn.execute("SELECT group_id, agent_id, session_id, turn_index FROM conversation_turns")
    for group, agent, session, index in rows:
        found.setdefault(SessionKey(group, agent, session), set()).add(index)
    return found


REBUILD_BATCH = 10_000  # turns read, put in the index form and inserted at a time


def rebuild_fts(conn: sqlite3.Connection) -> int:
    """Re-create the full-text index from the turns table (inside the caller's write
    transaction), in batches of ``REBUILD_BATCH`` turns so memory stays bounded; return
    the number of turns indexed. Reads only the indexed columns, so it also serves the
    migration that moved the index to bigrams, whatever columns later versions add."""
    conn.execute(
        "INSERT INTO conversation_turns_fts (conversation_turns_fts) VALUES ('delete-all')"
    )
    count = last = 0
    while rows := conn.execute(
        "SELECT id, role, content, tool_calls, tool_results FROM conversation_turns"
        " WHERE id > ? ORDER BY id LIMIT ?",
        (last, REBUILD_BATCH),
    ).fetchall():
        bodies = [stored_body(*row[1:]) for row in rows]
        conn.executemany(
            "INSERT INTO conversation_turns_fts (rowid, body) VALUES (?, ?)",
            zip([row[0] for row in rows], index_forms(bodies), strict=True),
        )
        count += len(rows)
        last = rows[-1][0]
    return count


def session_turns(conn: Connection, key: SessionKey) -> list[Turn]:
    """Every turn of the session, in turn order."""
    db = Db(conn)
    rows = db.fetchall(
        f"SELECT {_TURN_COLUMNS} FROM {db.turns}"  # noqa: S608 - constant names
        " WHERE group_id = ? AND agent_id = ? AND session_id = ? ORDER BY turn_index",
        (key.group, key.agent, key.session),
    )
    return [_turn(row) for row in rows]


def session_page(conn: Connection, key: SessionKey, after: int, limit: int) -> list[Turn]:
    """Up to ``limit`` turns of a session past turn ``after``: a page that costs the
    same at any depth (the (group, agent, session, turn_index) key, no OFFSET)."""
    db = Db(conn)
    rows = db.fetchall(
        f"SELECT {_TURN_COLUMNS} FROM {db.turns}"  # noqa: S608 - constant names
        " WHERE group_id = ? AND agent_id = ? AND session_id = ? AND turn_index > ?"
        " ORDER BY turn_index LIMIT ?",
        (key.group, key.agent, key.session, after, limit),
    )
    return [_turn(row) for row in rows]


# Each filter of a search scope, as a fixed SQL fragment: only the fragments of the
# filters in use are joined, so SQLite can use the indexes (a "(:x IS NULL OR ...)"
# form cannot), and no SQL text ever comes from user input. Searches use CROSS JOIN to
# keep the FTS index as the outer loop: driven from a session's rows instead, SQLite
# re-runs the MATCH once per row (measured: 225 ms instead of a few ms).
_FILTERS = {
    "group": "t.group_id = :group",
    "agent": "t.agent_id = :agent",
    "session": "t.session_id = :session",
    "since": "t.timestamp >= :since",
    "role": "t.role = :role",
    "until": "t.timestamp < :until",
}
_NO_ROW = 1 << 62


class Scope(NamedTuple):
    """Which turns a search or a listing may return: the filters (None = any), and the
    row-id range the turns in scope occupy (narrowed by :func:`bounded`; callers leave it)."""

    group: str | None = None
    agent: str | None = None
    session: str | None = None
    since: str | None = None  # at or after this ISO time
    role: str | None = None
    lo: int = 0
    hi: int = _NO_ROW
    until: str | None = None  # before this ISO time

    def where(self) -> str:
        used = [_FILTERS[name] for name in _FILTERS if getattr(self, name) is not None]
        return " AND ".join(used) or "TRUE"

    def is_filtered(self) -> bool:
        return any(getattr(self, name) is not None for name in _FILTERS)

    def params(self, **extra: Any) -> dict[str, Any]:
        return {**self._asdict(), **extra}


def bounded(conn: sqlite3.Connection, scope: Scope) -> Scope | None:
    """The scope with the row-id range its turns occupy; None when it is empty.

    Trigger: a session or ``since`` is given. Why: FTS5 walks a term's matches across
    the whole store unless told a row-id range; one session is a short stretch of it,
    and every turn since a time has a row id at least that of the first such turn
    (found through the timestamp index, whatever order turns were logged in).
    Outcome: such searches cost what the range holds, not the store.
    """
    if scope.since is not None:
        first = conn.execute(
            # Without the hint SQLite walks the row ids up from 1 looking for the first
            # recent turn (~0.4 s on a million turns); the index visits only the window.
            "SELECT MIN(id) FROM conversation_turns INDEXED BY idx_turns_timestamp"
            " WHERE timestamp >= ?",
            (scope.since,),
        ).fetchone()[0]
        if first is None:
            return None
        scope = scope._replace(lo=max(scope.lo, first))
    if scope.session is None:
        return scope
    where = " AND ".join(
        _FILTERS[name] for name in ("group", "agent", "session") if getattr(scope, name) is not None
    )
    lo = conn.execute(
        f"SELECT t.id FROM conversation_turns AS t WHERE {where} ORDER BY t.id LIMIT 1",  # noqa: S608
        scope.params(),
    ).fetchone()
    if lo is None:
        return None
    hi = conn.execute(
        f"SELECT t.id FROM conversation_turns AS t WHERE {where} ORDER BY t.id DESC LIMIT 1",  # noqa: S608
        scope.params(),
    ).fetchone()
    return scope._replace(lo=max(scope.lo, lo[0]), hi=hi[0])


def nth_newest_match(conn: sqlite3.Connection, match: str, n: int, scope: Scope) -> int | None:
    """Row id of the ``n``-th newest turn in scope matching ``match``; None if fewer.

    Walks the index newest-first without ranking, so it costs O(n), not O(matches).
    """
    join = "CROSS JOIN conversation_turns AS t ON t.id = f.rowid" if scope.is_filtered() else ""
    sql = (
        f"SELECT f.rowid FROM conversation_turns_fts AS f {join}"  # noqa: S608 - fixed fragments
        f" WHERE conversation_turns_fts MATCH :match AND f.rowid BETWEEN :lo AND :hi"
        f" AND {scope.where()} ORDER BY f.rowid DESC LIMIT 1 OFFSET :offset"
    )
    row = conn.execute(sql, scope.params(match=match, offset=n - 1)).fetchone()
    return None if row is None else int(row[0])


def matching_ids(conn: sqlite3.Connection, match: str, scope: Scope, min_rowid: int) -> list[int]:
    """Ids of the turns in scope at or after ``min_rowid`` that match, unranked."""
    join = "CROSS JOIN conversation_turns AS t ON t.id = f.rowid" if scope.is_filtered() else ""
    sql = (
        f"SELECT f.rowid FROM conversation_turns_fts AS f {join}"  # noqa: S608 - fixed fragments
        f" WHERE conversation_turns_fts MATCH :match AND f.rowid BETWEEN :lo AND :hi"
        f" AND f.rowid >= :min_rowid AND {scope.where()}"
    )
    return [row[0] for row in conn.execute(sql, scope.params(match=match, min_rowid=min_rowid))]


def search_texts(conn: sqlite3.Connection, ids: list[int]) -> dict[int, str]:
    """The searchable text (content, tool inputs and results), lower-cased, by id."""
    texts: dict[int, str] = {}
    for start in range(0, len(ids), 900):
        chunk = ids[start : start + 900]
        marks = ",".join("?" * len(chunk))
        rows = conn.execute(
            "SELECT id, content || ' ' || COALESCE(tool_calls, '') || ' '"
            " || COALESCE(tool_results, '')"
            f" FROM conversation_turns WHERE id IN ({marks})",  # noqa: S608 - placeholders only
            chunk,
        )
        texts.update((turn_id, text.lower()) for turn_id, text in rows)
    return texts


def turns_by_id(conn: Connection, ids: list[int]) -> dict[int, Turn]:
    db = Db(conn)
    rows = db.fetchall(
        f"SELECT {_TURN_COLUMNS} FROM {db.turns} WHERE {db.among('id')}",  # noqa: S608
        (db.ids(ids),),
    )
    return {row[0]: _turn(row) for row in rows}


_T_COLUMNS = ", ".join("t." + column.strip() for column in _TURN_COLUMNS.split(","))


def search_turns(
    conn: sqlite3.Connection, match: str, scope: Scope, limit: int
) -> list[tuple[Turn, float]]:
    """BM25-ranked turns for an FTS5 expression built by :mod:`soloqueue_mem.text.fts`."""
    sql = (
        f"SELECT {_T_COLUMNS}, -hits.score FROM ("  # noqa: S608 - fixed fragments
        " SELECT rowid, bm25(conversation_turns_fts) AS score FROM conversation_turns_fts"
        " WHERE conversation_turns_fts MATCH :match AND rowid BETWEEN :lo AND :hi"
        ") AS hits CROSS JOIN conversation_turns AS t ON t.id = hits.rowid"
        f" WHERE {scope.where()} ORDER BY hits.score, t.id DESC LIMIT :limit"
    )
    rows = conn.execute(sql, scope.params(match=match, limit=limit))
    return [(_turn(row[:-1]), float(row[-1])) for row in rows]


def newest_turns(conn: Connection, scope: Scope, limit: int) -> list[Turn]:
    """The ``limit`` newest turns in scope (``scope.since`` bounds the walk: the
    timestamp index is read newest first, so only that window is visited): the
    working-memory window (seed 004's Redis list, LPUSH + LTRIM + a 24 h TTL), and with
    ``scope.until`` a time window's newest turns (recall's ``when``)."""
    db = Db(conn)
    rows = db.fetchall(
        f"SELECT {_TURN_COLUMNS} FROM {db.turns} AS t"  # noqa: S608 - fixed fragments
        f" WHERE {scope.where()} ORDER BY t.timestamp DESC, t.id DESC LIMIT :limit",
        scope.params(limit=limit),
    )
    return [_turn(row) for row in rows]


def unextracted_indexes(conn: Connection, key: SessionKey, upto: int | None = None) -> set[int]:
    """Turn indexes of the session (up to ``upto``) whose memories are not yet extracted."""
    db = Db(conn)
    below = "" if upto is None else " AND turn_index <= ?"
    rows = db.fetchall(
        f"SELECT turn_index FROM {db.turns} WHERE group_id = ? AND agent_id = ?"  # noqa: S608
        f" AND session_id = ? AND extracted = FALSE{below}",
        (*key, *(() if upto is None else (upto,))),
    )
    return {row[0] for row in rows}


def mark_extracted(conn: Connection, key: SessionKey, upto: int, episode_id: str | None) -> int:
    """Mark the session's turns up to ``upto`` extracted (and in ``episode_id``)."""
    db = Db(conn)
    cursor = db.execute(
        f"UPDATE {db.turns} SET extracted = TRUE,"  # noqa: S608 - the table's name
        " episode_id = COALESCE(?, episode_id) WHERE group_id = ? AND agent_id = ?"
        " AND session_id = ? AND turn_index <= ? AND extracted = FALSE",
        (episode_id, *key, upto),
    )
    return int(cursor.rowcount)


def sessions_with_unextracted(conn: Connection) -> list[SessionRow]:
    """Sessions holding turns whose memories are not extracted yet (consolidation)."""
    db = Db(conn)
    rows = db.fetchall(
        f"SELECT {_session_columns(db)} FROM sessions JOIN ("  # noqa: S608 - constant names
        f" SELECT DISTINCT group_id, agent_id, session_id FROM {db.turns}"
        " WHERE extracted = FALSE) AS t USING (group_id, agent_id, session_id)"
        " ORDER BY last_turn_at, group_id, agent_id, session_id"
    )
    return [SessionRow(*row) for row in rows]


_NEIGHBOURHOOD_SQL = """
WITH around AS (
    SELECT json_extract(value, '$[0]') AS group_id, json_extract(value, '$[1]') AS agent_id,
           json_extract(value, '$[2]') AS session_id, json_extract(value, '$[3]') AS turn_index
    FROM json_each(:around)
)
SELECT {columns} FROM around AS a CROSS JOIN conversation_turns AS t
    ON t.group_id = a.group_id AND t.agent_id = a.agent_id AND t.session_id = a.session_id
    AND t.turn_index BETWEEN a.turn_index - :reach AND a.turn_index + :reach
WHERE {where}
"""


def session_neighbourhood(
    conn: sqlite3.Connection, around: list[Turn], reach: int, scope: Scope
) -> list[Turn]:
    """The turns in scope at most ``reach`` turns before or after one of ``around`` in its
    session (``around`` included), in one query: each turn costs one range of the
    (group, agent, session, turn index) unique index, whatever the size of the store."""
    if not around:
        return []
    keys = jsonio.dumps_compact([[t.group, t.agent, t.session, t.turn_index] for t in around])
    sql = _NEIGHBOURHOOD_SQL.format(columns=_T_COLUMNS, where=scope.where())  # fixed fragments
    rows = conn.execute(sql, scope.params(around=keys, reach=reach))
    return list({row[0]: _turn(row) for row in rows}.values())


def matching_among(candidates: list[Turn], matches: list[str]) -> list[set[int]]:
    """For each FTS5 expression of ``matches``, the ids of the ``candidates`` it matches,
    tokenized exactly as the index does (see :func:`soloqueue_mem.text.fts.holders`)."""
    bodies = [
        index_body(Event(t.role, t.content, t.tool_calls, t.tool_results)) for t in candidates
    ]
    ids = [t.id for t in candidates]
    from soloqueue_mem.text.fts import holders  # the query modules: not on log's path

    return [{ids[n] for n in held} for held in holders(bodies, matches)]


def turns_after(conn: Connection, after_id: int, limit: int) -> list[Turn]:
    """Up to ``limit`` turns with an id above ``after_id``, in id order (a full pass
    in pages, e.g. to embed every turn)."""
    db = Db(conn)
    rows = db.fetchall(
        f"SELECT {_TURN_COLUMNS} FROM {db.turns}"  # noqa: S608 - constant names
        " WHERE id > ? ORDER BY id LIMIT ?",
        (after_id, limit),
    )
    return [_turn(row) for row in rows]


def turn_states(conn: sqlite3.Connection, key: SessionKey) -> dict[int, tuple[bool, str | None]]:
    """Each indexed turn's ``(extracted, episode_id)`` by turn index (export)."""
    rows = conn.execute(
        "SELECT turn_index, extracted, episode_id FROM conversation_turns"
        " WHERE group_id = ? AND agent_id = ? AND session_id = ?",
        (key.group, key.agent, key.session),
    )
    return {index: (bool(extracted), episode) for index, extracted, episode in rows}


def set_turn_state(
    conn: sqlite3.Connection, key: SessionKey, turn_index: int, extracted: bool, episode: str | None
) -> None:
    """Restore an exported turn's extraction state (import)."""
    conn.execute(
        "UPDATE conversation_turns SET extracted = ?, episode_id = ?"
        " WHERE group_id = ? AND agent_id = ? AND session_id = ? AND turn_index = ?",
        (int(extracted), episode, key.group, key.agent, key.session, turn_index),
    )
