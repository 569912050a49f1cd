"""Node output into working memory, as both back ends' ``log`` does it."""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

HELD = 2_000  # node outputs held before cutting them to what could still be offered


def feeding_working_memory(
    results: Iterator[Any], feed: Callable[[list[tuple[str, str]]], None]
) -> Iterator[Any]:
    """``log``'s results, passed on as they come; once all are acknowledged, the new
    assistant turns (an agent's node output) are handed to ``feed`` as ``(group,
    content)``, oldest first, for their group's working memory (seed 004: what the
    group's agents said last is what is going on now). After the turns' own commit: a
    crash between loses only working-memory entries, never a turn. A long batch holds
    only what could still be offered (:func:`~soloqueue_mem.memory.working.still_offered`),
    not every output it logged."""
    outputs: list[tuple[str, str]] = []
    limit = HELD
    for result in results:
        if getattr(result, "role", None) == "assistant" and not result.duplicate:
            outputs.append((result.group, result.content))
            if len(outputs) >= limit:
                from soloqueue_mem.memory.working import still_offered

                outputs = still_offered(outputs)
                limit = len(outputs) + HELD
        yield result
    if outputs:
        feed(outputs)
