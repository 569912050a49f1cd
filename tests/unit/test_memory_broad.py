"""The memory search's bounded path (more matches than BROAD_MATCHES), on a small store
with small thresholds: a query of only common terms scores its newest matches; a rarer
term is scored over the whole store."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from soloqueue_mem import Store
from soloqueue_mem.memory import backend
from soloqueue_mem.memory.store import Filters

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def memories(tmp_path, monkeypatch):
    monkeypatch.setattr(backend, "BROAD_MATCHES", 4)
    monkeypatch.setattr(backend, "RECENT_WINDOW", 2)
    texts = [f"common filler number {i}" for i in range(6)]
    texts.insert(1, "common rare zebra")
    for n, text in enumerate(texts):  # oldest first
        with Store(tmp_path, clock=lambda n=n: NOW - timedelta(hours=len(texts) - n)) as store:
            store.remember(text)
    return Store(tmp_path, clock=lambda: NOW)


def memory_db(store: Store) -> sqlite3.Connection:
    """The Store's own connection to memory.db (its SQLite back end's)."""
    return store._storage().connection("memory", create=False)  # type: ignore[attr-defined]


def search(store: Store, terms: list[str]) -> list[str]:
    found = backend.FTS5Backend().search(memory_db(store), terms, Filters(), NOW, 10)
    return [memory.content for memory, _ in found]


def test_a_lone_common_term_scores_its_newest_matches(memories):
    assert sorted(search(memories, ["common"])) == [
        "common filler number 4",
        "common filler number 5",
    ]


def test_a_rare_term_is_scored_over_the_whole_store(memories):
    found = search(memories, ["common", "zebra"])
    assert found[0] == "common rare zebra"
    assert set(found[1:]) == {"common filler number 4", "common filler number 5"}


def test_a_narrow_query_is_scored_exactly(memories):
    assert search(memories, ["zebra"]) == ["common rare zebra"]


def test_among_equal_scores_the_newer_memory_comes_first(tmp_path):
    """Ranked in the index alone, the rows tying with the last one kept are read too:
    the newest of equally scored memories wins, as when every match was joined."""
    for n in range(5):  # equal lengths, one "apple" each: equal BM25 scores
        with Store(tmp_path, clock=lambda n=n: NOW - timedelta(hours=5 - n)) as store:
            store.remember(f"apple filler number{n}")
    with Store(tmp_path, clock=lambda: NOW) as store:
        conn = memory_db(store)
        # the newest is archived: the search skips it by its row id
        conn.execute(
            "UPDATE memories SET archived_at = ? WHERE rowid = (SELECT MAX(rowid) FROM memories)",
            (NOW.isoformat(),),
        )
        found = backend.FTS5Backend().search(conn, ["apple"], Filters(), NOW, 2)
    assert [memory.content for memory, _ in found] == [
        "apple filler number3",
        "apple filler number2",
    ]
