"""The context builder of seed 000 §3.2: the prompt an agent sends, inside its budget.

``safe = limit·(1 − margin)``, ``budget = safe − reserve`` (and the 3 tokens that prime
every reply). The system message always comes first; history is taken newest first
until the next message would overspend the budget, so what is kept is a suffix of the
history in its original order. A tool result whose call was dropped is dropped too
(an API refuses an orphan). When the system message alone is over budget it is
returned alone — the emergency fallback — and the result says so.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from soloqueue_mem.context.tokens import REPLY_PRIMING
from soloqueue_mem.errors import UsageError

MIN_MARGIN, MAX_MARGIN = 0.05, 0.10
EMPTY = "empty system message (not sent)"


class Entry(NamedTuple):
    """One candidate message with its token count and what happened to it."""

    position: int  # index in the history; -1 for the system message
    message: dict[str, Any]
    tokens: int | None  # None: a dropped message that was not counted
    kept: bool
    reason: str


class Built(NamedTuple):
    messages: list[dict[str, Any]]
    entries: list[Entry]  # system first, then the history oldest first
    limit: int
    safe: int
    budget: int
    used: int
    fallback: bool  # the system message alone exceeded the budget


def check_budget(limit: int, reserve: int, margin: float) -> None:
    if limit < 1:
        raise UsageError("--max-context must be a positive number of tokens")
    if reserve < 0:
        raise UsageError("--reserve must not be negative")
    if not MIN_MARGIN <= margin <= MAX_MARGIN:
        raise UsageError(f"--margin must be between {MIN_MARGIN} and {MAX_MARGIN} (5-10%)")


def build(
    system: dict[str, Any],
    history: Sequence[dict[str, Any]],
    limit: int,
    reserve: int,
    margin: float,
    tokens: Callable[[int, dict[str, Any]], int],
    count_dropped: bool = True,
) -> Built:
    """``tokens(position, message)`` counts a message (position -1 is the system one);
    without ``count_dropped`` the messages left out are not counted (faster)."""

    def dropped_cost(position: int, message: dict[str, Any]) -> int | None:
        return tokens(position, message) if count_dropped else None

    check_budget(limit, reserve, margin)
    # rounded first: 1000·(1 − 0.07) is 929.999… in binary floating point, not 930
    safe = math.floor(round(limit * (1 - margin), 6))
    budget = safe - reserve - REPLY_PRIMING
    sent = bool(system.get("content"))  # an empty system message is not sent
    system_tokens = tokens(-1, system) if sent else 0
    remaining = budget - system_tokens
    if remaining < 0:
        dropped = [
            Entry(i, m, dropped_cost(i, m), False, "the system message alone exceeds the budget")
            for i, m in enumerate(history)
        ]
        reason = "system message (over budget: fallback)" if sent else EMPTY
        head = Entry(-1, system, system_tokens, sent, reason)
        return Built(_sent(system, []), [head, *dropped], limit, safe, budget, system_tokens, True)
    kept: list[Entry] = []
    dropped = []
    position = len(history) - 1
    while position >= 0:
        message = history[position]
        cost = tokens(position, message)
        if cost > remaining:
            break
        kept.append(Entry(position, message, cost, True, "fits, newest first"))
        remaining -= cost
        position -= 1
    for older in range(position, -1, -1):
        message = history[older]
        dropped.append(Entry(older, message, dropped_cost(older, message), False, ""))
    kept.reverse()
    while kept and kept[0].message.get("role") == "tool":  # its tool call was dropped
        orphan = kept.pop(0)
        dropped.append(orphan._replace(kept=False, reason="tool result whose call was dropped"))
    dropped = [
        e if e.reason else e._replace(reason="budget spent by newer messages") for e in dropped
    ]
    dropped.sort(key=lambda e: e.position)
    head = Entry(-1, system, system_tokens, sent, "system message (always)" if sent else EMPTY)
    used = system_tokens + sum(e.tokens or 0 for e in kept)
    entries = [head, *sorted(dropped + kept, key=lambda e: e.position)]
    messages = _sent(system, [e.message for e in kept])
    return Built(messages, entries, limit, safe, budget, used, False)


def _sent(system: dict[str, Any], history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages to send: the system message first unless it is empty (an empty
    system message is noise to OpenAI's API and an error to some others)."""
    return [system, *history] if system.get("content") else history
