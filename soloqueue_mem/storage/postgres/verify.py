"""``verify`` on PostgreSQL: the shared database, and this host's own files.

The database (every host's rows): each session's turn indexes run 0…n-1 with no gap
and its counters agree (``turn-gap``, ``session-counter``: errors when the next write
would collide), the search indexes exist (``missing-index``), the stored tsvectors are
the ones the rows' text gives (``stale-search``; the newest ``SAMPLE`` rows of each
table, every row with ``--full``), a re-index left pending (``reindex-pending``), and
the links between rows, checked as on SQLite (:func:`soloqueue_mem.ops.verify.check_links`:
supersede chains, episodes named). This host: the
CAS against ``artifacts.db`` (as on SQLite), and its session logs parse and hold no
turn the database lacks (``unindexed-turns``, info: a write killed before its commit;
the database is the ground truth, so another host's turns are never missing here).

``--repair`` rewrites the stale tsvectors of every row (in batches, each committed),
finishes a pending re-index, re-creates missing search indexes and puts the session
counters right.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from soloqueue_mem.home import Home
from soloqueue_mem.ops.verify import (
    Finding,
    VerifyOptions,
    check_artifacts,
    check_links,
    logged_turns,
    report,
)
from soloqueue_mem.sessions.events import SessionKey
from soloqueue_mem.storage.postgres import reindex
from soloqueue_mem.storage.postgres.schema import MIGRATIONS
from soloqueue_mem.storage.sqlite.stores import open_query_only

if TYPE_CHECKING:
    import psycopg

SAMPLE = 1_000
_SESSIONS = """
    SELECT group_id, agent_id, session_id, s.next_turn_index, s.turn_count,
        t.turns, t.lowest, t.highest
    FROM sessions AS s
    FULL JOIN (
        SELECT group_id, agent_id, session_id, count(*) AS turns,
            min(turn_index) AS lowest, max(turn_index) AS highest
        FROM quarantine_logs GROUP BY group_id, agent_id, session_id
    ) AS t USING (group_id, agent_id, session_id)
    WHERE t.turns IS NULL AND s.turn_count <> 0
        OR t.turns IS NOT NULL AND (s.session_id IS NULL OR t.lowest <> 0
            OR t.highest <> t.turns - 1 OR s.next_turn_index <= t.highest
            OR s.turn_count <> t.turns)
    ORDER BY group_id, agent_id, session_id
"""


def verify_store(
    home: Home, conn: psycopg.Connection, options: VerifyOptions, now: float
) -> dict[str, Any]:
    """Check (and with ``options.repair`` repair) as the module doc says."""
    findings: list[Finding] = []
    counts: dict[str, int] = {}
    if home.exists():
        home.check_safe()
        check_artifacts(home, options, now, findings, counts, open_query_only)
        _check_logs(home, conn, findings, counts)
    counts["schema_version"] = _schema_version(conn)
    _check_sessions(conn, findings)
    _check_indexes(conn, findings)
    _check_search(conn, options, findings, counts)
    check_links(conn, findings, counts)
    repaired = _repair(conn) if options.repair else None
    return report(findings, counts, repaired)


def _schema_version(conn: psycopg.Connection) -> int:
    row = conn.execute("SELECT version FROM schema_version").fetchone()
    assert row is not None and row[0] == len(MIGRATIONS)  # connect() migrated it
    return int(row[0])


# --- this host's session logs ------------------------------------------------------


def _check_logs(
    home: Home, conn: psycopg.Connection, findings: list[Finding], counts: dict[str, int]
) -> None:
    logged = logged_turns(home, findings)
    keys = sorted(logged)
    rows = conn.execute(
        "SELECT group_id, agent_id, session_id, array_agg(turn_index)"
        " FROM quarantine_logs JOIN unnest(%s::text[], %s::text[], %s::text[])"
        " AS k(g, a, s) ON group_id = k.g AND agent_id = k.a AND session_id = k.s"
        " GROUP BY group_id, agent_id, session_id",
        ([k.group for k in keys], [k.agent for k in keys], [k.session for k in keys]),
    ).fetchall()
    stored = {SessionKey(g, a, s): set(indexes) for g, a, s, indexes in rows}
    counts["sessions"] = len(logged)
    counts["turns_logged"] = sum(len(v) for v in logged.values())
    counts["turns_indexed"] = sum(len(v) for v in stored.values())
    for key in keys:
        missing = logged[key] - stored.get(key, set())
        if missing:
            detail = (
                f"{len(missing)} turn(s) in this host's log the database lacks (a write "
                "killed before its commit: the database is the ground truth)"
            )
            findings.append(Finding("info", "unindexed-turns", "/".join(key), detail))


# --- the database ------------------------------------------------------------------


def _check_sessions(conn: psycopg.Connection, findings: list[Finding]) -> None:
    for g, a, s, next_index, count, turns, lowest, highest in conn.execute(_SESSIONS):
        where = f"{g}/{a}/{s}"
        if turns is None:
            findings.append(
                Finding("warning", "session-counter", where, f"turn_count {count}, no turns")
            )
            continue
        if lowest != 0 or highest != turns - 1:
            detail = f"{turns} turn(s) with indexes {lowest}..{highest}"
            findings.append(Finding("error", "turn-gap", where, detail))
        if next_index is None:
            findings.append(Finding("error", "missing-session", where, f"{turns} turn(s)"))
        elif next_index <= highest:
            detail = f"next_turn_index {next_index}, but turn {highest} exists"
            findings.append(Finding("error", "session-counter", where, detail))
        elif count != turns:
            detail = f"turn_count {count}, {turns} turn(s) stored"
            findings.append(Finding("warning", "session-counter", where, detail))


def _missing_indexes(conn: psycopg.Connection) -> list[tuple[str, str]]:
    """Each table whose GIN index on ``search`` is missing, with the index's name."""
    named = [(table, f"{table}_search") for table in reindex.TABLES]
    found = [conn.execute("SELECT to_regclass(%s)", (i,)).fetchone() for _, i in named]
    return [pair for pair, row in zip(named, found, strict=True) if row is None or row[0] is None]


