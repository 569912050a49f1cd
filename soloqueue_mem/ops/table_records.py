"""The dump records of the tables memory.db and the PostgreSQL database both hold:
memories, episodes, scratchpads, working memory and attachments, in dump order,
written once for ``export`` on either back end (``migrate --to`` reads them too)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from soloqueue_mem.lifecycle.digest import FTS5, FullTexts
from soloqueue_mem.memory import attachments, episodes, scratchpad, store, working
from soloqueue_mem.ops.dump_format import record

if TYPE_CHECKING:
    from soloqueue_mem.ops.export import Scope


def table_records(
    conn: Any,
    scope: Scope,
    texts: FullTexts = FTS5,
    attachment_text: attachments.FullText = attachments.FTS5,
) -> Iterator[dict[str, Any]]:
    """The records of the memories, episodes, scratchpads, working memory and
    attachments on ``conn`` (``texts``, ``attachment_text``: the back end's full-text
    indexes), those in ``scope``."""
    group, agent = scope
    yield from (record("memory", m) for m in store.every(conn, group, agent, texts.memories))
    yield from (record("episode", e) for e in episodes.every(conn, group, agent, texts.episodes))
    for pad in scratchpad.every(conn):
        if scope.holds(pad.group, pad.agent):
            fields = ("group", "agent", "content", "updated_at")
            yield record("scratchpad", {name: getattr(pad, name) for name in fields})
    if scope.agent is None:  # a group's list: none in an agent's export
        for entry in working.every(conn, scope.group):
            yield record("working", entry)
    for attachment in attachments.every(conn, attachment_text):
        if scope.holds(attachment.group, attachment.agent):
            yield record("attachment", attachment)
