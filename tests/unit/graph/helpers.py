"""A graph on a real graph.db under the test's store, and ways to shape it (through the
graph's storage interface, so the same helpers shape a PostgreSQL graph)."""

from __future__ import annotations

from pathlib import Path

from soloqueue_mem.config import Config
from soloqueue_mem.graph.db import GraphDb, SqlGraph
from soloqueue_mem.graph.params import Params
from soloqueue_mem.graph.steps import Steps
from soloqueue_mem.graph.store import Scope
from soloqueue_mem.home import Home
from soloqueue_mem.storage.sqlite.stores import open_graph
from soloqueue_mem.text.lexicon import open_lexicon

SCOPE = Scope("default", "default")
NOW = "2026-11-26T08:00:00.000Z"


def graph_db(home: Path) -> SqlGraph:
    conn = open_graph(Home(home), Config())
    assert conn is not None
    return SqlGraph(conn)


def rules_steps(home: Path) -> Steps:
    cache = []

    def lexicon():  # type: ignore[no-untyped-def]
        if not cache:
            cache.append(open_lexicon(home / "cache"))
        return cache[0]

    return Steps(lexicon)


def add_node(db: GraphDb, content: str, keywords: list[str] | None = None) -> int:
    with db.transaction():
        return db.create_node(SCOPE, content, content[:20], keywords or [], NOW)


def link(db: GraphDb, a: int, b: int, strength: float, relation: str | None = None):
    with db.transaction():
        db.create_link(a, b, strength, relation)


def set_focus(db: GraphDb, ids: list[int]) -> None:
    with db.transaction():
        db.push_focus(SCOPE, ids, Params().max_focus_count)
