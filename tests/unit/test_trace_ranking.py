"""Ranking of broad queries (more matches than BROAD_MATCHES), on a small store with a
small threshold so every path of the bounded ranking runs; and the re-ranking of BM25's
best turns by query-term coverage and by their session neighbours."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing

import pytest

import soloqueue_mem.sessions.ranking as ranking
from soloqueue_mem.sessions import rerank
from soloqueue_mem.sessions.turns import Turn
from soloqueue_mem.text import fts
from soloqueue_mem.text.query import QueryTerm


@pytest.fixture
def broad(cli, monkeypatch):
    monkeypatch.setattr(ranking, "BROAD_MATCHES", 3)
    monkeypatch.setattr(ranking, "RECENT_WINDOW", 3)
    events = [{"role": "user", "content": f"common filler {i}", "session": "a"} for i in range(8)]
    events.insert(2, {"role": "user", "content": "common rare zebra", "session": "a"})
    events.append(
        {"role": "user", "content": "common words elsewhere", "session": "b", "agent": "other"}
    )
    cli.ok("log", "--batch", input="\n".join(json.dumps(e) for e in events))


def test_a_query_of_only_common_terms_ranks_its_newest_matches(cli, broad):
    hits = cli.json("trace", "common", "--agent", "default", "--limit", "5")
    # BM25 ranks the 3 newest matches in scope (turns 6-8), equal alone; the middle one
    # gains from both sides; the matching turns next to them follow, nearest first
    assert [h["turn_index"] for h in hits] == [7, 8, 6, 5, 4]
    assert all(h["agent"] == "default" for h in hits)


def test_a_rare_term_is_ranked_over_the_whole_store(cli, broad):
    hits = cli.json("trace", "common zebra", "--limit", "4")
    assert hits[0]["content"] == "common rare zebra"  # old, but holds the rare term
    assert len(hits) == 4 and hits[0]["score"] == 1.0
    assert all(h["score"] < 1.0 for h in hits[1:])


def test_rare_terms_without_matches_fall_back_to_the_common_ones(cli, broad):
    hits = cli.json("trace", "common xylophone", "--limit", "2")
    assert len(hits) == 2 and all("common" in h["content"] for h in hits)


def test_scope_holds_on_the_broad_path(cli, broad):
    hits = cli.json("trace", "common words", "--agent", "other")
    assert [h["content"] for h in hits] == ["common words elsewhere"]


def test_narrow_terms_whose_union_is_broad_are_ranked_exactly(cli, monkeypatch):
    monkeypatch.setattr(ranking, "BROAD_MATCHES", 3)
    monkeypatch.setattr(ranking, "RECENT_WINDOW", 3)
    words = ["alpha", "beta", "gamma"]
    events = [
        {"role": "user", "content": f"{w} note {i}", "session": "u"}
        for w in words
        for i in range(2)
    ]
    events.append({"role": "user", "content": "alpha beta gamma together", "session": "u"})
    cli.ok("log", "--batch", input="\n".join(json.dumps(e) for e in events))
    hits = cli.json("trace", "alpha beta gamma", "--limit", "3")
    assert hits[0]["content"] == "alpha beta gamma together"
    assert len(hits) == 3


def test_stopwords_fill_in_below_when_the_other_words_find_too_little(cli):
    events = [
        {"role": "user", "content": "我觉得火锅很好吃", "session": "a"},
        {"role": "user", "content": "数据库连接超时", "session": "b"},
        {"role": "user", "content": "寿司店关门了", "session": "c"},
    ]
    cli.ok("log", "--batch", input="\n".join(json.dumps(e) for e in events))
    hits = cli.json("trace", "我觉得寿司怎么样", "--limit", "5")
    assert [h["content"] for h in hits] == ["寿司店关门了", "我觉得火锅很好吃"]
    assert hits[1]["score"] < hits[0]["score"]
    assert [h["content"] for h in cli.json("trace", "我觉得寿司怎么样", "--limit", "1")] == [
        "寿司店关门了"  # enough found without the stopwords
    ]


# -- re-ranking: coverage and session context ---------------------------------------


def _turn(turn_id: int, session: str, turn_index: int) -> Turn:
    return Turn(turn_id, "g", "a", session, turn_index, "user", "", [], [], "", None, None, None)


def test_coverage_keeps_the_score_of_a_turn_holding_every_term():
    pool = [(_turn(1, "s", 0), 2.0), (_turn(2, "s", 5), 1.5)]
    holders = [{1, 2}, {2}]  # the first term is in both turns, the second only in turn 2
    terms = [QueryTerm("a", 1.0, 0), QueryTerm("b", 1.0, 1)]
    scores = rerank._weigh_by_coverage(pool, terms, holders, examined=2)
    assert scores[2] == 1.5
    assert scores[1] < 0.5  # holds only the term every candidate has


def test_context_adds_half_a_neighbours_score_and_a_quarter_two_turns_away():
    candidates = [_turn(i, "s", i) for i in range(1, 5)] + [_turn(9, "other", 2)]
    smoothed = rerank._with_context(candidates, {2: 4.0, 9: 8.0})
    assert smoothed == {1: 2.0, 2: 4.0, 3: 2.0, 4: 1.0, 9: 8.0}  # never across sessions


@pytest.fixture
def sessions(cli):
    events = [
        {
            "role": "user",
            "content": "plan the billing rollback before the deploy",
            "session": "ops",
        },
        {
            "role": "assistant",
            "content": "ok, I will write the deploy notes tonight",
            "session": "ops",
        },
        {"role": "user", "content": "thanks, sounds good", "session": "ops"},
        {"role": "user", "content": "deploy", "session": "misc"},
        {"role": "user", "content": "lunch at noon?", "session": "misc"},
    ]
    cli.ok("log", "--batch", input="\n".join(json.dumps(e) for e in events))


def test_a_neighbour_of_a_strong_match_outranks_an_isolated_weak_match(cli, sessions, monkeypatch):
    strong, neighbour, isolated = (
        "plan the billing rollback before the deploy",
        "ok, I will write the deploy notes tonight",
        "deploy",
    )
    hits = cli.json("trace", "billing rollback deploy")
    assert [h["content"] for h in hits] == [strong, neighbour, isolated]
    monkeypatch.setattr(rerank, "NEIGHBOUR_WEIGHTS", ())  # BM25 and coverage alone
    hits = cli.json("trace", "billing rollback deploy")
    assert [h["content"] for h in hits] == [strong, isolated, neighbour]


def test_turns_without_a_query_term_are_never_returned(cli, sessions):
    hits = cli.json("trace", "billing rollback")
    assert [h["content"] for h in hits] == ["plan the billing rollback before the deploy"]


def test_equal_scores_keep_a_deterministic_order(cli):
    events = [{"role": "user", "content": f"cache miss {i}", "session": f"s{i}"} for i in range(4)]
    cli.ok("log", "--batch", input="\n".join(json.dumps(e) for e in events))
    first = cli.json("trace", "cache")
    assert [h["content"] for h in first] == [f"cache miss {i}" for i in (3, 2, 1, 0)]
    assert cli.json("trace", "cache") == first


def test_the_candidates_are_tokenized_as_the_store_indexes_them(cli, home):
    """Re-ranking and recall's coverage match candidates in a scratch FTS table: it must
    tokenize as the store's turn, memory and episode indexes do."""
    cli.ok("log", "--session", "s", "--role", "user", "hello")
    with closing(sqlite3.connect(home / "memory.db")) as conn:
        for table in ("conversation_turns_fts", "memories_fts", "episodes_fts"):
            (ddl,) = conn.execute(
                "SELECT sql FROM sqlite_master WHERE name = ?", (table,)
            ).fetchone()
            assert f"tokenize='{fts.INDEX_TOKENIZER}'" in ddl, table
