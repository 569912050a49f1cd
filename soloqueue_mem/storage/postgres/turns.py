"""All SQL for ``quarantine_logs`` (the turns) and ``sessions`` on PostgreSQL.

``log`` keeps the SQLite writer's order: the session logs on this host's disk are
locked and appended inside the database transaction, and cut back if it fails, so a
turn is acknowledged only once both hold it. Turn indexes come from the session's row,
locked with ``SELECT … FOR UPDATE`` (sessions in sorted order, so writers never
deadlock): writers on several hosts get gap-free indexes. The database, not a log, is
the ground truth here: each host's JSONL holds the turns that host wrote.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from soloqueue_mem import faults
from soloqueue_mem.clock import iso
from soloqueue_mem.db.adapter import Db, postgres_sql
from soloqueue_mem.home import Home
from soloqueue_mem.sessions.events import Event, SessionKey, index_body
from soloqueue_mem.sessions.logfile import SessionLog
from soloqueue_mem.sessions.ranking import _below as below
from soloqueue_mem.sessions.rerank import POOL, idf_weights
from soloqueue_mem.sessions.trace import TraceHit, best_first, index_hits, weighed
from soloqueue_mem.sessions.turns import _TURN_COLUMNS as _COLUMNS
from soloqueue_mem.sessions.turns import NEW_TURN_COLUMNS, Scope, Turn, new_turn
from soloqueue_mem.sessions.turns import _turn as turn_from_row
from soloqueue_mem.sessions.writer import LoggedTurn, Queued, appended_in, index_and_append
from soloqueue_mem.storage.postgres.newest import newest_ranked
from soloqueue_mem.storage.postgres.text import document, insert_indexed, term_query
from soloqueue_mem.text.fts import RECENT_WINDOW as WINDOW
from soloqueue_mem.text.lexicon import Lexicon
from soloqueue_mem.text.query import QueryTerm, coverage

if TYPE_CHECKING:
    import psycopg


def write_chunk(
    home: Home, conn: psycopg.Connection, chunk: list[Queued], fsync: bool, now: datetime
) -> list[LoggedTurn]:
    """Index and append ``chunk`` in one transaction (see the module doc)."""

    def write(logs: dict[SessionKey, SessionLog]) -> list[LoggedTurn]:
        with conn.transaction():
            return index_and_append(Quarantine(conn, now), chunk, logs, now)

    results = appended_in(home, {queued.key for queued in chunk}, fsync, write)
    faults.fault("log.after_commit")
    return results


class Quarantine:
    """``quarantine_logs`` as :class:`soloqueue_mem.sessions.writer.TurnIndex`: a
    session's indexes come from its row, locked until the transaction ends."""

    def __init__(self, conn: psycopg.Connection, now: datetime) -> None:
        self.conn = conn
        self.stamp = iso(now)

    def first(self, key: SessionKey, log: SessionLog) -> int:
        return lock_session(self.conn, key, self.stamp)

    def insert(self, key: SessionKey, index: int, l1: Event, timestamp: str) -> int:
        return _insert_turn(self.conn, key, index, l1, timestamp)

    def appended(self, key: SessionKey, records: list[dict[str, Any]], size: int) -> None:
        stamps = [r["timestamp"] for r in records]
        top = records[-1]["turn_index"]
        advance_session(self.conn, key, len(records), top, min(stamps), max(stamps))


def advance_session(
    conn: psycopg.Connection,
    key: SessionKey,
    turns: int,
    top: int,
    first: str,
    last: str,
    ended_at: str | None = None,
) -> None:
    """Count ``turns`` more turns in the session's row: its next index past ``top``, its
    times widened to ``first`` and ``last``, and ``ended_at`` when it had none."""
    conn.execute(
        "UPDATE sessions SET next_turn_index = GREATEST(next_turn_index, %s),"
        " turn_count = turn_count + %s, started_at = LEAST(started_at, %s),"
        " last_turn_at = GREATEST(last_turn_at, %s), ended_at = COALESCE(ended_at, %s)"
        " WHERE group_id = %s AND agent_id = %s AND session_id = %s",
        (top + 1, turns, first, last, ended_at, *key),
    )


