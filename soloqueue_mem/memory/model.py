"""Memory types, priorities and retention (seed 001 §4), and the Memory value."""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime, timedelta

from soloqueue_mem.clock import iso, parse_duration
from soloqueue_mem.errors import BadInput
from soloqueue_mem.tuples import NamedTuple

TYPES = ("FACT", "PREFERENCE", "RULE", "SKILL", "ERROR")

# Priority -> retention; None is forever. A memory's priority is the shortest one
# whose retention covers its duration.
RETENTION: dict[str, timedelta | None] = {
    "TRANSIENT": timedelta(days=1),
    "SHORT_TERM": timedelta(days=3),
    "LONG_TERM": timedelta(days=30),
    "PERMANENT": None,
}

# Seed 001: preferences and skills are kept, errors for a week, task rules for a
# day (behaviour rules say --duration permanent), facts for a month.
DEFAULT_DURATION = {
    "FACT": "30d",
    "PREFERENCE": "permanent",
    "SKILL": "permanent",
    "ERROR": "7d",
    "RULE": "24h",
}
DURATION_HELP = "permanent, session (1 day), or a length such as 24h, 7d, 30d"

# What the user stated: `remember` (manual) and what extraction (rules or the model)
# found in their turns. Tool failures are observed, not stated: ERROR memories (and
# any other source a caller names, e.g. `--source agent`) are not user-stated.
USER_SOURCES = frozenset({"manual", "rules", "llm"})


class Memory(NamedTuple):
    id: str
    group: str
    agent: str
    type: str
    priority: str
    content: str
    subject: str
    predicate: str
    source: str
    source_episode_id: str | None
    tags: list[str]
    importance: float
    confidence: float
    access_count: int
    decay_rate: float
    created_at: str
    updated_at: str
    last_accessed_at: str | None
    expires_at: str | None
    superseded_by: str | None
    archived_at: str | None = None  # decayed out of recall; `memory restore` brings it back
    fixed_expiry: bool = False  # a stated duration (a plan's date): recall does not move it


def recallable(memory: Memory, now: datetime) -> bool:
    """Neither superseded, archived nor expired: what recall may return (the same rule
    as memory.store's SQL for active memories)."""
    return (
        memory.superseded_by is None
        and memory.archived_at is None
        and (memory.expires_at is None or memory.expires_at > iso(now))
    )


def check_type(value: str) -> str:
    upper = value.strip().upper()
    if upper not in TYPES:
        raise BadInput(f"unknown memory type {value!r} (use {', '.join(TYPES)})")
    return upper


def check_unit(name: str, value: float) -> float:
    """Importance and confidence are fractions in [0, 1]."""
    if not 0.0 <= value <= 1.0:
        raise BadInput(f"{name} must be between 0 and 1, not {value}")
    return float(value)


def retention(duration: str, now: datetime) -> tuple[str, datetime | None]:
    """``(priority, expires_at)`` for a duration: ``permanent``, ``session`` or ``7d``."""
    text = duration.strip().lower()
    if text == "permanent":
        return "PERMANENT", None
    if text == "session":  # seed 001: TRANSIENT, cleared when the session ends
        text = "1d"
    try:
        length = timedelta(seconds=parse_duration(text))
    except BadInput:
        raise BadInput(f"not a duration: {duration!r} (use {DURATION_HELP})") from None
    if length <= timedelta(0):
        raise BadInput(f"duration must be positive: {duration!r}")
    # The shortest priority that keeps it that long; anything that expires at all is
    # at most LONG_TERM (PERMANENT means "never expires").
    priority = next((p for p, kept in RETENTION.items() if kept and length <= kept), "LONG_TERM")
    return priority, now + length


def fixed_expiry(duration: str | None, type_: str, now: datetime) -> bool:
    """Whether ``duration`` is stated rather than the type's default: an expiry that
    differs from the default one stays where it was put (recall does not extend it)."""
    if duration is None:
        return False
    stated = retention(duration, now)
    return stated[1] is not None and stated != retention(DEFAULT_DURATION[type_], now)


def renewed(memory: Memory, now: datetime) -> str | None:
    """The expiry after a retrieval: a SHORT_TERM or LONG_TERM memory is kept at least
    its type's default retention from now, as re-stating it would (a FACT 30 days),
    never less than before. A fixed expiry (a plan's date), TRANSIENT and PERMANENT
    memories keep theirs."""
    if memory.fixed_expiry or memory.expires_at is None:
        return memory.expires_at
    if memory.priority not in ("SHORT_TERM", "LONG_TERM"):
        return memory.expires_at
    until = retention(DEFAULT_DURATION[memory.type], now)[1]
    return memory.expires_at if until is None else max(memory.expires_at, iso(until))


def user_stated(memory: Memory) -> bool:
    """Whether the user said it (see ``USER_SOURCES``): such a memory lives until its
    ``expires_at`` and decay never shortens or archives it."""
    return memory.source in USER_SOURCES and memory.type != "ERROR"


def check_duration(duration: str) -> str:
    """``duration`` if :func:`retention` accepts it; BadInput otherwise (no clock needed)."""
    retention(duration, datetime(2000, 1, 1, tzinfo=UTC))
    return duration


def normalize(text: str) -> str:
    """The form two statements of the same thing share: NFKC, case-folded, words only."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.findall(r"[^\W_]+", folded))


def content_key(text: str) -> str:
    import hashlib  # on first use: its OpenSSL start-up costs a one-shot process 3-20 ms

    return hashlib.sha256(normalize(text).encode("utf-8")).hexdigest()[:32]


def check_tags(tags: list[str]) -> list[str]:
    cleaned = []
    for tag in tags:
        tag = tag.strip()
        if not tag or len(tag) > 64 or any(c.isspace() or not c.isprintable() for c in tag):
            raise BadInput(f"bad tag {tag!r}: 1-64 printable characters without spaces")
        cleaned.append(tag)
    return sorted(set(cleaned))
