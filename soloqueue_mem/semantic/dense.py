"""Dense retrieval: the query's cosine against every cached vector in scope.

Vectors are float32 BLOBs in memory.db, searched by numpy brute force over a
memory-mapped copy of them (:mod:`.mapped`, in the store's cache folder): this Python's
``sqlite3`` cannot load sqlite-vec (no ``enable_load_extension``), and brute force
over 100k vectors is fast enough for a CLI call (see benchmarks/bench_semantic.py and
the README). Group and agent narrow the matrix in SQL; every other filter (type,
since, active: not superseded, archived or expired) is checked exactly on the best
items, in score order, against the items' own tables, so the result is exactly the
top ``limit`` of the items the filters admit.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from soloqueue_mem.clock import iso
from soloqueue_mem.memory import episodes, store
from soloqueue_mem.memory.episodes import Episode, EpisodeFilters
from soloqueue_mem.memory.model import Memory
from soloqueue_mem.memory.store import Filters
from soloqueue_mem.semantic import index, mapped, sketch
from soloqueue_mem.semantic.model import Embedder, load
from soloqueue_mem.sessions import turns
from soloqueue_mem.sessions.turns import Turn

if TYPE_CHECKING:
    import numpy as np

DEFAULT_KINDS = ("memory", "episode", "turn")
# Items scored beyond ``limit`` per pass, for those the filters leave out (superseded,
# archived, expired, out of scope): most stores have few, and reading an item's row
# costs more than its cosine, so a pass scores a few more, reads the rows of the spare
# ones only when the best ``limit`` were not all admitted, and another pass follows if
# needed.
SPARE = 50


class Scope(NamedTuple):
    group: str | None = None
    agent: str | None = None
    type: str | None = None  # a memory type: then only memories are searched
    since: datetime | None = None


class DenseQuery(NamedTuple):
    """One dense search, as either back end runs it: the best ``limit`` items of
    ``kinds`` in ``scope`` nearest to ``text``, as they stand at ``now``."""

    text: str
    scope: Scope
    now: datetime
    limit: int
    kinds: tuple[str, ...] = DEFAULT_KINDS

    def searched_kinds(self) -> tuple[str, ...]:
        """The kinds it asks: only memories when the scope names a memory type, none
        for a blank query."""
        if not self.text.strip():
            return ()
        if self.scope.type is None:
            return self.kinds
        return tuple(kind for kind in self.kinds if kind == "memory")


class DenseHit(NamedTuple):
    kind: str  # memory, episode or turn (promoted chunks are memories)
    id: str  # memory/episode id; a turn's "group/agent/session#index"
    score: float  # cosine similarity in [-1, 1]
    item: Memory | Episode | Turn


def dense_candidates(
    conn: sqlite3.Connection,
    query: str,
    *,
    group: str | None = None,
    agent: str | None = None,
    type: str | None = None,
    since: datetime | None = None,
    now: datetime,
    limit: int,
    kinds: tuple[str, ...] = DEFAULT_KINDS,
) -> list[tuple[str, str, float]]:
    """``(kind, id, cosine)`` of the best ``limit`` items for ``query``, best first.

    Raises :class:`soloqueue_mem.semantic.model.Unavailable` without the extra."""
    asked = DenseQuery(query, Scope(group, agent, type, since), now, limit, kinds)
    return [(hit.kind, hit.id, hit.score) for hit in search(conn, load(), asked)]


def search(conn: sqlite3.Connection, embedder: Embedder, asked: DenseQuery) -> list[DenseHit]:
    """The best ``limit`` items in ``scope`` by cosine, with their values. A large
    memory-mapped matrix is scored through its sign sketch (:mod:`.sketch`): exactly,
    but only on the rows nearest by sketch, unless the filters leave out too many."""
    kinds = asked.searched_kinds()
    if not kinds:
        return []
    scope, limit = asked.scope, asked.limit
    found = mapped.load(conn, embedder.name, kinds, scope.group, scope.agent) or index.matrix(
        conn, embedder.name, kinds, scope.group, scope.agent
    )
    if not found.keys:
        return []
    vector = embedder.query(asked.text)
    if found.sketch is not None and sketch.usable(len(found.keys), limit + SPARE):
        rows = sketch.nearest(found.sketch, vector, limit + SPARE)
        scores = found.vectors[rows] @ vector
        hits = _best_admitted(conn, found, rows, scores, asked, vector)
        if len(hits) >= limit:
            return hits
    return _best_admitted(conn, found, None, found.vectors @ vector, asked, vector)


def _best_admitted(
    conn: sqlite3.Connection,
    found: index.Matrix,
    rows: np.ndarray | None,
    scores: np.ndarray,
    asked: DenseQuery,
    query: np.ndarray,
) -> list[DenseHit]:
    """The best ``asked.limit`` items the filters admit, by ``scores`` (of ``rows`` of
    ``found``; None: of every row), each scored again by :func:`_cosines`."""
    hits: list[DenseHit] = []
    limit = asked.limit
    step = limit + SPARE
    for order in _best_first(scores, step):
        for start in range(0, len(order), step):  # exact filters on the best first
            best = order[start : start + step]
            items = best if rows is None else rows[best]
            cosines = _cosines(found.vectors, items, query)
            ranked = list(zip(_keys_at(found.keys, items), cosines, strict=True))
            ranked.sort(key=lambda pair: -pair[1])  # stable: ties keep the row order
            needed = limit - len(hits)  # read first: the spare only when some are left out
            hits += _admitted(conn, ranked[:needed], asked.scope, asked.now)
            if len(hits) < limit:
                hits += _admitted(conn, ranked[needed:], asked.scope, asked.now)
            if len(hits) >= limit:
                return hits[:limit]
    return hits


def _cosines(vectors: np.ndarray, rows: np.ndarray, query: np.ndarray) -> list[float]:
    """The cosines of ``rows`` in float64, one row's the same whichever product chose
    it: a float32 product's last bit depends on how many rows it spans and on their
    alignment in memory, and one bit can change a score's sixth decimal."""
    import numpy as np

    chosen = np.asarray(vectors[rows], dtype=np.float64)
    return (chosen @ query.astype(np.float64)).tolist()


