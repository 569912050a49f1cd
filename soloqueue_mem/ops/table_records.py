"""The dump records of the tables memory.db and the PostgreSQL database both hold:
memories, episodes, scratchpads, working memory and attachments, in dump order,
written once for ``export`` on either back end (``migrate --to`` reads them too)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from soloqueue_mem.memory import attachments, scratchpad, working
from soloqueue_mem.ops.dump_format import record

if TYPE_CHECKING:
    from soloqueue_mem.memory.attachments import FullText
    from soloqueue_mem.memory.episodes import Episode
    from soloqueue_mem.memory.model import Memory
    from soloqueue_mem.ops.export import Scope


def table_records(
    conn: Any,
    scope: Scope,
    memories: Iterable[Memory],
    episodes: Iterable[Episode],
    index: FullText = attachments.FTS5,
) -> Iterator[dict[str, Any]]:
    """The records of ``memories`` and ``episodes`` (each back end reads them its own
    way, oldest row first), then of the scratchpads, working memory and attachments
    on ``conn`` (``index``: the attachments' full-text index), those in ``scope``."""
    for memory in memories:
        if scope.holds(memory.group, memory.agent):
            yield record("memory", memory)
    for episode in episodes:
        if scope.holds(episode.group, episode.agent):
            yield record("episode", episode)
    for pad in scratchpad.every(conn):
        if scope.holds(pad.group, pad.agent):
            fields = ("group", "agent", "content", "updated_at")
            yield record("scratchpad", {name: getattr(pad, name) for name in fields})
    if scope.agent is None:  # a group's list: none in an agent's export
        for entry in working.every(conn, scope.group):
            yield record("working", entry)
    for attachment in attachments.every(conn, index):
        if scope.holds(attachment.group, attachment.agent):
            yield record("attachment", attachment)
