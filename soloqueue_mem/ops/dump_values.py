"""The values of a dump's records, checked before an import writes anything.

:func:`~soloqueue_mem.ops.dump_format.conform` checks a record's field types; this
checks what the store needs of their values (issue 30 M2/M3), so a record that would
break ``recall`` or ``consolidate`` later, escape the data directory, or fail half-way
through the writes is refused up front with its line: whole numbers within SQLite's
64-bit integers, finite numbers, timestamps that parse, memory types and the other
closed sets, ids that are 32 hex digits, blob paths that are the blob's own, tags
artifacts accept, and turn records the session log can replay. Both back ends import
through :func:`check_values` (the PostgreSQL one shares the import's first pass).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from soloqueue_mem.artifacts import cas, catalog
from soloqueue_mem.clock import parse_timestamp
from soloqueue_mem.errors import BadInput
from soloqueue_mem.memory.attachments import DIRECTIONS
from soloqueue_mem.memory.model import RETENTION, TYPES

INT64 = (-(2**63), 2**63 - 1)
# Counts and indexes in the PostgreSQL back end's INTEGER columns: both back ends take
# the same dumps, so these are 32-bit on either.
INT32_MAX = 2**31 - 1
INT32_FIELDS = ("turn_index", "access_count", "first_turn", "last_turn", "dim", "scan_count",
                "attempts")  # fmt: skip
HEX_ID = re.compile(r"[0-9a-f]{32}")  # uuid4().hex: memories, episodes, attachments
SHA256 = re.compile(r"[0-9a-f]{64}")
OUTCOMES = ("success", "partial", "failed", "ongoing")
UNIT_FIELDS = ("importance", "confidence")  # between 0 and 1
NOT_NEGATIVE = ("size", "file_size", "access_count", "decay_rate", "first_turn", "last_turn",
                "scan_count", "attempts", "dim")  # fmt: skip


def check_values(kind: str, value: Any) -> None:
    """BadInput naming the first value of ``value`` (a conformed record of ``kind``)
    that the store could not hold or use."""
    for name, field in value._asdict().items():
        _check_field(name, field)
    check = _BY_KIND.get(kind)
    if check is not None:
        check(value)


def _check_field(name: str, value: Any) -> None:
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, int) and not isinstance(item, bool):
            if not INT64[0] <= item <= INT64[1]:
                raise BadInput(f"field {name!r} is out of range (a 64-bit integer)")
            if name in INT32_FIELDS and item > INT32_MAX:
                raise BadInput(f"field {name!r} is out of range (at most {INT32_MAX})")
            if name in NOT_NEGATIVE and item < 0:
                raise BadInput(f"field {name!r} is negative")
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise BadInput(f"field {name!r} is not a finite number")
            if name in NOT_NEGATIVE and item < 0:
                raise BadInput(f"field {name!r} is negative")
    if name in UNIT_FIELDS and not 0 <= value <= 1:
        raise BadInput(f"field {name!r} is not between 0 and 1")
    if (name.endswith("_at") or name == "timestamp") and isinstance(value, str):
        _timestamp(name, value)


def _timestamp(name: str, value: str) -> None:
    try:
        parse_timestamp(value)
    except BadInput:
        raise BadInput(f"field {name!r} is not an ISO 8601 timestamp: {value[:40]!r}") from None


def _one_of(name: str, value: Any, allowed: tuple[str, ...] | Any) -> None:
    if value not in allowed:
        raise BadInput(f"field {name!r} is {str(value)[:40]!r}, not one of {', '.join(allowed)}")


def _hex_id(name: str, value: str | None, required: bool = False) -> None:
    """An id, or a reference to one (unless ``required``, None or empty: none)."""
    given = value or ""
    if (given or required) and not HEX_ID.fullmatch(given):
        raise BadInput(f"field {name!r} is not an id (32 hex digits): {given[:40]!r}")


def _blob_path(name: str, path: str, content_hash: str) -> None:
    """A row's blob path must be the store's own path of its hash (inside the data
    directory: no ``..``, no absolute path)."""
    if not SHA256.fullmatch(content_hash):
        raise BadInput(f"field 'content_hash' is not a sha256: {content_hash[:70]!r}")
    if cas.parse_relpath(path) != content_hash:
        raise BadInput(f"field {name!r} is not the store's path of its blob: {path[:80]!r}")


def _memory(memory: Any) -> None:
    _hex_id("id", memory.id, required=True)
    _one_of("type", memory.type, TYPES)
    _one_of("priority", memory.priority, tuple(RETENTION))
    _hex_id("superseded_by", memory.superseded_by)
    _hex_id("source_episode_id", memory.source_episode_id)


def _episode(episode: Any) -> None:
    _hex_id("id", episode.id, required=True)
    _one_of("outcome", episode.outcome, OUTCOMES)
    for memory_id in episode.linked_memory_ids:
        _hex_id("linked_memory_ids", memory_id)


def _artifact(artifact: Any) -> None:
    if artifact.id < 1:
        raise BadInput("field 'id' is not a positive number")
    for tag in artifact.tags:
        catalog.validate_tag(tag)
    _blob_path("path", artifact.path, artifact.content_hash)


def _attachment(attachment: Any) -> None:
    _hex_id("id", attachment.id, required=True)
    _one_of("direction", attachment.direction, DIRECTIONS)
    _hex_id("episode_id", attachment.episode_id)
    for memory_id in attachment.linked_memory_ids:
        _hex_id("linked_memory_ids", memory_id)
    if attachment.artifact_id is not None and attachment.artifact_id < 1:
        raise BadInput("field 'artifact_id' is not a positive number")
    if attachment.local_path:
        _blob_path("local_path", attachment.local_path, attachment.content_hash)


def _blob(blob: Any) -> None:
    if not SHA256.fullmatch(blob.sha256):
        raise BadInput(f"field 'sha256' is not a sha256: {blob.sha256[:70]!r}")


def _turn(turn: Any) -> None:
    """A turn record the session log can replay (what ``put_back_session`` checks),
    with a timestamp and offload notes that name artifacts by number."""
    from soloqueue_mem.sessions.writer import _checked_record as checked_record

    record = turn.record
    _hex_id("episode_id", turn.episode_id)
    if not isinstance(record.get("timestamp"), str):
        raise BadInput("a turn record needs a 'timestamp'")
    _timestamp("timestamp", record["timestamp"])
    _check_field("turn_index", record.get("turn_index"))
    offloaded = record.get("offloaded") or []
    if not isinstance(offloaded, list) or not all(_offload_note(n) for n in offloaded):
        raise BadInput("a turn's 'offloaded' notes need a field, an artifact id and l1 text")
    checked_record(record)


_NOTE_FIELD = re.compile(r"content|tool_results\.(0|[1-9][0-9]{0,5})\.content")


def _offload_note(note: Any) -> bool:
    return (
        isinstance(note, dict)
        and isinstance(note.get("field"), str)
        and _NOTE_FIELD.fullmatch(note["field"]) is not None
        and isinstance(note.get("artifact_id"), str)
        and re.fullmatch(r"[1-9][0-9]{0,17}", note["artifact_id"]) is not None
        and isinstance(note.get("l1"), str)
    )


_BY_KIND: dict[str, Callable[[Any], None]] = {
    "memory": _memory,
    "episode": _episode,
    "artifact": _artifact,
    "attachment": _attachment,
    "blob": _blob,
    "turn": _turn,
}
