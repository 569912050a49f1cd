"""Quick, deterministic extraction of semantic memories from turns (seed 003 §5.4/§5.6).

No model: patterns for the statements people make about themselves and their rules,
in Chinese and English, each producing a subject/predicate-shaped draft that goes
through ``remember``'s update rules. Only user turns yield preferences, facts and
rules (an assistant's sentences are not the user's word); failed tool results yield
ERROR memories whoever logged them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any, NamedTuple

from soloqueue_mem.memory.store import Draft

SOURCE = "rules"
MAX_SENTENCE = 200


class Pattern(NamedTuple):
    regex: re.Pattern[str]
    type: str
    predicate: str  # "{0}" takes the first group; "" for a list (likes, rules), never superseded
    content: str  # format string over the groups
    duration: str | None = None


def _p(pattern: str, type_: str, predicate: str, content: str, duration: str | None = None):
    return Pattern(re.compile(pattern, re.IGNORECASE), type_, predicate, content, duration)


@cache
def _patterns() -> tuple[Pattern, ...]:
    obj = r"(.{2,120}?)"
    return (
        # English: rules first (they often contain "I")
        _p(
            r"^(?:please\s+)?(?:always)\s+" + obj + r"$",
            "RULE",
            "",
            "Always {0}",
            "permanent",
        ),
        _p(
            r"^(?:please\s+)?(?:never|don't ever|do not ever)\s+" + obj + r"$",
            "RULE",
            "",
            "Never {0}",
            "permanent",
        ),
        _p(r"^(?:please\s+)?(?:don't|do not)\s+" + obj + r"$", "RULE", "", "Don't {0}"),
        _p(
            r"^my favou?rite ([\w ]{2,30}?) (?:is|are) " + obj + r"$",
            "PREFERENCE",
            "favorite {0}",
            "User's favorite {0} is {1}",
        ),
        _p(
            r"^i (?:really )?(?:prefer|like|love|enjoy) " + obj + r"$",
            "PREFERENCE",
            "",
            "User likes {0}",
        ),
        _p(
            r"^i (?:really )?(?:hate|dislike|don't like|do not like) " + obj + r"$",
            "PREFERENCE",
            "",
            "User dislikes {0}",
        ),
        _p(r"^my name is " + obj + r"$", "FACT", "name", "User's name is {0}", "permanent"),
        _p(r"^my ([\w ]{2,30}?) (?:is|are) " + obj + r"$", "FACT", "{0}", "User's {0} is {1}"),
        _p(r"^i (?:live|am based) in " + obj + r"$", "FACT", "lives in", "User lives in {0}"),
        _p(r"^i work (?:at|for) " + obj + r"$", "FACT", "works at", "User works at {0}"),
        _p(r"^i(?:'m| am) (?:using|on) " + obj + r"$", "FACT", "", "User uses {0}"),
        # Chinese
        _p(
            r"^(?:请)?(?:永远不要|绝对不要|禁止|不准|不许)" + obj + r"$",
            "RULE",
            "",
            "禁止{0}",
            "permanent",
        ),
        _p(
            r"^(?:请)?(?:总是|始终|一定要|务必|必须)" + obj + r"$",
            "RULE",
            "",
            "必须{0}",
            "permanent",
        ),
        _p(r"^(?:请)?(?:不要|别)" + obj + r"$", "RULE", "", "不要{0}"),
        _p(
            r"^我(?:最)?喜欢的(.{1,10}?)是" + obj + r"$",
            "PREFERENCE",
            "最喜欢的{0}",
            "用户最喜欢的{0}是{1}",
        ),
        _p(
            r"^我(?:很|非常|比较|更)?(?:喜欢|偏好|爱用|习惯用)" + obj + r"$",
            "PREFERENCE",
            "",
            "用户喜欢{0}",
        ),
        _p(r"^我(?:很|非常)?(?:讨厌|不喜欢)" + obj + r"$", "PREFERENCE", "", "用户不喜欢{0}"),
        _p(r"^我叫" + obj + r"$", "FACT", "名字", "用户的名字是{0}", "permanent"),
        _p(r"^我的(.{1,10}?)是" + obj + r"$", "FACT", "{0}", "用户的{0}是{1}"),
        _p(r"^我(?:住在|在)(.{1,30}?)(?:工作|上班)$", "FACT", "工作地点", "用户在{0}工作"),
        _p(r"^我住在" + obj + r"$", "FACT", "住址", "用户住在{0}"),
        _p(r"^我(?:在用|正在用|使用)" + obj + r"$", "FACT", "", "用户使用{0}"),
    )


@cache
def _sentence_split() -> re.Pattern[str]:
    # Chinese punctuation always ends a sentence; . ! ? only before a space or the end,
    # so paths, versions and URLs stay whole.
    return re.compile(r"[。！？；;，\n]+|[.!?]+(?=\s|$)")


def sentences(text: str) -> Iterator[str]:
    for part in _sentence_split().split(text):
        part = part.strip(" \t,，、:：\"'“”")
        if 2 <= len(part) <= MAX_SENTENCE:
            yield part


def from_text(text: str) -> list[Draft]:
    """The drafts the user's ``text`` states, in order, at most one per sentence."""
    drafts = []
    for sentence in sentences(text):
        for pattern in _patterns():
            found = pattern.regex.match(sentence)
            if found is None:
                continue
            groups = [g.strip() for g in found.groups()]
            drafts.append(
                Draft(
                    content=pattern.content.format(*groups),
                    type=pattern.type,
                    subject="user" if pattern.content[:1].isascii() else "用户",
                    predicate=pattern.predicate.format(*groups).lower(),  # "" for lists
                    duration=pattern.duration,
                    source=SOURCE,
                )
            )
            break
    return drafts


def from_tool_results(
    tool_results: list[dict[str, Any]], tool_names: dict[str, str]
) -> list[Draft]:
    """ERROR memories from failed tool results: which tool failed, and how."""
    drafts = []
    for result in tool_results:
        if not result.get("is_error"):
            continue
        name = tool_names.get(result.get("tool_use_id") or "", "tool")
        first_line = next(
            (line for line in str(result["content"]).splitlines() if line.strip()), ""
        )
        drafts.append(
            Draft(
                content=f"{name} failed: {first_line.strip()[:MAX_SENTENCE]}",
                type="ERROR",
                subject=name,
                predicate="error",
                source=SOURCE,
            )
        )
    return drafts


def from_turn(
    role: str, content: str, tool_results: list[dict[str, Any]], tool_names: dict[str, str]
) -> list[Draft]:
    drafts = from_text(content) if role == "user" else []
    return drafts + from_tool_results(tool_results, tool_names)


def from_records(records: list[dict[str, Any]]) -> list[Draft]:
    """Drafts from a stretch of JSONL records (tool names resolved within it)."""
    names = {call.get("id"): call["name"] for r in records for call in r.get("tool_calls") or []}
    found: list[Draft] = []
    for record in records:
        found += from_turn(
            record["role"], record.get("content") or "", record.get("tool_results") or [], names
        )
    return found
