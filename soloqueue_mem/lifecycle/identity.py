"""The short files an agent reads first (seed 001 §2, 003 §6.3, §6.4, §7.4).

``identity/MEMORY.md``: the top memories by importance × recency, at most five per
type, about 1500 characters. ``identity/USER.md``: what is known about the user (their
facts and preferences) by category — basic info, tech stack, environment,
preferences, projects — chosen by keyword rules on subject, predicate and content.
``identity/personas/user_custom.md``: the user's traits promoted to the persona — their
preferences and standing rules stated with confidence at least ``TRAIT_CONFIDENCE``
(said twice: confidence combines as 1 − (1 − 0.5)²), best first; a model, when there is
one, writes them up as a short persona.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from functools import cache

from soloqueue_mem.clock import parse_timestamp
from soloqueue_mem.memory.model import Memory

MEMORY_CHARS = 1500
PER_TYPE = 5
USER_CHARS = 1200
TRAIT_CONFIDENCE = 0.75
TRAITS = 20
RECENCY_HALF_LIFE_DAYS = 30
TYPE_TITLES = {
    "RULE": "规则 Rules",
    "PREFERENCE": "偏好 Preferences",
    "FACT": "事实 Facts",
    "SKILL": "技能 Skills",
    "ERROR": "教训 Lessons",
}
USER_SUBJECTS = frozenset({"user", "用户", "me", "我", "i"})
# Keyword alternatives per category, first match wins; anything else is a preference.
CATEGORIES = {
    "基本信息 Basic info": (
        "name|名字|叫|live|住|work at|工作|job|role|职业|timezone|时区|age|年龄|email"
    ),
    "技术栈 Tech stack": (
        r"python|java|rust|go\b|golang|typescript|javascript|c\+\+|sql|react|vue|django"
        "|flask|fastapi|framework|language|语言|框架|库"
    ),
    "环境 Environment": (
        r"editor|ide\b|vim|emacs|helix|vscode|os\b|linux|mac|windows|shell|bash|zsh"
        "|terminal|目录|dir|path|编辑器|系统|环境"
    ),
    "项目 Projects": "project|项目|repo|仓库",
    "偏好 Preferences": ".",
}


def score(memory: Memory, now: datetime) -> float:
    """importance × recency (half-life 30 days since the last update)."""
    age = max(0.0, (now - parse_timestamp(memory.updated_at)).total_seconds() / 86400)
    return memory.importance * 0.5 ** (age / RECENCY_HALF_LIFE_DAYS)


def ranked(memories: Iterable[Memory], now: datetime) -> list[Memory]:
    """Best score first; equal scores by content, then creation time, so the same
    memories give the same files whatever their (random) ids."""
    return sorted(memories, key=lambda m: (-score(m, now), m.content, m.created_at, m.id))


def memory_md(memories: Iterable[Memory], now: datetime) -> str:
    """MEMORY.md: per type, the best five; lines added best first until ~1500 chars."""
    ranked_memories = ranked(memories, now)
    per_type: dict[str, list[Memory]] = {t: [] for t in TYPE_TITLES}
    for memory in ranked_memories:
        if len(per_type[memory.type]) < PER_TYPE:
            per_type[memory.type].append(memory)
    chosen = {m.id for ms in per_type.values() for m in ms}
    budget = MEMORY_CHARS
    kept: set[str] = set()
    for memory in ranked_memories:
        line = _line(memory.content)
        if memory.id in chosen and len(line) <= budget:
            kept.add(memory.id)
            budget -= len(line)
    sections = [
        f"## {title}\n" + "".join(_line(m.content) for m in per_type[t] if m.id in kept)
        for t, title in TYPE_TITLES.items()
        if any(m.id in kept for m in per_type[t])
    ]
    return "# MEMORY\n\n" + "\n".join(sections)


def _line(text: str) -> str:
    return "- " + " ".join(text.split()) + "\n"


@cache
def _category_patterns() -> dict[str, re.Pattern[str]]:
    return {name: re.compile(pattern, re.IGNORECASE) for name, pattern in CATEGORIES.items()}


def category(memory: Memory) -> str:
    text = f"{memory.predicate} {memory.content}"
    if memory.type == "PREFERENCE":
        text = memory.predicate  # preferences stay preferences unless the predicate says
    for name, pattern in _category_patterns().items():
        if pattern.search(text):
            return name
    return "偏好 Preferences"


def user_md(memories: Iterable[Memory], now: datetime) -> str:
    """USER.md: the user's facts and preferences by category, best first."""
    about_user = [m for m in memories if m.type in ("FACT", "PREFERENCE") and is_about_user(m)]
    grouped: dict[str, list[Memory]] = {name: [] for name in CATEGORIES}
    for memory in ranked(about_user, now):
        grouped[category(memory)].append(memory)
    budget = USER_CHARS
    sections = []
    for name, items in grouped.items():
        lines = []
        for memory in items:
            line = _line(memory.content)
            if len(line) <= budget:
                lines.append(line)
                budget -= len(line)
        if lines:
            sections.append(f"## {name}\n" + "".join(lines))
    return "# USER\n\n" + "\n".join(sections)


def is_about_user(memory: Memory) -> bool:
    return memory.subject.strip().lower() in USER_SUBJECTS


def traits(memories: Iterable[Memory], now: datetime) -> list[str]:
    """The user's preferences and rules stated with high confidence, best first."""
    chosen = [
        m
        for m in memories
        if m.type in ("PREFERENCE", "RULE") and m.confidence >= TRAIT_CONFIDENCE
        and (is_about_user(m) or not m.subject)
    ]  # fmt: skip
    return [" ".join(m.content.split()) for m in ranked(chosen, now)[:TRAITS]]


def persona_md(found: list[str], written: str | None = None) -> str:
    """user_custom.md: the traits as a list, or as the model ``written`` them."""
    body = written or "".join(_line(trait) for trait in found)
    return "# User persona\n\n" + body
