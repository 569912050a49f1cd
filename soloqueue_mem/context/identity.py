"""The identity files compiled for the system prompt (seed 003 §6.2, §8.1).

Sources, in ``identity/``: ``SOUL.md`` (who the agent is), ``AGENT.md`` (how it
works), ``USER.md`` and ``MEMORY.md`` (rewritten by ``consolidate``, or by hand). Each
is compiled by rules — HTML comments and stray ``-->`` dropped, placeholder lines
(``[待学习]``, ``[TODO]`` …) dropped, headings left empty dropped, blank runs
squeezed — and cut to its budget (``BUDGETS``, estimated tokens). The results live in
``identity/compiled/<name>.md`` with ``manifest.json`` recording each source's
``mtime_ns`` and size when it was compiled: a source is compiled again only when
those change (a ``consolidate`` that refreshes USER.md, an ``identity edit``), never
on every ``context build``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from soloqueue_mem.clock import iso
from soloqueue_mem.home import ensure_private_dir, replace_private_file
from soloqueue_mem.text.budget import shorten
from soloqueue_mem.text.cjk import estimate_tokens

SOURCES = ("SOUL.md", "AGENT.md", "USER.md", "MEMORY.md")
PERSONA = "personas/user_custom.md"  # the promoted traits (written by consolidate)
BUDGETS = {"SOUL.md": 150, "AGENT.md": 250, "USER.md": 120, "MEMORY.md": 400}
MAX_SOURCE_BYTES = 256 * 1024  # a source is read up to this much
_COMMENT = re.compile(r"<!--.*?(-->|\Z)", re.DOTALL)
_STRAY_CLOSE = re.compile(r"^\s*-->\s*$", re.MULTILINE)
_PLACEHOLDER = re.compile(
    r"[\[【(（]\s*(待学习|待填写|待补充|未知|to ?learn|todo|tbd|unknown|fill me in)\s*[\]】)）]",
    re.IGNORECASE,
)
_HEADING = re.compile(r"^(#{1,6})\s")


class Compiled(NamedTuple):
    name: str
    status: str  # "compiled", "cached" or "missing"
    text: str  # the compiled text ('' when missing)
    tokens: int  # estimated
    budget: int
    compiled_at: str | None


def folder(root: Path) -> Path:
    return root / "identity"


def compile_text(source: str, budget: int, count: Callable[[str], int] = estimate_tokens) -> str:
    """A source's compiled form: cleaned by the rules above and cut to ``budget``."""
    text = _STRAY_CLOSE.sub("", _COMMENT.sub("", source))
    lines = [line.rstrip() for line in text.splitlines() if not _PLACEHOLDER.search(line)]
    kept: list[str] = []
    for line in lines:
        if not line and (not kept or not kept[-1]):
            continue  # a run of blank lines becomes one
        kept.append(line)
    return shorten("\n".join(_without_empty_headings(kept)).strip(), budget, count)


def _without_empty_headings(lines: list[str]) -> list[str]:
    """Drop each heading that has nothing under it before the next heading of its level
    or above (or the end)."""
    kept: list[str] = []
    for number, line in enumerate(lines):
        heading = _HEADING.match(line)
        if heading is None:
            kept.append(line)
            continue
        level = len(heading.group(1))
        for later in lines[number + 1 :]:
            other = _HEADING.match(later)
            if other is not None and len(other.group(1)) <= level:
                break
            if later.strip() and other is None:
                kept.append(line)
                break
    return kept


# The model's compile of one source (name, text, budget), or None to use the rules.
ModelCompile = Callable[[str, str, int], str | None]


