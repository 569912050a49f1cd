"""The agent-memory scenario set (benchmarks/data/agent_scenarios_*.jsonl) is well formed.

Reads the tuned and held-out halves and the development set (written after the first
blind held-out run, to generalise extraction without looking at the held-out half) and
checks their schema and the promises the set makes (at least 40 checks per file, every
category in each, cross-language questions, corrections with an outdated value,
answers that were actually said). Runs no CLI and no benchmark.
"""

from __future__ import annotations

import importlib.util
import json
import re
from datetime import date
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _runner() -> Any:
    """The benchmark's own module: its file names, categories, nights and judge are
    what this test holds the data to."""
    spec = importlib.util.spec_from_file_location("bench_scenarios", BENCH / "bench_scenarios.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RUNNER = _runner()
HALVES = RUNNER.HALVES
CATEGORIES = set(RUNNER.CATEGORIES)
NIGHTS = set(RUNNER.NIGHTS)
LANGS = {"zh", "en", "mixed"}
ROLES = {"user", "assistant", "tool"}
ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


def load(half: str) -> list[dict[str, Any]]:
    with HALVES[half].open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def spoken(scenario: dict[str, Any]) -> str:
    """Everything logged in a scenario, case-folded: contents, tool arguments, results."""
    parts = []
    for session in scenario["sessions"]:
        for message in session["messages"]:
            parts.append(message.get("content") or "")
            for call in message.get("tool_calls") or []:
                parts.append(call["function"]["name"])
                parts.append(call["function"]["arguments"])
    return "\n".join(parts).casefold()


def all_checks(half: str) -> list[dict[str, Any]]:
    return [check for scenario in load(half) for check in scenario["checks"]]


@pytest.mark.parametrize("half", sorted(HALVES))
def test_scenarios_are_well_formed(half: str) -> None:
    scenarios = load(half)
    assert scenarios
    for scenario in scenarios:
        assert scenario["half"] == half
        assert (
            ID.match(scenario["id"]) and ID.match(scenario["group"]) and ID.match(scenario["agent"])
        )
        date.fromisoformat(scenario["start_date"])
        days = [s["day"] for s in scenario["sessions"]]
        assert len(days) >= 2 and len(set(days)) == len(days), "sessions on different days"
        assert days == sorted(days) and days[0] == 0
        failing_tools = 0
        for session in scenario["sessions"]:
            assert ID.match(session["id"])
            assert re.match(r"^\d\d:\d\d$", session["start"])
            open_calls: set[str] = set()
            for message in session["messages"]:
                assert message["role"] in ROLES
                assert "is_error" not in message, "OpenAI tool messages carry no is_error"
                for call in message.get("tool_calls") or []:
                    assert message["role"] == "assistant"
                    assert call["type"] == "function" and call["function"]["name"]
                    json.loads(call["function"]["arguments"])
                    open_calls.add(call["id"])
                if message["role"] == "tool":
                    assert message["tool_call_id"] in open_calls
                    assert isinstance(message["content"], str) and message["content"]
                    text = message["content"].lower()
                    if any(
                        w in text for w in ("error", "failed", "refused", "traceback", "forbidden")
                    ):
                        failing_tools += 1
                else:
                    assert isinstance(message.get("content"), str) or message.get("tool_calls")
        assert failing_tools >= 1, f"{scenario['id']}: at least one failing tool"


@pytest.mark.parametrize("half", sorted(HALVES))
def test_checks_are_well_formed_and_answerable(half: str) -> None:
    for scenario in load(half):
        said = spoken(scenario)
        for check in scenario["checks"]:
            where = check.get("id")
            assert isinstance(where, str) and ID.match(where)
            assert isinstance(check["question"], str) and check["question"].strip()
            assert check["category"] in CATEGORIES, where
            nights = check["nights"]
            assert nights and set(nights) <= NIGHTS and nights == sorted(set(nights)), where
            assert check["q_lang"] in LANGS and check["stated_lang"] in LANGS, where
            expected = check.get("expected") or []
            gone = check.get("expect_absent") or []
            assert expected or gone, f"{where}: expected or expect_absent"
            for key in ("expected", "absent_before", "expect_absent"):
                values = check.get(key)
                if values is not None:
                    assert isinstance(values, list) and values, f"{where}: {key}"
                    assert all(isinstance(v, str) and v.strip() for v in values), where
            if expected:
                assert any(e.casefold() in said for e in expected), f"{where}: answer never said"
                question = check["question"].casefold()
                assert not any(e.casefold() in question for e in expected), (
                    f"{where}: the question gives the answer away"
                )
            for value in check.get("absent_before") or []:
                assert value.casefold() in said, f"{where}: outdated value {value!r} never said"
            if check.get("absent_before"):
                assert expected, f"{where}: absent_before needs expected"
            for value in gone:
                assert value.casefold() in said, f"{where}: absent value {value!r} never said"


def test_halves_are_large_distinct_and_cover_every_category() -> None:
    halves = [all_checks(half) for half in HALVES]
    assert all(len(half) >= 40 for half in halves)
    checks = [check for half in halves for check in half]
    assert len({c["id"] for c in checks}) == len(checks), "check ids are unique"
    for half in halves:
        assert {c["category"] for c in half} == CATEGORIES
        assert any(c.get("expect_absent") for c in half)
        assert {n for c in half for n in c["nights"]} == NIGHTS
    corrections = [c for c in checks if c["category"] == "correction"]
    assert len(corrections) >= 10
    assert all(c.get("absent_before") for c in corrections)
    cross = [c for c in checks if {c["q_lang"], c["stated_lang"]} == {"zh", "en"}]
    assert len(cross) >= 0.2 * len(checks)
    scenarios = [scenario for half in HALVES for scenario in load(half)]
    assert len({s["id"] for s in scenarios}) == len(scenarios)
    assert len({s["group"] for s in scenarios}) == len(scenarios), "different users per file"


def test_runner_scoring() -> None:
    """The runner's judge: answer in the top 10, outdated value not above it, expired plan
    not a live memory (turns may still mention it)."""
    judge = RUNNER.judge

    def hit(content: str, kind: str = "turn") -> dict[str, str]:
        return {"kind": kind, "content": content, "text": "[记忆] " + content}

    check = {"expected": ["Retries are 8"], "absent_before": ["5 次"]}
    assert judge(check, [hit("x"), hit("actually RETRIES ARE 8 now")])[0]
    assert not judge(check, [hit("retry 5 次"), hit("retries are 8")])[0]
    assert judge(check, [hit("retries are 8"), hit("retry 5 次")])[0]
    assert judge(check, [hit("以前 5 次, now retries are 8")])[0]
    assert not judge(check, [hit("x")] * 10 + [hit("retries are 8")])[0]
    plan = {"expect_absent": ["Aurora"]}
    assert judge(plan, [hit("cut over to Aurora on March 13")])[0]
    assert not judge(plan, [hit("x"), hit("Plan: Aurora cutover", "memory")])[0]
    assert judge(plan, [])[0]