def _keys_at(keys: Sequence[tuple[str, str]], rows: np.ndarray) -> list[tuple[str, str]]:
    """The keys of ``rows``: a mapped copy's read a column at a time (an element at a
    time, a search's 250 cost more than its product)."""
    if isinstance(keys, mapped.Keys):
        return keys.at(rows)
    return [keys[n] for n in rows]


def _best_first(scores: np.ndarray, count: int) -> Iterator[np.ndarray]:
    """Row numbers by descending score, ties in row order ((kind, id): deterministic),
    in two parts: the best ``count`` (more on a tie), found without sorting all rows
    (a sort of 100k costs more than the product), then the rest if asked for."""
    import numpy as np

    if count >= len(scores):
        yield np.argsort(-scores, kind="stable")
        return
    bar = np.partition(scores, len(scores) - count)[len(scores) - count]
    best = np.flatnonzero(scores >= bar)  # in row order, so the stable sort keeps ties
    yield best[np.argsort(-scores[best], kind="stable")]
    yield np.argsort(-scores, kind="stable")[len(best) :]


def _admitted(
    conn: sqlite3.Connection,
    ranked: list[tuple[tuple[str, str], float]],
    scope: Scope,
    now: datetime,
) -> list[DenseHit]:
    """The ranked items that pass the scope's filters, in the same order."""
    ids: dict[str, list[str]] = {}
    for (kind, item_id), _ in ranked:
        ids.setdefault(kind, []).append(item_id)
    since = iso(scope.since) if scope.since else None
    items: dict[tuple[str, str], tuple[str, Memory | Episode | Turn]] = {}
    if "memory" in ids:
        filters = Filters(group=scope.group, agent=scope.agent, type=scope.type, since=since)
        for key, memory in store.matching_ids(conn, ids["memory"], filters, now).items():
            items[("memory", key)] = (key, memory)
    if "episode" in ids:
        filters_e = EpisodeFilters(scope.group, scope.agent, None, since)
        for key, episode in episodes.matching_ids(conn, ids["episode"], filters_e).items():
            items[("episode", key)] = (key, episode)
    if "turn" in ids:
        for turn in turns.turns_by_id(conn, [int(i) for i in ids["turn"]]).values():
            if _turn_in_scope(turn, scope, since):
                items[("turn", str(turn.id))] = (turns.turn_name(turn), turn)
    return [
        DenseHit(key[0], items[key][0], round(score, 6), items[key][1])
        for key, score in ranked
        if key in items
    ]


def _turn_in_scope(turn: Turn, scope: Scope, since: str | None) -> bool:
    return (
        (scope.group is None or turn.group == scope.group)
        and (scope.agent is None or turn.agent == scope.agent)
        and (since is None or turn.timestamp >= since)
    )
