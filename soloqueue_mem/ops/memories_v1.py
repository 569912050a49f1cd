"""``import memories-v1``: the flat memory list of seed 003's v1 system (``memories.json``).

The file is a JSON array of memories, or an object holding one under ``memories``.
Each memory needs ``content``; the rest is mapped when present:

- ``type`` (any case): fact, preference, rule, skill and error as they are; ``context``
  becomes FACT, ``experience`` SKILL, ``persona``/``persona_trait`` PREFERENCE; any other
  becomes FACT tagged ``v1-type:<name>``.
- ``priority`` (transient, short_term, long_term, permanent): kept; the expiry is
  ``expires_at`` when given, else the priority's retention from ``created_at``; without
  a priority, the type's default duration.
- ``importance_score`` (or ``importance``), ``confidence``, ``access_count``, ``tags``,
  ``subject``, ``predicate``, ``created_at``, ``updated_at``, ``last_accessed_at``.
- ``id`` is kept as the new memory's source, ``v1:<id>``: importing the file again
  finds it there and adds nothing.

The whole file is checked before anything is written.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from soloqueue_mem.clock import iso, parse_timestamp
from soloqueue_mem.errors import BadInput
from soloqueue_mem.memory.model import DEFAULT_DURATION, RETENTION, Memory, check_unit, retention

V1_TYPES = {
    "fact": "FACT",
    "preference": "PREFERENCE",
    "rule": "RULE",
    "skill": "SKILL",
    "error": "ERROR",
    "context": "FACT",
    "experience": "SKILL",
    "persona": "PREFERENCE",
    "persona_trait": "PREFERENCE",
}


def items_of(document: Any) -> list[Any]:
    """The memories of a decoded ``memories.json``; BadInput for another shape."""
    if isinstance(document, dict) and isinstance(document.get("memories"), list):
        return list(document["memories"])
    if isinstance(document, list):
        return document
    raise BadInput('a v1 memories.json is a JSON array of memories (or {"memories": [...]})')


def convert(item: Any, group: str, agent: str, now: datetime) -> Memory:
    """One v1 memory as ours (a new id; the old one in ``source``). BadInput if unusable."""
    if not isinstance(item, dict):
        raise BadInput("a memory must be a JSON object")
    content = item.get("content")
    if not isinstance(content, str) or not content.strip():
        raise BadInput("a memory needs a non-empty 'content'")
    old_id = item.get("id")
    if not isinstance(old_id, str | int) or isinstance(old_id, bool) or not str(old_id):
        raise BadInput("a memory needs an 'id' (kept as its source)")
    raw_type = str(item.get("type") or "fact").strip().lower()
    kind = V1_TYPES.get(raw_type, "FACT")
    tags = [str(tag) for tag in _list(item, "tags")]
    if raw_type not in V1_TYPES:
        tags.append(f"v1-type:{raw_type}")
    created = _time(item, "created_at") or now
    updated = _time(item, "updated_at") or created
    accessed = _time(item, "last_accessed_at")
    priority, expires = _kept(item, kind, created)
    return Memory(
        id=uuid.uuid4().hex,
        group=group,
        agent=agent,
        type=kind,
        priority=priority,
        content=content.strip(),
        subject=str(item.get("subject") or ""),
        predicate=str(item.get("predicate") or ""),
        source=f"v1:{old_id}",
        source_episode_id=None,
        tags=tags,
        importance=check_unit("importance", _number(item, ("importance_score", "importance"), 0.5)),
        confidence=check_unit("confidence", _number(item, ("confidence",), 0.5)),
        access_count=int(_number(item, ("access_count",), 0)),
        decay_rate=0.1,
        created_at=iso(created),
        updated_at=iso(updated),
        last_accessed_at=iso(accessed) if accessed else None,
        expires_at=iso(expires) if expires else None,
        superseded_by=None,
        fixed_expiry=_time(item, "expires_at") is not None,
    )


def _kept(item: dict[str, Any], kind: str, created: datetime) -> tuple[str, datetime | None]:
    raw = item.get("priority")
    expires = _time(item, "expires_at")
    if raw is None:
        priority, default = retention(DEFAULT_DURATION[kind], created)
        return priority, expires or default
    priority = str(raw).strip().upper()
    if priority not in RETENTION:
        raise BadInput(f"unknown priority {raw!r} (use {', '.join(RETENTION)})")
    kept = RETENTION[priority]
    return priority, expires or (created + kept if kept else None)


def _time(item: dict[str, Any], name: str) -> datetime | None:
    value = item.get(name)
    if value is None or value == "":
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        from datetime import UTC

        return datetime.fromtimestamp(value, UTC)
    if not isinstance(value, str):
        raise BadInput(f"'{name}' must be an ISO 8601 time")
    return parse_timestamp(value)


def _number(item: dict[str, Any], names: tuple[str, ...], default: float) -> float:
    for name in names:
        value = item.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise BadInput(f"'{name}' must be a number")
        return float(value)
    return default


def _list(item: dict[str, Any], name: str) -> list[Any]:
    value = item.get(name) or []
    if not isinstance(value, list):
        raise BadInput(f"'{name}' must be a list")
    return value


def convert_all(document: Any, group: str, agent: str, now: datetime) -> list[Memory]:
    """Every memory of ``document`` as ours; BadInput naming the first unusable one."""
    memories = []
    for number, item in enumerate(items_of(document), 1):
        try:
            memories.append(convert(item, group, agent, now))
        except BadInput as exc:
            raise BadInput(f"memory {number}: {exc.reason}") from None
    return memories


def import_through(
    memories: list[Memory],
    by_source: Callable[[str, str, str], Memory | None],
    put_back: Callable[[Memory], str],
) -> dict[str, Any]:
    """Add the converted memories not imported before (found by their ``v1:`` source),
    through a back end's ``by_source`` and ``put_back``."""
    added, existing = [], 0
    for memory in memories:
        if by_source(memory.group, memory.agent, memory.source) is not None:
            existing += 1
        elif put_back(memory) == "added":
            added.append(memory.id)
    return {"records": len(memories), "added": len(added), "existing": existing, "ids": added}
