"""Node output into working memory, as both back ends' ``log`` does it."""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any


def feeding_working_memory(
    results: Iterator[Any], feed: Callable[[list[tuple[str, str]]], None]
) -> Iterator[Any]:
    """``log``'s results, passed on as they come; once all are acknowledged, the new
    assistant turns (an agent's node output) are handed to ``feed`` as ``(group,
    content)``, oldest first, for their group's working memory (seed 004: what the
    group's agents said last is what is going on now). After the turns' own commit: a
    crash between loses only working-memory entries, never a turn."""
    outputs = []
    for result in results:
        if getattr(result, "role", None) == "assistant" and not result.duplicate:
            outputs.append((result.group, result.content))
        yield result
    if outputs:
        feed(outputs)
