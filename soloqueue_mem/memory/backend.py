"""The search-backend seam of seed 003 §5.3: how semantic memories are found.

FTS5 (with the project's jieba-compatible segmentation) is the default and is always
available. Another back end (an embedding index, for example) registers in
``BACKENDS``; when the configured one cannot be used, recall falls back to FTS5 and
says why, so a missing optional dependency never breaks retrieval.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime
from typing import NamedTuple, Protocol

from soloqueue_mem.memory import store
from soloqueue_mem.memory.model import Memory
from soloqueue_mem.memory.store import Filters
from soloqueue_mem.text.fts import match_expression


class SearchBackend(Protocol):
    name: str

    def search(
        self,
        conn: sqlite3.Connection,
        terms: list[str],
        filters: Filters,
        now: datetime,
        limit: int,
    ) -> list[tuple[Memory, float]]:
        """Active memories for the query terms, best first; higher scores are better."""
        ...


class FTS5Backend:
    name = "fts5"

    def search(
        self,
        conn: sqlite3.Connection,
        terms: list[str],
        filters: Filters,
        now: datetime,
        limit: int,
    ) -> list[tuple[Memory, float]]:
        match = match_expression(terms)
        return store.search(conn, match, filters, now, limit) if match else []


class Chosen(NamedTuple):
    backend: SearchBackend
    fallback_reason: str | None  # why the configured back end is not the one in use


# name -> factory; a factory raises RuntimeError when its back end cannot be used here.
BACKENDS: dict[str, Callable[[], SearchBackend]] = {"fts5": FTS5Backend}


def choose_backend(name: str) -> Chosen:
    factory = BACKENDS.get(name)
    if factory is None:
        return Chosen(FTS5Backend(), f"search backend {name!r} is not available; using fts5")
    try:
        return Chosen(factory(), None)
    except RuntimeError as exc:
        return Chosen(FTS5Backend(), f"search backend {name!r} failed to start ({exc}); using fts5")