def _check_indexes(conn: psycopg.Connection, findings: list[Finding]) -> None:
    for table, index in _missing_indexes(conn):
        findings.append(Finding("error", "missing-index", table, f"{index} (GIN on search)"))


def _check_search(
    conn: psycopg.Connection,
    options: VerifyOptions,
    findings: list[Finding],
    counts: dict[str, int],
) -> None:
    for name, progress in reindex.pending(conn).items():
        detail = f"{progress['checked']} row(s) done, up to key {progress['end_key']}"
        findings.append(Finding("warning", "reindex-pending", name, detail))
    checked = 0
    for table in reindex.TABLES.values():
        stale: list[int] = []
        for keys, docs in _rows_to_check(conn, table, options.full):
            stale += reindex.stale(conn, table, keys, docs)
            checked += len(keys)
        if stale:
            shown = ", ".join(map(str, stale[:10])) + (" …" if len(stale) > 10 else "")
            detail = f"{len(stale)} row(s) whose tsvector is not their text's ({table.key} {shown})"
            findings.append(Finding("error", "stale-search", table.name, detail))
    counts["search_rows_checked"] = checked


def _rows_to_check(
    conn: psycopg.Connection, table: reindex.Indexed, full: bool
) -> list[tuple[list[int], list[str]]]:
    if full:
        return list(reindex.batches(conn, table))
    rows = conn.execute(
        f"SELECT {table.key}, {table.columns} FROM {table.name}"  # noqa: S608 - constants
        f" ORDER BY {table.key} DESC LIMIT %s",
        (SAMPLE,),
    ).fetchall()
    return [([row[0] for row in rows], [table.document(row[1:]) for row in rows])] if rows else []


# --- repair ------------------------------------------------------------------------


def _repair(conn: psycopg.Connection) -> dict[str, Any]:
    done = reindex.resume(conn) or {}
    rewritten = {name: reindex.rewrite(conn, table) for name, table in reindex.TABLES.items()}
    missing = _missing_indexes(conn)
    for table, index in missing:
        conn.execute(f"CREATE INDEX {index} ON {table} USING GIN (search)")  # constants
    counters = conn.execute(
        "UPDATE sessions AS s SET turn_count = t.turns,"
        " next_turn_index = GREATEST(s.next_turn_index, t.highest + 1)"
        " FROM (SELECT group_id, agent_id, session_id, count(*) AS turns,"
        " max(turn_index) AS highest FROM quarantine_logs"
        " GROUP BY group_id, agent_id, session_id) AS t"
        " WHERE (s.group_id, s.agent_id, s.session_id) = (t.group_id, t.agent_id, t.session_id)"
        " AND (s.turn_count <> t.turns OR s.next_turn_index <= t.highest)"
    ).rowcount
    return {
        "search_rows": {
            name: done.get(name, {}).get("rewritten", 0) + counts["rewritten"]
            for name, counts in rewritten.items()
        },
        "search_indexes": len(missing),
        "session_counters": counters,
    }
