"""Ranking of broad queries (more matches than BROAD_MATCHES), on a small store with a
small threshold so every path of the bounded ranking runs."""

from __future__ import annotations

import json

import pytest

import soloqueue_mem.sessions.ranking as ranking


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
    assert len(hits) == 3  # ranked among the 3 newest matches in scope
    assert [h["turn_index"] for h in hits] == [8, 7, 6]
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
