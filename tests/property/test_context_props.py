"""Properties of the context builder (seed 000 §3.2) under the real cl100k counter.

For random histories (user, assistant and tool messages, Chinese and English, tool-call
pairs) and random limits, reserves and margins: the result fits the budget (or is the
system message alone, flagged as the fallback), the system message comes first, the
kept history is a suffix of the input with no orphan tool result, the manifest accounts
for every message once, and a smaller limit never keeps more.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from soloqueue_mem.context.build import build
from soloqueue_mem.context.tokens import REPLY_PRIMING, counter_for, message_tokens

COUNTER = counter_for("cl100k_base")
COUNT = COUNTER.count
SETTINGS = settings(max_examples=80, deadline=None)

WORDS = [
    "the",
    "deploy",
    "failed",
    "because",
    "disk",
    "is",
    "full",
    "数据库",
    "连接",
    "超时",
    "我们",
    "需要",
    "清理",
    "日志",
    "def f(x): return x * 2",
    "SELECT * FROM t;",
    "\n",
    "。",
    "!",
]
texts = st.one_of(
    st.lists(st.sampled_from(WORDS), max_size=25).map(" ".join),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60),
)


def tokens(position: int, message: dict) -> int:
    return message_tokens(message, COUNT)


@st.composite
def histories(draw: st.DrawFn) -> list[dict]:
    """Well-formed OpenAI histories: every tool result follows its assistant call."""
    messages: list[dict] = []
    calls = 0
    for kind in draw(
        st.lists(st.sampled_from(["user", "assistant", "tools"]), min_size=1, max_size=20)
    ):
        if kind != "tools":
            messages.append({"role": kind, "content": draw(texts)})
            continue
        ids = []
        tool_calls = []
        for _ in range(draw(st.integers(1, 3))):
            calls += 1
            ids.append(f"call_{calls}")
            arguments = json.dumps({"cmd": draw(texts)}, ensure_ascii=False)
            tool_calls.append(
                {
                    "id": ids[-1],
                    "type": "function",
                    "function": {"name": "run_shell", "arguments": arguments},
                }
            )
        messages.append({"role": "assistant", "content": None, "tool_calls": tool_calls})
        messages += [{"role": "tool", "tool_call_id": i, "content": draw(texts)} for i in ids]
    return messages


systems = texts.map(lambda text: {"role": "system", "content": text})
reserves = st.one_of(st.integers(0, 20), st.integers(0, 300))
margins = st.floats(0.05, 0.10)


@st.composite
def cases(draw: st.DrawFn, limits: int = 1) -> tuple:
    """(system, history, reserve, margin, *limits); most limits land where the budget
    runs out somewhere inside the history, some anywhere at all."""
    system, history = draw(systems), draw(histories())
    reserve, margin = draw(reserves), draw(margins)
    fixed = tokens(-1, system) + REPLY_PRIMING + reserve
    total = sum(tokens(i, m) for i, m in enumerate(history))
    around = st.integers(-20, total + 20).map(lambda extra: int((fixed + extra) / (1 - margin)))
    anywhere = st.integers(1, 3000)
    chosen = [draw(st.one_of(around.filter(lambda n: n >= 1), anywhere)) for _ in range(limits)]
    return (system, history, reserve, margin, *chosen)


def run(system: dict, history: list[dict], limit: int, reserve: int, margin: float):
    return build(system, history, limit, reserve, margin, tokens)


@SETTINGS
@given(cases())
def test_the_result_fits_the_budget_or_is_the_flagged_fallback(case):
    system, history, reserve, margin, limit = case
    built = run(system, history, limit, reserve, margin)
    total = sum(message_tokens(m, COUNT) for m in built.messages)
    assert built.used == total
    exact_safe = limit * (1 - margin)
    assert exact_safe - 1 < built.safe <= exact_safe + 1e-6
    # what is sent plus the reply's priming plus the reserve fits limit·(1−margin)
    fits = total + REPLY_PRIMING + reserve <= built.safe
    if built.fallback:
        assert built.messages == ([system] if system["content"] else [])
        assert not fits  # the fallback is only taken when the system message cannot fit
    else:
        assert fits
        assert total <= built.budget


@SETTINGS
@given(cases())
def test_system_first_and_kept_history_is_a_suffix_without_orphans(case):
    system, history, reserve, margin, limit = case
    built = run(system, history, limit, reserve, margin)
    sent = [system] if system["content"] else []  # an empty system message is not sent
    assert built.messages[: len(sent)] == sent
    kept = built.messages[len(sent) :]
    assert all(m.get("role") != "system" for m in kept)
    assert kept == history[len(history) - len(kept) :]  # a suffix, original order, unchanged
    if kept:
        assert kept[0]["role"] != "tool"
    called = {c["id"] for m in kept for c in m.get("tool_calls") or []}
    assert all(m["tool_call_id"] in called for m in kept if m["role"] == "tool")


@SETTINGS
@given(cases())
def test_nothing_that_would_fit_is_left_out(case):
    """Newest first until the next message would overspend: the newest message dropped
    for the budget really did not fit in what the kept ones (and the orphans) left."""
    system, history, reserve, margin, limit = case
    built = run(system, history, limit, reserve, margin)
    if built.fallback:
        return
    entries = built.entries[1:]
    orphans = [e for e in entries if e.reason == "tool result whose call was dropped"]
    spent = [e for e in entries if not e.kept and e not in orphans]
    assert all(e.reason == "budget spent by newer messages" for e in spent)
    if spent:
        newest = max(spent, key=lambda e: e.position)
        assert built.used + sum(e.tokens for e in orphans) + newest.tokens > built.budget
    else:
        sent = 1 if built.entries[0].kept else 0  # the system message, unless empty
        assert not orphans and len(built.messages) == len(history) + sent


@SETTINGS
@given(cases())
def test_the_manifest_lists_every_message_once(case):
    system, history, reserve, margin, limit = case
    built = run(system, history, limit, reserve, margin)
    assert [e.position for e in built.entries] == list(range(-1, len(history)))
    head = built.entries[0]
    assert head.message is system and head.kept == bool(system["content"])
    for entry in built.entries[1:]:
        assert entry.message is history[entry.position]
        assert entry.tokens == message_tokens(entry.message, COUNT)
        assert entry.reason
    assert [e.message for e in built.entries if e.kept] == built.messages


@SETTINGS
@given(cases(limits=2))
def test_shrinking_the_limit_never_adds_messages(case):
    system, history, reserve, margin, a, b = case
    small, large = sorted((a, b))
    kept_small = run(system, history, small, reserve, margin).messages
    kept_large = run(system, history, large, reserve, margin).messages
    assert len(kept_small) <= len(kept_large)
    assert kept_small[1:] == kept_large[len(kept_large) - len(kept_small) + 1 :]


@SETTINGS
@given(cases(), reserves, margins)
def test_a_bigger_reserve_or_margin_never_adds_messages(case, other_reserve, other_margin):
    system, history, reserve, margin, limit = case
    loose = run(system, history, limit, min(reserve, other_reserve), min(margin, other_margin))
    tight = run(system, history, limit, max(reserve, other_reserve), max(margin, other_margin))
    assert len(tight.messages) <= len(loose.messages)
    assert tight.budget <= loose.budget
