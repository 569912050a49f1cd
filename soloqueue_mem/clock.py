"""The current time, pinned by ``SOLOQUEUE_NOW`` so expiry, decay and GC are testable.

Only the composition root calls :func:`now`; everything else takes ``now`` as an
argument. Timestamps are stored as ISO 8601 UTC text with a ``Z`` suffix.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

from soloqueue_mem.errors import BadInput


def parse_timestamp(text: str) -> datetime:
    """Parse ISO 8601; a naive time is taken as UTC. Raises BadInput."""
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise BadInput(f"not an ISO 8601 timestamp: {text[:60]!r}") from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def now() -> datetime:
    """The current UTC time, or ``SOLOQUEUE_NOW`` when it is set."""
    pinned = os.environ.get("SOLOQUEUE_NOW")
    if pinned:
        return parse_timestamp(pinned)
    return datetime.now(UTC)


def iso(value: datetime) -> str:
    """ISO 8601 UTC with millisecond precision and a ``Z``: sortable as text."""
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
MAX_DAYS = 36500  # the longest duration taken anywhere: 100 years, far from date overflow


def parse_duration(text: str) -> float:
    """Seconds in a duration written ``30s``, ``15m``, ``1h``, ``3d`` or ``2w``: never
    negative, at most :data:`MAX_DAYS`."""
    value = text.strip().lower()
    unit = _DURATION_UNITS.get(value[-1:]) if value else None
    number = value[:-1]
    if unit is None or not number.replace(".", "", 1).isdigit():
        raise BadInput(f"not a duration (use 30s, 15m, 1h, 3d, 2w): {text!r}")
    seconds = float(number) * unit
    if seconds > MAX_DAYS * 86400:
        raise BadInput(f"duration too long (at most {MAX_DAYS}d): {text!r}")
    return seconds


def parse_since(text: str, now: datetime) -> datetime:
    """``--since`` takes a duration back from ``now`` or an ISO 8601 timestamp."""
    from datetime import timedelta

    if text[:1].isdigit() and text.strip()[-1:].lower() in _DURATION_UNITS:
        return now - timedelta(seconds=parse_duration(text))
    return parse_timestamp(text)