def compile_identity(
    root: Path, now: datetime, force: bool = False, model: ModelCompile | None = None
) -> list[Compiled]:
    """Bring ``identity/compiled/`` up to date with the sources (all of them with
    ``force``); one entry per source. Writes nothing when no source exists. With a
    ``model`` (``consolidate`` with one configured), a changed source is compiled by
    it, and its answer then cleaned and cut by the rules (:func:`_compiled_text`)."""
    base = folder(root)
    manifest = _manifest(base)
    found = {name: _stamp(base / name) for name in SOURCES}
    results, changed = [], False
    for name in SOURCES:
        budget = BUDGETS[name]
        stamp, entry = found[name], manifest.get(name)
        entry = entry if isinstance(entry, dict) else None
        target = base / "compiled" / name
        if stamp is None:
            changed |= manifest.pop(name, None) is not None
            results.append(Compiled(name, "missing", "", 0, budget, None))
            continue
        cached = _read(target) if entry and entry.get("source") == stamp and not force else None
        if entry and cached is not None:
            results.append(Compiled(name, "cached", cached, estimate_tokens(cached), budget,
                                    entry["compiled_at"]))  # fmt: skip
            continue
        source = _read(base / name) or ""
        text, by_model = _compiled_text(name, source, budget, model, entry, target)
        ensure_private_dir(root, target.parent)
        replace_private_file(target, text.encode("utf-8"))
        manifest[name] = {"source": stamp, "compiled_at": iso(now), **by_model}
        changed = True
        results.append(Compiled(name, "compiled", text, estimate_tokens(text), budget, iso(now)))
    if changed:
        ensure_private_dir(root, base / "compiled")
        data = json.dumps(manifest, indent=1, sort_keys=True).encode("utf-8")
        replace_private_file(base / "compiled" / "manifest.json", data)
    return results


def _compiled_text(
    name: str,
    source: str,
    budget: int,
    model: ModelCompile | None,
    entry: dict[str, Any] | None,
    target: Path,
) -> tuple[str, dict[str, str]]:
    """A source's compiled text, and the manifest's record of a model's compile: the
    source's sha256, so the same text rewritten (USER.md by every ``consolidate``)
    keeps the model's compile instead of asking again."""
    if model is None:
        return compile_text(source, budget), {}
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
    kept = _read(target) if entry and entry.get("model_sha256") == digest else None
    if kept is not None:
        return kept, {"model_sha256": digest}
    answer = model(name, source, budget)
    return compile_text(answer or source, budget), {"model_sha256": digest} if answer else {}


def compiled(root: Path, now: datetime) -> dict[str, str]:
    """Each existing source's compiled text, compiling what changed (context build)."""
    if not folder(root).is_dir():
        return {}
    return {c.name: c.text for c in compile_identity(root, now) if c.status != "missing"}


def _stamp(path: Path) -> list[int] | None:
    """``[mtime_ns, size]`` of a regular file (a symlink is not a source)."""
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if not os.path.isfile(path) or os.path.islink(path):
        return None
    return [info.st_mtime_ns, info.st_size]


def _read(path: Path) -> str | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_SOURCE_BYTES)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    return data.decode("utf-8", errors="replace")


def _manifest(base: Path) -> dict[str, Any]:
    text = _read(base / "compiled" / "manifest.json")
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return {}  # damaged: everything is compiled again
    return data if isinstance(data, dict) else {}


# -- export and import ------------------------------------------------------------------

AUTHORED = ("SOUL.md", "AGENT.md")  # written by people; USER.md and MEMORY.md are derived


def authored(root: Path) -> list[tuple[str, str]]:
    """``(name, text)`` of each authored source that exists (export)."""
    found = []
    for name in AUTHORED:
        if _stamp(folder(root) / name) is not None:
            found.append((name, (folder(root) / name).read_bytes().decode("utf-8", "replace")))
    return found


def put_back(root: Path, name: str, text: str) -> str:
    """Write an exported authored source where there is none: ``added``, ``existing``
    (the same text is there) or ``conflict`` (another text is: left alone)."""
    if name not in AUTHORED:
        raise ValueError(name)
    path = folder(root) / name
    if _stamp(path) is not None:
        return "existing" if _read(path) == text else "conflict"
    ensure_private_dir(root, path.parent)
    replace_private_file(path, text.encode("utf-8"))
    return "added"
