"""A graph on a real graph.db under the test's store, and ways to shape it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from soloqueue_mem.config import Config
from soloqueue_mem.db.connect import write_tx
from soloqueue_mem.db.stores import open_graph
from soloqueue_mem.graph import store
from soloqueue_mem.graph.params import Params
from soloqueue_mem.graph.steps import Steps
from soloqueue_mem.graph.store import Scope
from soloqueue_mem.home import Home
from soloqueue_mem.text.lexicon import open_lexicon

SCOPE = Scope("default", "default")
NOW = "2026-11-26T08:00:00.000Z"


def graph_db(home: Path) -> sqlite3.Connection:
    conn = open_graph(Home(home), Config())
    assert conn is not None
    return conn


def rules_steps(home: Path) -> Steps:
    cache = []

    def lexicon():  # type: ignore[no-untyped-def]
        if not cache:
            cache.append(open_lexicon(home / "cache"))
        return cache[0]

    return Steps(lexicon)


def add_node(conn: sqlite3.Connection, content: str, keywords: list[str] | None = None) -> int:
    with write_tx(conn):
        return store.create_node(conn, SCOPE, content, content[:20], keywords or [], NOW)


def link(conn: sqlite3.Connection, a: int, b: int, strength: float, relation: str | None = None):
    with write_tx(conn):
        store.create_link(conn, a, b, strength, relation)


def set_focus(conn: sqlite3.Connection, ids: list[int]) -> None:
    with write_tx(conn):
        store.push_focus(conn, SCOPE, ids, Params().max_focus_count)
