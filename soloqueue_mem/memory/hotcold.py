"""Seed 004's retrieval answer: hot (the group's working memory) + cold (long-term).

``{"results": [{"content", "source": "hot"|"cold", "score"}]}``: hot is the newest
``working.RETURNED`` (10) live working-memory entries, score 1.0, newest first; cold is
the best ``COLD_LIMIT`` (5) active memories of the group. Cold uses cosine similarity
when the dense channel is on (``search_backend`` hybrid or dense, and the semantic
extra installed), and BM25 through FTS5 otherwise, its scores divided by the best so
they lie in (0, 1]; ``cold_search`` says which one answered.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from soloqueue_mem.memory import working
from soloqueue_mem.memory.model import Memory
from soloqueue_mem.memory.store import Filters
from soloqueue_mem.text.fts import query_terms
from soloqueue_mem.text.lexicon import Lexicon

if TYPE_CHECKING:
    from soloqueue_mem.semantic.dense import DenseHit, DenseQuery

COLD_LIMIT = 5


class Result(NamedTuple):
    content: str
    source: str  # hot or cold
    score: float


class Answer(NamedTuple):
    results: list[Result]
    cold_search: str  # "dense" (cosine) or "lexical" (FTS5)

    def as_json(self) -> dict[str, Any]:
        return {
            "results": [r._asdict() for r in self.results],
            "cold_search": self.cold_search,
        }


def answer(
    conn: Any,
    query: str,
    group: str,
    now: datetime,
    lexicon: Callable[[], Lexicon],
    nearest: Callable[[DenseQuery], list[DenseHit]] | None,
    search: Callable[[list[str], Filters, datetime, int], list[tuple[Memory, float]]],
) -> Answer:
    """Hot then cold from ``conn`` (either back end's): cold by cosine through the back
    end's dense search (``nearest``; None: the dense channel is off), else through its
    full-text ``search``."""
    hot = hot_results(working.latest(conn, group, now))
    if nearest is not None:
        return dense_answer(hot, nearest(cold_query(query, group, now)))
    found = search(query_terms(query, lexicon), Filters(group=group), now, COLD_LIMIT)
    return lexical_answer(hot, found)


def cold_query(query: str, group: str, now: datetime) -> DenseQuery:
    """Cold's dense search: the group's ``COLD_LIMIT`` memories nearest to ``query``."""
    from soloqueue_mem.semantic.dense import DenseQuery, Scope

    return DenseQuery(query, Scope(group=group), now, COLD_LIMIT, ("memory",))


def hot_results(entries: list[working.Entry]) -> list[Result]:
    return [Result(e.content, "hot", 1.0) for e in entries]


def dense_answer(hot: list[Result], hits: list[DenseHit]) -> Answer:
    """``hot`` then the memories the dense channel found, scored by their cosine."""
    cold = [Result(h.item.content, "cold", h.score) for h in hits]  # type: ignore[union-attr]
    return Answer(hot + cold, "dense")


def lexical_answer(hot: list[Result], found: list[tuple[Memory, float]]) -> Answer:
    """``hot`` then the memories full-text search ``found``, their scores divided by
    the best one."""
    best = max((score for _, score in found), default=1.0) or 1.0
    cold = [Result(m.content, "cold", round(max(0.0, s / best), 6)) for m, s in found]
    return Answer(hot + cold, "lexical")
