"""Cutting text to a token budget."""

from __future__ import annotations

from collections.abc import Callable

ELLIPSIS = "…"
LEAD_CHARS = 40  # context kept before the first matching word of an excerpt


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


def excerpt(text: str, keep: int, terms: list[str], room: int, count: Callable[[str], int]) -> str:
    """``text`` cut to ``room`` tokens around the first of ``terms`` it contains: its
    first ``keep`` characters (a label) always stay, an ellipsis marks each cut. The
    start of the text is kept when no term is found (empty when nothing fits)."""
    if count(text) <= room:
        return text
    label, body = text[:keep], text[keep:]
    lowered = body.lower()
    found = [at for at in (lowered.find(term.lower()) for term in terms) if at >= 0]
    start = max(0, min(found) - LEAD_CHARS) if found else 0
    lead = ELLIPSIS if start else ""
    rest = body[start:]
    lo, hi = 0, len(rest)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count(label + lead + rest[:mid] + ELLIPSIS) <= room:
            lo = mid
        else:
            hi = mid - 1
    shortened = label + lead + rest[:lo] + ELLIPSIS
    return shortened if lo and count(shortened) <= room else ""
