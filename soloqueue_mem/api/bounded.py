"""Answers that fit a client's output cap: lists cut from the end, text paged, and
one oversized item shortened rather than dropped.

Used by the MCP server and the HTTP API. Tokens are the cheap cl100k estimate
(``text.cjk.estimate_tokens``) of the JSON as the MCP SDK prints it (indented), so
the compact form sent elsewhere is smaller still.
"""

from __future__ import annotations

import json
from typing import Any

from soloqueue_mem.text.cjk import estimate_tokens

SHORTENED = "…[shortened]"


def json_tokens(value: Any) -> int:
    return estimate_tokens(json.dumps(value, ensure_ascii=False, indent=2))


def fit_items(items: list[dict[str, Any]], max_tokens: int) -> tuple[list[dict[str, Any]], int]:
    """The leading ``items`` whose JSON fits ``max_tokens`` together, and how many were
    left out. When not even the first fits, it comes back with its long strings
    shortened (so an answer never comes back empty because of one big item)."""
    kept: list[dict[str, Any]] = []
    used = 0
    for item in items:
        tokens = json_tokens(item)
        if used + tokens > max_tokens:
            break
        kept.append(item)
        used += tokens
    if not kept and items:
        kept = [shorten(items[0], max_tokens)]
    return kept, len(items) - len(kept)


def shorten(value: Any, max_tokens: int) -> Any:
    """``value`` with its longest strings cut until its JSON fits ``max_tokens``."""
    cap = max(64, max_tokens * 4)
    shortened = value
    while json_tokens(shortened) > max_tokens and cap > 16:
        shortened = _cut_strings(value, cap)
        cap //= 2
    return shortened


def _cut_strings(value: Any, cap: int) -> Any:
    if isinstance(value, str):
        return value if len(value) <= cap else value[:cap] + SHORTENED
    if isinstance(value, dict):
        return {key: _cut_strings(item, cap) for key, item in value.items()}
    if isinstance(value, list):
        return [_cut_strings(item, cap) for item in value]
    return value


def page_text(text: str, offset: int, max_tokens: int) -> dict[str, Any]:
    """The part of ``text`` from character ``offset`` that fits ``max_tokens``:
    ``{"text", "offset", "end", "total_chars", "complete"}``; ask again from ``end``."""
    if offset < 0:
        from soloqueue_mem.errors import UsageError

        raise UsageError("offset must not be negative")
    start = min(offset, len(text))
    end = min(len(text), start + max_tokens)  # at most one character per token
    while end < len(text) and estimate_tokens(text[start:end]) < max_tokens * 0.75:
        end = min(len(text), start + (end - start) * 2)
    while end > start + 1 and estimate_tokens(text[start:end]) > max_tokens:
        end = start + (end - start) * 3 // 4
    return {
        "text": text[start:end],
        "offset": start,
        "end": end,
        "total_chars": len(text),
        "complete": end >= len(text),
    }
