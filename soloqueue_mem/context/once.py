"""One fact once across the memory layers of a prompt.

A layer's text is Markdown: the scratchpad, ``identity/MEMORY.md``, the recalled
memories and ``identity/USER.md`` often state one fact each. A line whose normalized
content (``memory.model.content_key``, list markers stripped) an earlier layer already
showed is left out of a later one, so the fact appears once, in the first layer, and
the later layer's budget goes to what it alone has. A heading left without content is
dropped with it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from soloqueue_mem.memory.model import content_key, normalize

_MARKER = re.compile(r"^(?:[-*+]|\d+[.)])\s+")
_HEADING = re.compile(r"^(#{1,6})\s")


def line_key(line: str) -> str | None:
    """The key of a content line; None for headings, blank and word-less lines."""
    text = line.strip()
    if not text or _HEADING.match(text):
        return None
    body = _MARKER.sub("", text)
    return content_key(body) if normalize(body) else None


def keys(text: str) -> set[str]:
    return {key for line in text.splitlines() if (key := line_key(line))}


def unseen(text: str, seen: set[str]) -> str:
    """``text`` without the lines ``seen`` holds (unchanged when there are none)."""
    lines = text.splitlines()
    kept = [line for line in lines if (key := line_key(line)) is None or key not in seen]
    if len(kept) == len(lines):
        return text
    return "\n".join(_without_empty_sections(kept))


def _without_empty_sections(lines: list[str]) -> Iterable[str]:
    """Headings with content under them before the next heading of their level or
    higher, and every other line."""
    has = [False] * 7  # has[level]: content below, up to the next heading <= level
    kept: list[str] = []
    for line in reversed(lines):
        heading = _HEADING.match(line.strip())
        if heading is None:
            if line.strip():
                has = [True] * 7
            kept.append(line)
            continue
        level = len(heading.group(1))
        if has[level]:
            kept.append(line)
        has[level:] = [False] * (7 - level)
    return reversed(kept)
