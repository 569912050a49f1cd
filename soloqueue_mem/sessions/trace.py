"""``trace``: level-2 retrieval of raw turns, with tool inputs and results.

BM25 over the full-text index first; then the JSONL logs are checked for turns the
index does not have yet (a writer killed between its append and its commit, or a
lost memory.db), which are matched by their terms and merged in. Scores from the two
sources are put on one scale: index scores divided by the best, fallback scores the
weighted share of the query a turn contains (:func:`soloqueue_mem.text.query.coverage`).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable

from soloqueue_mem.errors import BadInput, BadOption
from soloqueue_mem.home import Home
from soloqueue_mem.sessions import turns
from soloqueue_mem.sessions.events import SessionKey, from_record, index_body
from soloqueue_mem.sessions.logfile import read_lines
from soloqueue_mem.sessions.pending import pending_sessions
from soloqueue_mem.sessions.ranking import rank
from soloqueue_mem.sessions.reader import session_files
from soloqueue_mem.sessions.turns import Scope, Turn
from soloqueue_mem.text.lexicon import Lexicon
from soloqueue_mem.text.query import QueryTerm, WeightedQuery, coverage, weigh_query
from soloqueue_mem.tuples import NamedTuple

MAX_LIMIT = 1000


class TraceHit(NamedTuple):
    turn: Turn
    score: float
    source: str  # "index" or "jsonl"


def trace(
    home: Home,
    conn: sqlite3.Connection | None,
    query: str,
    scope: Scope,
    limit: int,
    lexicon: Callable[[], Lexicon],
) -> list[TraceHit]:
    """The ``limit`` best-matching turns in ``scope``, best first."""
    weighted = weighed(query, limit, lexicon)
    if not weighted.terms:
        return []
    hits: list[TraceHit] = []
    if conn is not None:
        bounded = turns.bounded(conn, scope)
        hits = index_hits(rank(conn, weighted, bounded, limit) if bounded is not None else [])
    hits.extend(_unindexed_hits(home, conn, weighted.terms, scope))
    return best_first(hits, limit)


def weighed(query: str, limit: int, lexicon: Callable[[], Lexicon]) -> WeightedQuery:
    """``query``'s terms for a search of ``limit`` turns (BadOption out of range)."""
    if not 1 <= limit <= MAX_LIMIT:
        raise BadOption(f"--limit must be between 1 and {MAX_LIMIT}")
    return weigh_query(query, lexicon)


def index_hits(found: list[tuple[Turn, float]]) -> list[TraceHit]:
    """The full-text index's matches as hits, each score over the best one's."""
    best = max((score for _, score in found), default=1.0) or 1.0
    return [TraceHit(turn, score / best, "index") for turn, score in found]


def best_first(hits: list[TraceHit], limit: int) -> list[TraceHit]:
    """The ``limit`` best ``hits``: equal scores newest first."""
    hits = sorted(
        hits, key=lambda h: (h.turn.timestamp, h.turn.id, h.turn.turn_index), reverse=True
    )
    hits.sort(key=lambda h: -h.score)  # stable: equal scores stay newest first
    return hits[:limit]


def _unindexed_hits(
    home: Home, conn: sqlite3.Connection | None, terms: list[QueryTerm], scope: Scope
) -> list[TraceHit]:
    hits = []
    for key, path in _sessions_to_scan(home, conn, scope):
        indexed = turns.indexed_bytes(conn, key) if conn is not None else 0
        try:
            if os.stat(path).st_size <= indexed:
                continue
        except FileNotFoundError:
            continue
        last_indexed = turns.max_turn_index(conn, key) if conn is not None else -1
        for entry in read_lines(path, indexed):
            record = entry.record
            if record is None or record.get("turn_index", -1) <= last_indexed:
                continue
            hit = _match_record(key, record, terms, scope.since, scope.role)
            if hit is not None:
                hits.append(hit)
    return hits


def _sessions_to_scan(
    home: Home, conn: sqlite3.Connection | None, scope: Scope
) -> list[tuple[SessionKey, str]]:
    """Sessions whose log may be ahead of the index: those a writer left a pending
    marker for, or every log on disk when there is no index at all."""
    if conn is None:
        found = list(session_files(home, scope.group, scope.agent))
    else:
        found = [(key, home.session_log(*key)) for key in pending_sessions(home)]
    return [
        (key, path)
        for key, path in found
        if (scope.group is None or key.group == scope.group)
        and (scope.agent is None or key.agent == scope.agent)
        and (scope.session is None or key.session == scope.session)
    ]


def _match_record(
    key: SessionKey, record: dict, terms: list[QueryTerm], since: str | None, role: str | None
) -> TraceHit | None:
    try:
        event = from_record(record)
    except (BadInput, KeyError):
        return None
    if (since and record["timestamp"] < since) or (role and event.role != role):
        return None
    body = index_body(event).lower()
    share = coverage(terms, [t.weight for t in terms], [t.text in body for t in terms])
    if not share:
        return None
    turn = Turn(
        id=0,
        group=key.group,
        agent=key.agent,
        session=key.session,
        turn_index=record["turn_index"],
        role=event.role,
        content=event.content,
        tool_calls=event.tool_calls,
        tool_results=event.tool_results,
        timestamp=record["timestamp"],
        token_estimate=None,
        event_id=event.event_id,
        metadata=event.metadata,
    )
    return TraceHit(turn, share, "jsonl")
