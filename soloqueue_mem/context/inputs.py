"""What ``context build --with-memory`` reads besides the history: the stored kv
preferences and session variables, and the recall that fills the memory layer.

Shared by the CLI and :class:`soloqueue_mem.Store`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from soloqueue_mem.config import Config

if TYPE_CHECKING:
    from soloqueue_mem.context.layers import State
    from soloqueue_mem.memory.channels import Source
    from soloqueue_mem.state.values import Entry
    from soloqueue_mem.text.lexicon import Lexicon


class Values(Protocol):
    """Where the kv preferences and session variables are (a storage back end)."""

    def values(self, table: str, scope: tuple[str, ...]) -> list[Entry]: ...


# recall's largest budget: the recall layer fits its hits itself, after leaving out
# what an earlier layer shows (recall then counts all of its hits as accessed)
UNBOUNDED = 1_000_000


def stored_state(group: str, agent: str, session: str | None, backend: Values) -> State:
    """The kv_store preferences of (group, agent) and the variables of ``session``."""
    from soloqueue_mem.context.layers import State
    from soloqueue_mem.state.values import as_list

    preferences = backend.values("kv_store", (group, agent))
    variables = backend.values("session_state", (group, agent, session)) if session else []
    return State(as_list(preferences), as_list(variables, first="current_task"), session or "")


def memory_recaller(
    source: Source,
    config: Config,
    now: datetime,
    query: str | None,
    group: str,
    lexicon: Callable[[], Lexicon],
) -> Any:
    """The memory layer's recall for ``query`` (None: no query, no recall layer) from
    the back end ``source``."""
    if query is None:
        return None
    from soloqueue_mem.memory.model import content_key
    from soloqueue_mem.memory.recall import Request, fit_budget, recall, render_text

    def recalled(budget: int, count: Any, seen: frozenset[str]) -> tuple[str, set[str]]:
        """The best memories not already shown by an earlier layer, fitted to ``budget``
        after those are left out (so the budget goes to the others)."""
        request = Request(query, group=group, max_tokens=UNBOUNDED)
        found = recall(request, config, now, lexicon, count, source=source)
        fresh = [h for h in found.hits if content_key(h.candidate.content) not in seen]
        hits = fit_budget(fresh, budget, count)
        return render_text(hits), {content_key(h.candidate.content) for h in hits}

    return recalled
