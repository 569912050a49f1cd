"""Re-ranking BM25's best turns by query-term coverage and by their session neighbours.

BM25 scores each turn alone. Two generic corrections, applied to its best ``POOL`` turns:

- coverage: a turn's score is multiplied by the share of the query's terms it contains,
  each term weighted by its weight in the query times its idf among the turns examined
  here (a term most of them hold tells them apart less), so a turn holding several
  terms beats one repeating a single term; a word and its search-mode sub-words count
  once, by the heaviest of them the turn holds;
- context: each candidate adds half its score to the turns next to it in its session
  and a quarter to those two turns away, so the reply to a matching question (or the
  question before a matching answer) ranks with it. Turns next to the best ``limit``
  candidates join the candidates when they contain a query term: every hit still
  matches the query.

On LoCoMo (categories 1-4) hit@10 went from 67.6 to 79.8 (benchmarks/bench_locomo.py).

Cost, whatever the size of the store: one SQL query for the neighbours of the best
``limit`` turns (a range of a unique index each), and an in-memory FTS5 table of the
pool and those neighbours (the store's tokenizer, so terms match there exactly as in
the store), queried once per term.
"""

from __future__ import annotations

import sqlite3
from math import log

from soloqueue_mem.sessions import turns
from soloqueue_mem.sessions.turns import Scope, Turn
from soloqueue_mem.text.fts import phrase
from soloqueue_mem.text.query import QueryTerm, coverage

POOL = 100
NEIGHBOUR_WEIGHTS = (0.5, 0.25)  # share of a turn's score given 1 and 2 turns away


def rerank(
    conn: sqlite3.Connection,
    terms: list[QueryTerm],
    scope: Scope,
    pool: list[tuple[Turn, float]],
    limit: int,
) -> list[tuple[Turn, float]]:
    """The ``limit`` best turns of ``pool`` (BM25 hits, best first) and their matching
    neighbours, scored by coverage and context."""
    if not pool:
        return []
    in_pool = {turn.id for turn, _ in pool}
    nearby = turns.session_neighbourhood(
        conn, [turn for turn, _ in pool[:limit]], len(NEIGHBOUR_WEIGHTS), scope
    )
    outside = [turn for turn in nearby if turn.id not in in_pool]
    examined = [turn for turn, _ in pool] + outside
    holders = turns.matching_among(examined, [phrase(t.text) for t in terms])
    matched = set().union(*holders)
    scores = _weigh_by_coverage(pool, terms, holders, len(examined))
    candidates = [turn for turn, _ in pool] + [turn for turn in outside if turn.id in matched]
    smoothed = _with_context(candidates, scores)
    best = sorted(candidates, key=lambda turn: (-smoothed[turn.id], -turn.id))[:limit]
    return [(turn, smoothed[turn.id]) for turn in best]


def _weigh_by_coverage(
    pool: list[tuple[Turn, float]], terms: list[QueryTerm], holders: list[set[int]], examined: int
) -> dict[int, float]:
    """Each pool turn's score times the share of the query it covers, each term weighing
    its query weight times its idf among the ``examined`` turns (``holders`` being the
    turns holding each term); a word and its sub-words count once."""
    weights = idf_weights(terms, holders, examined)
    return {
        turn.id: score * coverage(terms, weights, [turn.id in ids for ids in holders])
        for turn, score in pool
    }


def idf_weights(terms: list[QueryTerm], holders: list[set[int]], examined: int) -> list[float]:
    """Each term's query weight times its idf among the ``examined`` turns, ``holders``
    being the turns holding each term: a term most of them hold tells them apart less
    (the weights :func:`~soloqueue_mem.text.query.coverage` takes, on either back end)."""
    return [
        term.weight * log(1 + (examined - len(ids) + 0.5) / (len(ids) + 0.5))
        for term, ids in zip(terms, holders, strict=True)
    ]


def _with_context(candidates: list[Turn], scores: dict[int, float]) -> dict[int, float]:
    """Each candidate's own score plus the shares of its scored session neighbours."""
    at = {(t.group, t.agent, t.session, t.turn_index): t.id for t in candidates}
    smoothed = {turn.id: scores.get(turn.id, 0.0) for turn in candidates}
    for turn in candidates:
        score = scores.get(turn.id, 0.0)
        for distance, weight in enumerate(NEIGHBOUR_WEIGHTS, start=1):
            for index in (turn.turn_index - distance, turn.turn_index + distance):
                neighbour = at.get((turn.group, turn.agent, turn.session, index))
                if neighbour is not None:
                    smoothed[neighbour] += weight * score
    return smoothed
