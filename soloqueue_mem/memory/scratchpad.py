"""The scratchpad (seed 003 §4.3): working notes that outlive a session.

Markdown of at most 2000 characters; its four sections — 当前项目 (active projects),
近期进展 (recent progress), 未解决的问题 (open questions), 下一步 (next steps) — are
parsed into fields so they can be searched and shown. English headings (Current
projects, Recent progress, Open questions, Next steps) are understood too.

The same SQL runs on both back ends (:class:`soloqueue_mem.db.adapter.Db`); only the
key differs: SQLite's table is keyed by ``user_id`` ("group/agent"), PostgreSQL's by
``(group_id, agent_id)``. A read-modify-write of one scratchpad (a session variable
synced into it, an episode noted under 近期进展) holds :func:`lock` for its
transaction, so writers on several hosts never lose each other's change.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from soloqueue_mem import jsonio
from soloqueue_mem.clock import iso
from soloqueue_mem.db.adapter import Db
from soloqueue_mem.errors import BadInput
from soloqueue_mem.text.strings import text as fixed_text

if TYPE_CHECKING:
    from soloqueue_mem.db.adapter import Connection

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


def _where(db: Db, group: str, agent: str) -> tuple[str, tuple[str, ...]]:
    """The condition (and its values) naming the scratchpad of (group, agent)."""
    if db.postgres:
        return "group_id = ? AND agent_id = ?", (group, agent)
    return "user_id = ?", (f"{group}/{agent}",)


def lock(conn: Connection, group: str, agent: str) -> None:
    """Hold the scratchpad of (group, agent) until the write transaction ends."""
    Db(conn).lock(f"scratchpad/{group}/{agent}")


def get(conn: Connection, group: str, agent: str, template: str) -> Scratchpad:
    """The scratchpad of (group, agent); ``template`` when none was written."""
    db = Db(conn)
    where, key = _where(db, group, agent)
    row = db.fetchone(f"SELECT content, updated_at FROM scratchpad WHERE {where}", key)  # noqa: S608
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


def put(conn: Connection, group: str, agent: str, content: str, now: datetime) -> Scratchpad:
    """Replace the scratchpad of (group, agent)."""
    pad = from_content(group, agent, check(content), iso(now))
    db = Db(conn)
    with db.write():
        _write(db, pad, replace=True)
    return pad


def _write(db: Db, pad: Scratchpad, replace: bool) -> int:
    """Insert ``pad``; where one is written, replace it (``replace``) or keep it. The
    number of rows written."""
    on_conflict = (
        "DO UPDATE SET content = excluded.content, active_projects = excluded.active_projects,"
        " current_focus = excluded.current_focus, open_questions = excluded.open_questions,"
        " next_steps = excluded.next_steps, updated_at = excluded.updated_at"
        if replace
        else "DO NOTHING"
    )
    key_columns, key = ("", ()) if db.postgres else ("user_id, ", (f"{pad.group}/{pad.agent}",))
    conflict = "group_id, agent_id" if db.postgres else "user_id"
    written: int = db.execute(
        f"INSERT INTO scratchpad ({key_columns}group_id, agent_id, content,"  # noqa: S608
        " active_projects, current_focus, open_questions, next_steps, updated_at)"
        f" VALUES ({'?, ' * len(key)}?, ?, ?, ?, ?, ?, ?, ?)"
        f" ON CONFLICT ({conflict}) {on_conflict}",
        (*key, *row_values(pad)),
    ).rowcount
    return written


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


def every(conn: Connection) -> list[Scratchpad]:
    """Every written scratchpad, by group and agent (export)."""
    db = Db(conn)
    rows = db.fetchall(
        "SELECT group_id, agent_id, content, updated_at FROM scratchpad"  # noqa: S608
        f" ORDER BY {db.bytewise('group_id')}, {db.bytewise('agent_id')}"
    )
    return [from_content(*row) for row in rows]


def put_back(conn: Connection, pad: Scratchpad) -> str:
    """Put back an exported scratchpad where none was written: ``added``, ``existing``
    or ``conflict`` (another text is there)."""
    fresh = from_content(pad.group, pad.agent, check(pad.content), pad.updated_at)
    db = Db(conn)
    with db.write():
        if _write(db, fresh, replace=False):
            return "added"
        found = get(conn, pad.group, pad.agent, template="")  # there: no template needed
    same = (found.content, found.updated_at) == (pad.content, pad.updated_at)
    return "existing" if same else "conflict"
