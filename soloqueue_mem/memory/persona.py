"""Persona weighting of recall (seed 003 §5.5, §6.4): an opt-in the user chooses.

A persona is a file the user writes, ``identity/personas/NAME.md``, whose front
matter lists the memory types it favours::

    ---
    favours: SKILL, ERROR
    ---
    Answers as a senior engineer.

``recall --persona NAME`` puts the favoured types first among hits that hold as much
of the query as each other: a favoured hit moves above the other hits ranked just above
it whose coverage is not greater than its own, never above one that holds more of the
query. The persona changes the order, never what is stored or found; without
``--persona`` nothing here runs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from soloqueue_mem.errors import BadOption
from soloqueue_mem.memory.model import TYPES

if TYPE_CHECKING:
    from soloqueue_mem.memory.recall import Hit

FOLDER = Path("identity") / "personas"
MAX_BYTES = 64 * 1024  # a persona's front matter is read from its first bytes only
_NAME = re.compile(r"[A-Za-z0-9][\w-]{0,63}", re.ASCII)
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_FAVOURS = re.compile(r"^favou?rs[ \t]*:[ \t]*\[?([^\]\n]*)\]?[ \t]*$", re.MULTILINE)


def favoured(root: Path, name: str) -> frozenset[str]:
    """The memory types persona ``name`` of the data directory ``root`` favours.
    BadOption (a usage error on the command line) when there is no such persona or
    its front matter names no known type."""
    if not _NAME.fullmatch(name):
        raise BadOption(f"persona {name!r} is not a persona name (letters, digits, _ and -)")
    path = root / FOLDER / f"{name}.md"
    try:
        with path.open("rb") as handle:
            head = handle.read(MAX_BYTES).decode("utf-8", errors="replace")
    except (FileNotFoundError, NotADirectoryError):
        raise BadOption(f"unknown persona {name!r}: no {FOLDER / (name + '.md')}") from None
    front = _FRONT_MATTER.match(head)
    listed = _FAVOURS.search(front.group(1)) if front else None
    if listed is None:
        raise BadOption(f"persona {name!r} has no 'favours:' line in its front matter")
    types = [t.strip().strip("'\"").upper() for t in listed.group(1).split(",") if t.strip()]
    unknown = [t for t in types if t not in TYPES]
    if unknown or not types:
        raise BadOption(
            f"persona {name!r} favours {', '.join(unknown) or 'nothing'}"
            f" (memory types: {', '.join(TYPES)})"
        )
    return frozenset(types)


def favoured_first(hits: list[Hit], types: frozenset[str]) -> list[Hit]:
    """``hits`` with each matching memory of a favoured type moved above the
    non-favoured hits right above it that hold no more of the query than it does."""
    if not types:
        return hits
    ordered: list[Hit] = []
    for hit in hits:
        place = len(ordered)
        if _favoured(hit, types):
            while place and _passable(ordered[place - 1], hit, types):
                place -= 1
        ordered.insert(place, hit)
    return ordered


def _favoured(hit: Hit, types: frozenset[str]) -> bool:
    memory = hit.candidate.memory
    return memory is not None and memory.type in types and hit.signals.coverage > 0


def _passable(above: Hit, hit: Hit, types: frozenset[str]) -> bool:
    coverage = above.signals.coverage
    return not _favoured(above, types) and 0 < coverage <= hit.signals.coverage
