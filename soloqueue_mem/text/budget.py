"""Cutting text to a token budget."""

from __future__ import annotations

from collections.abc import Callable

ELLIPSIS = "…"


def shorten(text: str, room: int, count: Callable[[str], int]) -> str:
    """``text`` if it costs at most ``room`` tokens, else its longest prefix plus an
    ellipsis that does (empty when not even the ellipsis fits)."""
    if count(text) <= room:
        return text
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count(text[:mid] + ELLIPSIS) <= room:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo] + ELLIPSIS if count(text[:lo] + ELLIPSIS) <= room else ""
