"""The context builder's rules (seed 000 §3.2), message costs and cutting text to a
budget (the model table and the counters: test_models_tokens.py).

Budget arithmetic is checked with fixed message costs, so every number is visible:
``safe = int(limit·(1−margin))``, ``budget = safe − reserve − 3`` (the reply's priming).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from soloqueue_mem.context.build import build
from soloqueue_mem.context.tokens import counter_for, message_tokens
from soloqueue_mem.errors import UsageError
from soloqueue_mem.text.budget import ELLIPSIS, shorten

CL100K = counter_for("cl100k_base")

SYSTEM = {"role": "system", "content": "You are a careful assistant."}


def fixed(costs: dict[int, int]):
    """A ``tokens(position, message)`` that charges ``costs[position]`` (-1: system)."""
    return lambda position, message: costs[position]


def chat(*roles: str) -> list[dict]:
    return [{"role": role, "content": f"message {n}"} for n, role in enumerate(roles)]


def reasons(built) -> dict[int, str]:
    return {e.position: e.reason for e in built.entries if not e.kept}


# --- the emergency fallback ---------------------------------------------------------------


def test_a_system_message_over_the_budget_is_returned_alone_and_flagged():
    history = chat("user", "assistant")
    # limit 100, margin 0.05: safe 95, budget 95 - 0 - 3 = 92; the system costs 93
    built = build(SYSTEM, history, 100, 0, 0.05, fixed({-1: 93, 0: 1, 1: 1}))
    assert built.fallback
    assert built.messages == [SYSTEM]
    assert (built.safe, built.budget, built.used) == (95, 92, 93)
    assert reasons(built) == {
        0: "the system message alone exceeds the budget",
        1: "the system message alone exceeds the budget",
    }
    # one token less and the system message fits: no fallback
    exact = build(SYSTEM, history, 100, 0, 0.05, fixed({-1: 92, 0: 1, 1: 1}))
    assert not exact.fallback and exact.messages == [SYSTEM]


def test_the_cli_sends_an_oversized_system_prompt_alone_and_warns(cli):
    system = "Follow every rule below." * 200  # ~1000 tokens
    history = json.dumps(chat("user", "assistant", "user"))
    result = cli("context", "build", "--system", system, "--max-context", "300", "--reserve", "0",
                 input=history)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == [{"role": "system", "content": system}]
    assert "warning: the system message alone" in result.stderr
    assert "exceeds the budget (282)" in result.stderr  # int(300·0.95) − 0 − 3

    manifest = cli.json("context", "build", "--system", system, "--max-context", "300",
                        "--reserve", "0", "--manifest", input=history)  # fmt: skip
    assert manifest["fallback"] is True
    assert manifest["used"] > manifest["budget"] == 282
    assert [m["kept"] for m in manifest["manifest"]] == [True, False, False, False]


# --- margin and reserve -------------------------------------------------------------------


def test_the_margin_sets_the_safe_limit():
    history = chat("user", "assistant")
    costs = fixed({-1: 10, 0: 80, 1: 850})
    five = build(SYSTEM, history, 1000, 0, 0.05, costs)
    ten = build(SYSTEM, history, 1000, 0, 0.10, costs)
    assert (five.safe, five.budget) == (950, 947)
    assert (ten.safe, ten.budget) == (900, 897)
    # 947 − 10 − 850 = 87 leaves room for the 80-token message; 897 − 10 − 850 = 37 does not
    assert five.messages == [SYSTEM, *history]
    assert ten.messages == [SYSTEM, history[1]]
    assert reasons(ten) == {0: "budget spent by newer messages"}


@pytest.mark.parametrize("margin", ["0.2", "0.01", "0", "-0.05"])
def test_a_margin_outside_5_to_10_percent_is_a_usage_error(cli, margin):
    result = cli("context", "build", "--max-context", "1000", "--margin", margin, input="[]")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "--margin" in result.stderr


@pytest.mark.parametrize(("margin", "safe"), [("0.05", 950), ("0.1", 900), ("0.07", 930)])
def test_margins_from_5_to_10_percent_are_accepted(cli, margin, safe):
    out = cli.json("context", "build", "--max-context", "1000", "--reserve", "0",
                   "--margin", margin, "--manifest", input="[]")  # fmt: skip
    assert (out["safe"], out["budget"]) == (safe, safe - 3)


def test_the_reserve_is_kept_free_for_the_reply():
    history = chat("user", "assistant")
    costs = fixed({-1: 10, 0: 80, 1: 850})
    none = build(SYSTEM, history, 1000, 0, 0.05, costs)
    some = build(SYSTEM, history, 1000, 50, 0.05, costs)
    assert some.budget == none.budget - 50 == 897
    assert len(none.messages) == 3 and some.messages == [SYSTEM, history[1]]
    with pytest.raises(UsageError, match="--reserve"):
        build(SYSTEM, history, 1000, -1, 0.05, costs)


def test_the_default_reserve_is_4096_tokens(cli):
    out = cli.json("context", "build", "--max-context", "10000", "--manifest", input="[]")
    assert out["budget"] == 9500 - 4096 - 3


def test_a_reserve_larger_than_the_limit_falls_back_to_the_system_message(cli):
    history = json.dumps(chat("user"))
    result = cli("context", "build", "--system", "hi", "--max-context", "1000", input=history)
    assert result.exit_code == 0
    assert json.loads(result.stdout) == [{"role": "system", "content": "hi"}]
    assert "exceeds the budget (-3149)" in result.stderr  # 950 − 4096 − 3


# --- orphan tool results ------------------------------------------------------------------


def test_tool_results_whose_call_was_dropped_are_dropped_with_their_reason():
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "ls", "arguments": "{}"}},
            {"id": "b", "type": "function", "function": {"name": "df", "arguments": "{}"}},
        ],
    }
    history = [
        {"role": "user", "content": "look around"},
        call,
        {"role": "tool", "tool_call_id": "a", "content": "x"},
        {"role": "tool", "tool_call_id": "b", "content": "y"},
        {"role": "assistant", "content": "done"},
    ]
    costs = fixed({-1: 10, 0: 5, 1: 50, 2: 20, 3: 20, 4: 30})
    # budget 950 − 862 − 3 = 85: the system (10), then 30, 20, 20 fit; the call (50) does not
    built = build(SYSTEM, history, 1000, 862, 0.05, costs)
    assert built.budget == 85
    assert built.messages == [SYSTEM, history[4]]
    assert built.used == 40
    assert reasons(built) == {
        0: "budget spent by newer messages",
        1: "budget spent by newer messages",
        2: "tool result whose call was dropped",
        3: "tool result whose call was dropped",
    }
    assert [e.tokens for e in built.entries] == [10, 5, 50, 20, 20, 30]
    # with room for the call, the whole exchange is kept
    roomy = build(SYSTEM, history, 1000, 817, 0.05, costs)  # budget 130
    assert roomy.messages == [SYSTEM, *history[1:]]


# --- message costs ------------------------------------------------------------------------


def test_a_message_costs_its_role_content_and_tool_calls_plus_three():
    count = CL100K.count
    plain = {"role": "user", "content": "hello world"}
    assert message_tokens(plain, count) == count("user\nhello world") + 3
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "run_shell", "arguments": '{"cmd": "df -h /var"}'},
            }
        ],
    }
    assert message_tokens(call, count) == count('assistant\nrun_shell\n{"cmd": "df -h /var"}') + 3


# --- shorten ------------------------------------------------------------------------------


def test_shorten_keeps_text_that_fits_and_cuts_the_rest_with_an_ellipsis():
    count = CL100K.count
    text = "第一条：数据库在 db-prod-3 上。" * 40
    assert shorten(text, count(text), count) == text
    cut = shorten(text, 20, count)
    assert cut.endswith(ELLIPSIS) and text.startswith(cut[:-1])
    assert count(cut) <= 20
    assert count(shorten(text, 21, count)) > 17  # uses its room, not just a token or two
    assert shorten(text, 0, count) == ""


@settings(max_examples=60, deadline=None)
@given(
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=300),
    st.integers(0, 60),
)
def test_shorten_never_exceeds_its_room(text, room):
    count = CL100K.count
    cut = shorten(text, room, count)
    assert count(cut) <= room
    if count(text) <= room:
        assert cut == text
    elif cut:
        assert cut.endswith(ELLIPSIS) and text.startswith(cut[: -len(ELLIPSIS)])
