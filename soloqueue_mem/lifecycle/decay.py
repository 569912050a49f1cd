"""Decay (seed 003 §7.4): which memories fade, as pure functions over Memory values.

Only SHORT_TERM memories decay, and only those the user did not state (see
:func:`soloqueue_mem.memory.model.user_stated`): what the user said lives until its
``expires_at``. A decaying memory scores ``importance · (1 − decay_rate)^days`` since
its last access (or creation); below 0.1 with fewer than 2 accesses it is archived
(out of recall, recoverable with ``memory restore``), below 0.3 demoted to TRANSIENT
(it expires within a day).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import NamedTuple

from soloqueue_mem.clock import parse_timestamp
from soloqueue_mem.memory.model import Memory, user_stated

ARCHIVE_BELOW, DEMOTE_BELOW, MIN_ACCESSES = 0.1, 0.3, 2


class Plan(NamedTuple):
    archive: list[str]
    demote: list[str]


def score(memory: Memory, now: datetime) -> float:
    """``importance · (1 − decay_rate)^days_since_access`` (since creation if never)."""
    since = parse_timestamp(memory.last_accessed_at or memory.created_at)
    days = max(0.0, (now - since).total_seconds() / 86400)
    return memory.importance * (1 - memory.decay_rate) ** days


def decays(memory: Memory) -> bool:
    return memory.priority == "SHORT_TERM" and not user_stated(memory)


def plan(memories: Iterable[Memory], now: datetime) -> Plan:
    """Ids to archive and to demote among ``memories`` (active ones)."""
    result = Plan([], [])
    for memory in memories:
        if not decays(memory):
            continue
        value = score(memory, now)
        if value < ARCHIVE_BELOW and memory.access_count < MIN_ACCESSES:
            result.archive.append(memory.id)
        elif value < DEMOTE_BELOW:
            result.demote.append(memory.id)
    return result
