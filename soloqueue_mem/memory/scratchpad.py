"""The scratchpad (seed 003 §4.3): working notes that outlive a session.

Markdown of at most 2000 characters; its four sections — 当前项目 (active projects),
近期进展 (recent progress), 未解决的问题 (open questions), 下一步 (next steps) — are
parsed into fields so they can be searched and shown. English headings (Current
projects, Recent progress, Open questions, Next steps) are understood too.
"""

from __future__ import annotations

import re
import sqlite3
from datetime import datetime
from typing import Any, NamedTuple

from soloqueue_mem import jsonio
from soloqueue_mem.clock import iso
from soloqueue_mem.db.connect import write_tx
from soloqueue_mem.errors import BadInput
from soloqueue_mem.text.strings import text as fixed_text

MAX_CHARS = 2000
RECENT_KEPT = 5  # progress entries kept when consolidation adds one
SECTIONS = {
    "active_projects": ("当前项目", "current projects"),
    "recent_progress": ("近期进展", "recent progress"),
    "open_questions": ("未解决的问题", "open questions"),
    "next_steps": ("下一步", "next steps"),
}


def template(language: str) -> str:
    """An empty scratchpad: its headings in the ``language`` setting's language."""
    return "\n\n".join(f"## {fixed_text(language, field)}" for field in SECTIONS) + "\n"


class Scratchpad(NamedTuple):
    group: str
    agent: str
    content: str
    active_projects: list[str]
    current_focus: str  # the first active project
    recent_progress: list[str]
    open_questions: list[str]
    next_steps: list[str]
    updated_at: str | None


def parse(content: str) -> dict[str, list[str]]:
    """Each section's bullet items (``- item``), by field name."""
    fields: dict[str, list[str]] = {name: [] for name in SECTIONS}
    current: str | None = None
    for line in content.splitlines():
        heading = re.match(r"^#{1,6}\s*(.+?)\s*$", line)
        if heading:
            title = heading.group(1).strip().lower()
            current = next((n for n, t in SECTIONS.items() if title in t), None)
        elif current and re.match(r"^\s*[-*]\s+\S", line):
            fields[current].append(re.sub(r"^\s*[-*]\s+", "", line).strip())
    return fields


def check(content: str) -> str:
    if len(content) > MAX_CHARS:
        raise BadInput(
            f"the scratchpad holds at most {MAX_CHARS} characters ({len(content)} given)"
        )
    if "\x00" in content:
        raise BadInput("the scratchpad contains a NUL character")
    return content


def _key(group: str, agent: str) -> str:
    return f"{group}/{agent}"


def get(conn: sqlite3.Connection, group: str, agent: str, template: str) -> Scratchpad:
    """The scratchpad of (group, agent); ``template`` when none was written."""
    row = conn.execute(
        "SELECT content, updated_at FROM scratchpad WHERE user_id = ?", (_key(group, agent),)
    ).fetchone()
    content, updated_at = row if row else (template, None)
    return from_content(group, agent, content, updated_at)


def from_content(group: str, agent: str, content: str, updated_at: str | None) -> Scratchpad:
    fields = parse(content)
    projects = fields["active_projects"]
    return Scratchpad(
        group,
        agent,
        content,
        projects,
        projects[0] if projects else "",
        fields["recent_progress"],
        fields["open_questions"],
        fields["next_steps"],
        updated_at,
    )


def put(
    conn: sqlite3.Connection, group: str, agent: str, content: str, now: datetime
) -> Scratchpad:
    """Replace the scratchpad of (group, agent)."""
    pad = from_content(group, agent, check(content), iso(now))
    with write_tx(conn):
        _write(conn, pad)
    return pad


def _write(conn: sqlite3.Connection, pad: Scratchpad) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO scratchpad (user_id, group_id, agent_id, content,"
        " active_projects, current_focus, open_questions, next_steps, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (_key(pad.group, pad.agent), *row_values(pad)),
    )


def row_values(pad: Scratchpad) -> tuple[str | None, ...]:
    """The stored columns from ``group_id`` to ``updated_at``, in the table's order."""
    return (
        pad.group,
        pad.agent,
        pad.content,
        jsonio.dumps_compact(pad.active_projects),
        pad.current_focus,
        jsonio.dumps_compact(pad.open_questions),
        jsonio.dumps_compact(pad.next_steps),
        pad.updated_at,
    )


def with_progress(content: str, entry: str, language: str = "auto") -> str:
    """``content`` with ``entry`` first under 近期进展 (Recent progress)."""
    return with_first(content, "recent_progress", entry, language=language)


def with_first(
    content: str, field: str, entry: str, drop: str | None = None, language: str = "auto"
) -> str:
    """``content`` with ``entry`` first in the section ``field`` (and ``drop`` taken
    out of it), at most ``RECENT_KEPT`` items kept, shortened if needed to stay within
    ``MAX_CHARS``. A missing section is added at the end; an empty scratchpad starts
    as the ``language`` setting's template."""
    entry = " ".join(entry.split())  # one line: an item cannot start a section
    lines = content.splitlines() or template(language).splitlines()
    names = "|".join(SECTIONS[field])
    start = next(
        (i for i, line in enumerate(lines) if re.match(rf"^#{{1,6}}\s*({names})", line, re.I)),
        None,
    )
    if start is None:  # added in the language of the headings already there
        english = any(
            re.match(rf"^#{{1,6}}\s*({'|'.join(n for _, n in SECTIONS.values())})", line, re.I)
            for line in lines
        )
        lines += ["", f"## {SECTIONS[field][1 if english else 0].capitalize()}"]
        start = len(lines) - 1
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("#")), len(lines))
    items = [line for line in lines[start + 1 : end] if re.match(r"^\s*[-*]\s+\S", line)]
    unwanted = {f"- {entry}", *([f"- {drop}"] if drop else [])}
    items = [f"- {entry}", *[i for i in items if i not in unwanted]][:RECENT_KEPT]
    text = "\n".join([*lines[: start + 1], *items, "", *lines[end:]]).strip() + "\n"
    while len(text) > MAX_CHARS and len(items) > 1:
        items.pop()
        text = "\n".join([*lines[: start + 1], *items, "", *lines[end:]]).strip() + "\n"
    return text[:MAX_CHARS]


def as_json(pad: Scratchpad) -> dict[str, Any]:
    return pad._asdict()


def every(conn: sqlite3.Connection) -> list[Scratchpad]:
    """Every written scratchpad, by group and agent (export)."""
    rows = conn.execute(
        "SELECT group_id, agent_id, content, updated_at FROM scratchpad ORDER BY group_id, agent_id"
    )
    return [from_content(*row) for row in rows]


def put_back(conn: sqlite3.Connection, pad: Scratchpad) -> str:
    """Put back an exported scratchpad where none was written: ``added``, ``existing``
    or ``conflict`` (another text is there)."""
    with write_tx(conn):
        row = conn.execute(
            "SELECT content, updated_at FROM scratchpad WHERE user_id = ?",
            (_key(pad.group, pad.agent),),
        ).fetchone()
        if row is not None:
            return "existing" if tuple(row) == (pad.content, pad.updated_at) else "conflict"
        _write(conn, from_content(pad.group, pad.agent, check(pad.content), pad.updated_at))
    return "added"
