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
    """Seconds in a duration written ``30s``, ``15m``, ``1h``, ``3d``, ``2w`` or a sum of
    them such as ``1h30m``: never negative, at most :data:`MAX_DAYS`."""
    import re  # not on `log`'s start-up path

    value = text.strip().lower()
    parts = re.findall(r"(\d+(?:\.\d+)?)([smhdw])", value)
    if not value or "".join(number + unit for number, unit in parts) != value:
        raise BadInput(f"not a duration (use 30s, 15m, 1h, 1h30m, 3d, 2w): {text!r}")
    seconds = sum(float(number) * _DURATION_UNITS[unit] for number, unit in parts)
    if seconds > MAX_DAYS * 86400:
        raise BadInput(f"duration too long (at most {MAX_DAYS}d): {text!r}")
    return seconds


_DAYS_BACK = {"today": 0, "yesterday": 1}


def parse_since(text: str, now: datetime) -> datetime:
    """``--since`` takes a duration back from ``now`` (``1h30m``), ``today`` or
    ``yesterday`` (local midnight), or an ISO 8601 timestamp."""
    from datetime import timedelta

    value = text.strip().lower()
    if value in _DAYS_BACK:
        midnight = now.astimezone().replace(hour=0, minute=0, second=0, microsecond=0)
        return (midnight - timedelta(days=_DAYS_BACK[value])).astimezone(UTC)
    if value[:1].isdigit() and value[-1:] in _DURATION_UNITS:
        return now - timedelta(seconds=parse_duration(text))
    try:
        return parse_timestamp(text)
    except BadInput:
        raise BadInput(
            "--since takes a duration (30s, 15m, 1h30m, 3d, 2w), today, yesterday or an "
            f"ISO 8601 timestamp, not {text[:60]!r}"
        ) from None
