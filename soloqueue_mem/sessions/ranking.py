"""Ranking turns for a query: exact BM25 when it is affordable, bounded when not.

FTS5's ``bm25()`` reads every match of every query term before it ranks (it needs
their document frequencies), so a common word on a store of a million turns costs a
second or more. Queries are therefore split by how many turns they match:

- at most ``BROAD_MATCHES``: exact BM25 over all matches (FTS5's own ``bm25()``);
- more, but every term alone is narrow: BM25 over the newest ``4 x BROAD_MATCHES``
  matches (each term's document frequency is still exact, and cheap to read);
- more, but some terms are narrow: the narrow terms are ranked exactly over the whole
  store, and the hits of the broad terms follow (a term that alone matches that many
  turns has an idf near zero, so it barely moves the exact ranking anyway);
- only broad terms: BM25 computed here over the ``RECENT_WINDOW`` newest matches,
  with document frequencies estimated within that window.

The best ``rerank.POOL`` turns BM25 finds are then re-ranked by query-term coverage and
by their session neighbours (:mod:`soloqueue_mem.sessions.rerank`), at a cost bounded
by the pool and the limit, not by the store.
"""

from __future__ import annotations

import sqlite3
from math import log

from soloqueue_mem.sessions import turns
from soloqueue_mem.sessions.rerank import POOL, rerank
from soloqueue_mem.sessions.turns import Scope, Turn
from soloqueue_mem.text.fts import BROAD_MATCHES, RECENT_WINDOW, match_expression
from soloqueue_mem.text.query import QueryTerm, WeightedQuery

K1, B = 1.2, 0.75  # FTS5's bm25() defaults


def rank(
    conn: sqlite3.Connection, query: WeightedQuery, scope: Scope, limit: int
) -> list[tuple[Turn, float]]:
    """The ``limit`` best turns in ``scope`` for ``query``, best first, with scores.

    Trigger: the query's terms find fewer than ``limit`` turns and it has stopwords.
    Why: a paraphrased question may share only its function words with the turn that
    answers it. Outcome: the turns matching the whole query follow, scored lower.
    """
    found = _ranked(conn, query.terms, scope, limit)
    if len(found) >= limit or not query.stopwords:
        return found
    return _below(found, _ranked(conn, query.terms + query.stopwords, scope, limit), limit)


def _ranked(
    conn: sqlite3.Connection, terms: list[QueryTerm], scope: Scope, limit: int
) -> list[tuple[Turn, float]]:
    pool = _bm25(conn, [term.text for term in terms], scope, max(limit, POOL))
    return rerank(conn, terms, scope, pool, limit)


def _bm25(
    conn: sqlite3.Connection,
    terms: list[str],
    scope: Scope,
    limit: int,
    narrow: bool = False,
) -> list[tuple[Turn, float]]:
    """The ``limit`` best turns by BM25, exact or bounded (see the module docstring).
    ``narrow``: the caller has counted the terms' matches already, fewer than broad."""
    match = match_expression(terms)
    assert match is not None
    if narrow or turns.nth_newest_match(conn, match, BROAD_MATCHES, scope) is None:
        if _within_rows(scope) and any(_is_broad(conn, t, Scope()) for t in terms):
            # bm25() reads every match of each term in the whole store for its idf, so
            # a common word costs a store-wide scan even when the range holds few turns.
            return _rank_recent(conn, terms, scope, limit)
        return turns.search_turns(conn, match, scope, limit)
    narrow_terms = (
        [term for term in terms if not _is_broad(conn, term, scope)] if len(terms) > 1 else []
    )
    if len(narrow_terms) == len(terms):  # each term is narrow, only their union is broad
        newest = turns.nth_newest_match(conn, match, 4 * BROAD_MATCHES, scope)
        bounded = scope if newest is None else scope._replace(lo=max(scope.lo, newest))
        return turns.search_turns(conn, match, bounded, limit)
    recent = _rank_recent(conn, [t for t in terms if t not in narrow_terms], scope, limit)
    if not narrow_terms:
        return recent
    # one narrow term was just counted; several may still be broad together
    return _below(_bm25(conn, narrow_terms, scope, limit, len(narrow_terms) == 1), recent, limit)


def _within_rows(scope: Scope) -> bool:
    """True when the scope is a row-id range (a session, or turns since a time)."""
    return scope.lo > 0 or scope.hi < Scope().hi


def _is_broad(conn: sqlite3.Connection, term: str, scope: Scope) -> bool:
    match = match_expression([term]) or ""
    return turns.nth_newest_match(conn, match, BROAD_MATCHES, scope) is not None


def _rank_recent(
    conn: sqlite3.Connection, terms: list[str], scope: Scope, limit: int
) -> list[tuple[Turn, float]]:
    """BM25 over the newest matches: term counts from the turns' text, document
    frequencies and average length from the window itself."""
    match = match_expression(terms) or ""
    threshold = turns.nth_newest_match(conn, match, RECENT_WINDOW, scope) or 0
    hits = {
        term: set(turns.matching_ids(conn, match_expression([term]) or "", scope, threshold))
        for term in terms
    }
    window = set().union(*hits.values())
    if not window:
        return []
    texts = turns.search_texts(conn, sorted(window))
    average = sum(map(len, texts.values())) / len(texts) or 1.0
    score = dict.fromkeys(window, 0.0)
    for term, ids in hits.items():
        idf = log(1 + (len(window) - len(ids) + 0.5) / (len(ids) + 0.5))
        for turn_id in ids:
            text = texts.get(turn_id, "")
            tf = max(1, text.count(term))
            norm = K1 * (1 - B + B * len(text) / average)
            score[turn_id] += idf * tf * (K1 + 1) / (tf + norm)
    best = sorted(window, key=lambda turn_id: (-score[turn_id], -turn_id))[:limit]
    found = turns.turns_by_id(conn, best)
    return [(found[turn_id], score[turn_id]) for turn_id in best]


def _below(
    first: list[tuple[Turn, float]], then: list[tuple[Turn, float]], limit: int
) -> list[tuple[Turn, float]]:
    """``first``, then ``then`` rescaled to score lower, without repeats, up to ``limit``."""
    if not first:
        return then
    floor = min(score for _, score in first)
    top = max((score for _, score in then), default=1.0) or 1.0
    seen = {turn.id for turn, _ in first}
    rest = [(turn, 0.99 * floor * score / top) for turn, score in then if turn.id not in seen]
    return (first + rest)[:limit]
