"""The brief a new agent session starts with: scratchpad, core memory, latest episode.

Core memory is the group's best memories ranked as ``identity/MEMORY.md`` ranks them,
read from the store when the session starts: what the last ``SessionEnd`` extracted
is there at once, and another project's group never is. The brief names the group
(and the project folder it stands for) so a person reading it knows whose it is.

The store's text is data, not instructions: the brief is fenced in one
``<memory-brief>`` element that says so, and anything inside that looks like the fence
is defused, so stored text cannot close it early. Each part is cut to a character
budget; a part with nothing in it yet is left out, and an empty store gives no brief.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING

from soloqueue_mem.context.layers import scratchpad_text, title
from soloqueue_mem.text.budget import shorten
from soloqueue_mem.text.strings import text as fixed_text

if TYPE_CHECKING:
    from soloqueue_mem.integrations.project import HookGroup
    from soloqueue_mem.memory.episodes import Episode
    from soloqueue_mem.memory.model import Memory
    from soloqueue_mem.memory.scratchpad import Scratchpad

BUDGETS = {"scratchpad": 1500, "core_memory": 1500, "episode": 600}  # characters
OPENING = '<memory-brief source="soloqueue-mem">'
CLOSING = "</memory-brief>"
_FENCE = re.compile(r"<(/?)(memory-brief)", re.IGNORECASE)


def build_brief(
    scope: HookGroup | None,
    pad: Scratchpad | None,
    memories: list[Memory],
    episode: Episode | None,
    now: datetime,
    language: str,
) -> str:
    """The fenced brief from the scratchpad, memories and latest episode of a (group,
    agent), headed by the group it comes from, its fixed text in the ``language``
    setting's language; empty when there is nothing."""
    from soloqueue_mem.lifecycle.identity import memory_md

    parts = {
        "scratchpad": scratchpad_text(pad),
        "core_memory": memory_md(memories, now).removeprefix("# MEMORY\n\n") if memories else None,
        "episode": _episode(episode, language),
    }
    titles = {
        "scratchpad": title("scratchpad", language),
        "core_memory": title("core_memory", language),
        "episode": fixed_text(language, "brief_episode"),
    }
    sections = {
        titles[name]: shorten(text.strip(), BUDGETS[name], len)
        for name, text in parts.items()
        if text and text.strip()
    }
    if sections and scope:
        sections = {fixed_text(language, "brief_group"): _scope_line(scope, language), **sections}
    return fenced(sections, language)


def _scope_line(scope: HookGroup, language: str) -> str:
    """Which group the brief is from and why (its project folder, or a shared group)."""
    if scope.project is not None:
        line = fixed_text(language, "brief_project")
        return line.format(group=scope.group, project=scope.project)
    return fixed_text(language, "brief_shared").format(group=scope.group, mode=scope.mode)


def fenced(sections: dict[str, str], language: str) -> str:
    """Titled sections inside the reference-data fence ("" when there are none), which
    says in the ``language`` setting's language that they are data, not instructions."""
    if not sections:
        return ""
    body = "\n\n".join(f"## {title}\n{defused(text)}" for title, text in sections.items())
    return f"{OPENING}\n{fixed_text(language, 'brief_notice')}\n\n{body}\n{CLOSING}"


def defused(text: str) -> str:
    """``text`` with anything that could open or close the fence made inert."""
    return _FENCE.sub(lambda m: f"‹{m.group(1)}{m.group(2)}", text)


def _episode(episode: Episode | None, language: str) -> str | None:
    if episode is None:
        return None
    lines = [f"{episode.ended_at} · session {episode.session} · {episode.outcome}"]
    if episode.goal:
        lines.append(fixed_text(language, "episode_goal").format(goal=episode.goal))
    lines.append(episode.summary)
    return "\n".join(line for line in lines if line)
