"""A coming window ("下周", "next month", "我四月有啥安排？") finds the plans dated in it:
said days before, each plan is a memory starting with its day, and the question's
window, read ahead when it asks what is planned, adds them, the first day first."""

from __future__ import annotations

from datetime import UTC, datetime

from soloqueue_mem import Store
from tests.cli.test_consolidate import at, recalled, say
from tests.cli.test_extraction_cli import night

# said on Thursday 2026-11-26 (the suite's SOLOQUEUE_NOW): next week is Nov 30 - Dec 6
PLANS = [
    "明天要去北京见客户",  # 2026-11-27
    "下周三我们要把数据库迁到 k8s",  # 2026-12-02
    "Next week we plan to upgrade Redis to 7.2.",  # 2026-12-03
    "12月20号我要去上海出差",  # 2026-12-20
    "We are going to Berlin for the trade fair on April 23.",  # 2027-04-23
    "我们的值班安排放在 wiki 上",  # no plan: it holds the word 安排
]
NEXT_WEEK = [
    "计划（2026-12-02）：下周三我们要把数据库迁到 k8s",
    "Plan for 2026-12-03: Next week we plan to upgrade Redis to 7.2",
]


def contents(hits: list[dict]) -> list[str]:
    return [h["content"] for h in hits]


def told_plans(cli, monkeypatch) -> None:
    say(cli, "plans", *PLANS)
    night(cli, monkeypatch, "2026-11-26T23:00:00Z")
    at(monkeypatch, "2026-11-27T09:30:00Z")  # a Friday


def test_next_week_returns_its_plans_first_in_either_language(cli, monkeypatch):
    told_plans(cli, monkeypatch)
    for question in ("下周有什么安排？", "What's planned for next week?"):
        hits = recalled(cli, question, "--explain")
        assert contents(hits)[:2] == NEXT_WEEK, question  # ordered by day
        assert all("when" in h["channels"] for h in hits[:2])
        later = [c for c in contents(hits) if c.startswith(("计划（2026-12-20", "Plan for 2027"))]
        assert later == []  # dated outside the window: not among the answers


def test_a_month_named_in_a_plan_question_is_the_coming_one(cli, monkeypatch):
    told_plans(cli, monkeypatch)
    assert contents(recalled(cli, "下个月有什么安排？"))[:3] == [
        *NEXT_WEEK,
        "计划（2026-12-20）：12月20号用户要去上海出差",
    ]
    berlin = "Plan for 2027-04-23: We are going to Berlin for the trade fair on April 23"
    assert contents(recalled(cli, "我四月有啥安排？"))[0] == berlin
    assert contents(recalled(cli, "anything planned for Friday?"))[0] == (
        "计划（2026-11-27）：明天要去北京见客户"  # today is a Friday
    )


def test_a_word_match_stays_first_when_the_question_has_words_of_its_own(cli, monkeypatch):
    """The window adds, it removes nothing: "下周数据库要做什么？" still matches 数据库."""
    told_plans(cli, monkeypatch)
    hits = contents(recalled(cli, "下周数据库迁移的事定了吗？"))
    assert hits[0] == NEXT_WEEK[0]
    assert NEXT_WEEK[1] in hits  # in the window, though it shares no word


def test_a_past_question_is_unchanged(cli, monkeypatch):
    told_plans(cli, monkeypatch)
    hits = recalled(cli, "我四月做了什么？")  # behind: last April, which holds nothing
    assert not any(c.startswith("Plan for 2027") for c in contents(hits)[:1])
    hits = recalled(cli, "值班安排在哪？")
    assert contents(hits)[0] == "我们的值班安排放在 wiki 上"


def test_the_library_finds_a_coming_windows_plans(home):
    said = datetime(2026, 11, 26, 10, tzinfo=UTC)
    asked = datetime(2026, 11, 27, 9, 30, tzinfo=UTC)
    clock = [said]
    with Store(clock=lambda: clock[0]) as store:
        for text in PLANS:
            store.log(text, session="plans")
        store.session_end("plans")
        clock[0] = asked
        hits = store.recall("下周有什么安排？").hits
    assert [h.candidate.content for h in hits[:2]] == NEXT_WEEK
