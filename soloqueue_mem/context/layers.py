"""The memory layers of the system prompt (seed 003 §8.1), each inside its own budget.

Order and budgets: the compiled identity (``SOUL.md`` and ``AGENT.md``, ~350 tokens:
:mod:`soloqueue_mem.context.identity`), the persona overlay (the user's traits that
``consolidate`` promotes to ``identity/personas/user_custom.md``, ~200), the memory
tools' self-description, the scratchpad with the
session's variables (~500 tokens), core memory ``identity/MEMORY.md`` (~400), memories
recalled for the query (~300), the user profile ``identity/USER.md`` (~120) and the
agent's preferences from the kv_store (~120). A layer whose source does not exist yet
is skipped and reported, never an error. A fact appears once: a later layer leaves
out what an earlier one shows (:mod:`soloqueue_mem.context.once`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NamedTuple

from soloqueue_mem.context import once
from soloqueue_mem.context.identity import PERSONA, compile_text
from soloqueue_mem.memory.scratchpad import Scratchpad
from soloqueue_mem.text.budget import shorten
from soloqueue_mem.text.strings import text as fixed_text

BUDGETS = {
    "identity": 350,
    "persona": 200,
    "tools": 80,
    "scratchpad": 500,
    "core_memory": 400,
    "recall": 300,
    "user": 120,
    "preferences": 120,
}
# recalled(budget, seen): the recall text, leaving out memories whose content key is in
# ``seen``, and the content keys of the memories it shows.
Recalled = Callable[[int, frozenset[str]], tuple[str, set[str]]]


class State(NamedTuple):
    """What state.db adds: the agent's preferences and the session's variables, as
    Markdown lists (None: nothing set)."""

    preferences: str | None = None
    session: str | None = None
    session_id: str = ""


NO_STATE = State()


class Layer(NamedTuple):
    name: str
    text: str  # empty when skipped
    tokens: int
    budget: int
    status: str  # "included", "shortened" or why it was skipped


def memory_layers(
    root: Path,
    pad: Callable[[], Scratchpad | None],
    recalled: Recalled | None,
    count: Callable[[str], int],
    state: State = NO_STATE,
    identity: Mapping[str, str] | None = None,
    *,
    language: str,
) -> list[Layer]:
    """Every layer in order (None ``recalled``: no query), each fact in the first
    layer that shows it. ``identity``: the compiled identity files by source name
    (None: MEMORY.md and USER.md as they are, no SOUL.md or AGENT.md); ``language``:
    the setting the fixed text (the tools' description, the session's heading) is in."""

    def source(name: str) -> str | None:
        if identity is None:
            return optional_text(root / "identity" / name)
        return identity.get(name)

    sources: dict[str, Callable[[], str | None]] = {
        "identity": lambda: (
            _joined(identity.get("SOUL.md"), identity.get("AGENT.md")) if identity else None
        ),
        "persona": lambda: persona_text(root),
        "tools": lambda: fixed_text(language, "memory_tools"),
        "scratchpad": lambda: _with_session(scratchpad_text(pad()), state, language),
        "core_memory": lambda: source("MEMORY.md"),
        "user": lambda: source("USER.md"),
        "preferences": lambda: state.preferences,
    }
    seen: set[str] = set()
    layers = []
    for name in BUDGETS:
        if name == "recall":
            text, shown = recalled(BUDGETS[name], frozenset(seen)) if recalled else (None, set())
            layer = _layer(name, text, count)
        else:
            found = sources[name]()
            text = None if found is None else once.unseen(found, seen)
            layer = _layer(name, text, count, repeated=bool(found and found.strip()))
            shown = once.keys(layer.text)
        seen |= shown
        layers.append(layer)
    return layers


def _layer(
    name: str, text: str | None, count: Callable[[str], int], repeated: bool = False
) -> Layer:
    """``repeated``: ``text`` had something before what earlier layers show was left out."""
    budget = BUDGETS[name]
    if not text or not text.strip():
        reason = "no query" if name == "recall" and text is None else "nothing there yet"
        reason = "shown in an earlier layer" if repeated else reason
        return Layer(name, "", 0, budget, f"skipped: {reason}")
    text = text.strip()
    fitted = shorten(text, budget, count)
    status = "included" if fitted == text else "shortened"
    return Layer(name, fitted, count(fitted), budget, status if fitted else "skipped: too big")


def _joined(*texts: str | None) -> str | None:
    return "\n\n".join(text for text in texts if text and text.strip()) or None


def optional_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None


def persona_text(root: Path) -> str | None:
    """user_custom.md cleaned as an identity source is (its traits mark, an HTML
    comment, goes); None when consolidate has not written one."""
    found = optional_text(root / "identity" / PERSONA)
    return None if found is None else compile_text(found, BUDGETS["persona"])


def scratchpad_text(pad: Scratchpad | None) -> str | None:
    """The scratchpad's Markdown, once one was written (set, or by consolidation)."""
    return pad.content if pad is not None and pad.updated_at else None


def _with_session(pad: str | None, state: State, language: str) -> str | None:
    """The scratchpad followed by the session's variables (current_task first)."""
    if not state.session:
        return pad
    heading = fixed_text(language, "session_state").format(session=state.session_id)
    block = f"## {heading}\n{state.session}"
    return f"{pad.rstrip()}\n\n{block}" if pad else block


def title(layer: str, language: str) -> str:
    """The heading of ``layer`` in the system prompt (and the hooks' brief)."""
    return fixed_text(language, f"layer_{layer}")


def system_content(system_prompt: str, layers: list[Layer], language: str) -> str:
    """The system prompt followed by each included layer under its heading."""
    parts = [system_prompt.rstrip()] if system_prompt.strip() else []
    parts += [f"## {title(layer.name, language)}\n{layer.text}" for layer in layers if layer.text]
    return "\n\n".join(parts)
