"""A tool failure the user answers is a lesson (issue 29: lessons from failures).

A failed tool result gives an ERROR memory (``extract.from_tool_results``), which lives
7 days and is keyed on its tool, so the tool's next failure replaces it: what a
`shell` call ran into last week is gone, whatever it taught. When the user speaks next
(no other tool call between: the failure is what they answer), their first sentence is
what they made of it, the cause or the fix ("monitor 的密码上周轮换了，vault 里有",
"哦，这根是充电线，没数据脚"). The failure and that answer together are a lesson: a
SKILL memory (experience, kept for good like every SKILL) naming what was attempted
(the call's first argument: a shell command, a path), the error's message line
(``tool_failure.message``) and the answer, in the user's own words:

    idf.py -p /dev/ttyUSB0 flash failed: Serial port /dev/ttyUSB0 — 哦，这根是充电线，没数据脚

A question about the attempt ("why couldn't we flash the board?") finds it by the
command's words weeks after the ERROR would have expired. The lesson replaces the
ERROR memory of its failure (``memory history`` shows both), so one failure takes one
place in recall; it has no key, so the tool's next failure leaves it alone. An answer
that asks something is no lesson.
"""

from __future__ import annotations

import re
from typing import Any

from soloqueue_mem.lifecycle import tool_failure
from soloqueue_mem.lifecycle.own_words import own_words
from soloqueue_mem.memory.store import Draft

ANSWER = " — "  # between the failure and the user's answer in a lesson's content
MAX_ATTEMPT = 120
MAX_ANSWER = 200


def lessons(records: list[dict[str, Any]], source: str) -> list[Draft]:
    """Lessons from a stretch of JSONL records: each failed tool result the user's next
    turn answers (no other tool call between)."""
    calls = {call.get("id"): call for r in records for call in r.get("tool_calls") or []}
    drafts = []
    failure: dict[str, Any] | None = None
    for record in records:
        if record.get("tool_calls"):
            failure = None  # another attempt: the user answers that one, not this
        for result in record.get("tool_results") or []:
            failure = result if tool_failure.failed(result) else None
        if record.get("role") != "user" or failure is None:
            continue
        answer = _answer(str(record.get("content") or ""))
        if answer:
            drafts.append(
                _lesson(calls.get(failure.get("tool_use_id"), {}), failure, answer, source)
            )
        failure = None
    return drafts


def _lesson(call: dict[str, Any], failure: dict[str, Any], answer: str, source: str) -> Draft:
    """The lesson, which replaces the ERROR memory of the same failure: its
    ``update_hint`` is that memory's text (:mod:`soloqueue_mem.memory.correction`), so
    the failure is one memory, and a correction cue in the answer ("密码轮换了") does
    not make the lesson replace some other memory."""
    output = str(failure.get("content") or "")
    line = tool_failure.message(output)[: tool_failure.MAX_MESSAGE]
    return Draft(
        content=f"{_attempt(call)} failed: {line}{ANSWER}{answer}",
        type="SKILL",
        source=source,
        update_hint=tool_failure.summary(str(call.get("name") or "tool"), output),
    )


def _attempt(call: dict[str, Any]) -> str:
    """What the failed call tried: its first string argument (a shell command, a path),
    else the tool's name."""
    arguments = call.get("input")
    if isinstance(arguments, dict):
        first = next((v for v in arguments.values() if isinstance(v, str) and v.strip()), "")
        if first:
            return " ".join(first.split())[:MAX_ATTEMPT]
    return str(call.get("name") or "tool")


def _answer(text: str) -> str:
    """The first sentence of the user's turn, in their own words, or "" when it asks."""
    first = re.split(r"(?<=[。！？!?])|(?<=\.)\s|\n", text.strip(), maxsplit=1)[0].strip()
    if not first or first.endswith(("?", "？")):
        return ""
    return own_words(first.rstrip("。.！!"))[:MAX_ANSWER]