def lock_session(conn: psycopg.Connection, key: SessionKey, stamp: str) -> int:
    """Lock the session's row (creating it, started and last active at ``stamp``) until
    the transaction ends; its next index."""
    conn.execute(
        "INSERT INTO sessions (group_id, agent_id, session_id, started_at, last_turn_at)"
        " VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
        (*key, stamp, stamp),
    )
    row = conn.execute(
        "SELECT next_turn_index FROM sessions"
        " WHERE group_id = %s AND agent_id = %s AND session_id = %s FOR UPDATE",
        tuple(key),
    ).fetchone()
    assert row is not None
    return int(row[0])


def _insert_turn(
    conn: psycopg.Connection, key: SessionKey, turn_index: int, event: Event, timestamp: str
) -> int:
    body = index_body(event)
    values = new_turn(key, turn_index, event, timestamp, body)
    cursor = insert_indexed(
        Db(conn), "quarantine_logs", NEW_TURN_COLUMNS, values, document(body), " RETURNING id"
    )
    return int(cursor.fetchone()[0])


def trace(
    conn: psycopg.Connection,
    query: str,
    scope: Scope,
    limit: int,
    lexicon: Callable[[], Lexicon],
) -> list[TraceHit]:
    """The ``limit`` best-matching turns in ``scope``, best first.

    The best ``POOL`` matches by ``ts_rank`` are scored by the share of the query's
    terms they hold, each weighing its query weight times its idf among those matches
    (:func:`~soloqueue_mem.sessions.rerank.idf_weights`: the measure SQLite's ``trace``
    re-ranks by, so a term the filler turns all hold tells them apart less); each
    term's match is decided by the database, with the index's own tokens. Ranked are
    each term's ``WINDOW`` newest matches (:mod:`soloqueue_mem.storage.postgres.newest`): all of a
    narrow term's, and a common term's newest only (reading every turn holding a common
    word is what is slow at a million turns, and such a word barely moves
    ``ts_rank``). As in
    SQLite, too few hits and a query with stopwords: the turns matching those follow.
    """
    weighted = weighed(query, limit, lexicon)
    if not weighted.terms:
        return []
    found = _ranked(conn, weighted.terms, scope, limit)
    if len(found) < limit and weighted.stopwords:
        also = _ranked(conn, weighted.terms + weighted.stopwords, scope, limit)
        found = below(found, also, limit)
    return best_first(index_hits(found), limit)


def _ranked(
    conn: psycopg.Connection, terms: list[QueryTerm], scope: Scope, limit: int
) -> list[tuple[Turn, float]]:
    terms = [t for t in terms if term_query(t.text)]
    if not terms:
        return []
    phrases = [term_query(t.text) or "" for t in terms]
    where = postgres_sql(scope.where(), named=True)
    # "t": the alias the scope's filters name
    table, params = "quarantine_logs AS t", scope.params()
    ranked = newest_ranked(conn, table, "id", phrases, where, params, WINDOW)
    best = sorted(ranked, key=lambda i: (-ranked[i][0], -i))[: max(limit, POOL)]
    held = ", ".join(f"search @@ to_tsquery('simple', %(t{n})s)" for n in range(len(phrases)))
    found = conn.execute(
        f"SELECT {_COLUMNS}, {held} FROM quarantine_logs"  # noqa: S608 - fixed fragments
        " WHERE id = ANY(%(ids)s)",
        {**{f"t{n}": phrase for n, phrase in enumerate(phrases)}, "ids": best},
    ).fetchall()
    order = {turn_id: n for n, turn_id in enumerate(best)}
    rows = sorted(found, key=lambda row: order[row[0]])
    width = len(_COLUMNS.split(", "))
    holders = [{r[0] for r in rows if r[width + n]} for n in range(len(terms))]
    weights = idf_weights(terms, holders, len(rows))
    scored = [(turn_from_row(r[:width]), coverage(terms, weights, r[width:])) for r in rows]
    scored.sort(key=lambda pair: -pair[1])
    return scored
