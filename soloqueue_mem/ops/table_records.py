"""The dump records of the tables memory.db and the PostgreSQL database both hold:
memories, episodes, scratchpads, working memory and attachments, in dump order, and
the cached vectors with the items' links to them, written once for ``export`` on
either back end (``migrate --to`` reads them too)."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from soloqueue_mem.memory import attachments, episodes, scratchpad, store, working
from soloqueue_mem.memory.fulltexts import FTS5, FullTexts
from soloqueue_mem.ops.dump_format import record
from soloqueue_mem.semantic import dump as vectors
from soloqueue_mem.sessions import turns

if TYPE_CHECKING:
    from soloqueue_mem.ops.export import Scope


def table_records(conn: Any, scope: Scope, texts: FullTexts = FTS5) -> Iterator[dict[str, Any]]:
    """The records of the memories, episodes, scratchpads, working memory and
    attachments on ``conn`` (``texts``: the back end's full-text indexes), those in
    ``scope``."""
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
    for attachment in attachments.every(conn, texts.attachments):
        if scope.holds(attachment.group, attachment.agent):
            yield record("attachment", attachment)


def vector_records(conn: Any, scope: Scope) -> Iterator[dict[str, Any]]:
    """The vectors (all of them; in a scoped export, those its items use), then the
    items' links to them. A turn is named by its session and index (its row id is the
    store's own), and the links are ordered by what they name."""
    links = [link for link in vectors.linked(conn) if scope.holds(link.group, link.agent)]
    turn_ids = [int(link.item_id) for link in links if link.kind == "turn"]
    found = {}
    for start in range(0, len(turn_ids), 500):
        found.update(turns.turns_by_id(conn, turn_ids[start : start + 500]))
    named = []
    for link in links:
        turn = found.get(int(link.item_id)) if link.kind == "turn" else None
        if link.kind == "turn" and turn is None:
            continue  # the turn is gone: nothing to link
        fields = {
            "model": link.model,
            "item_kind": link.kind,
            "item_id": None if turn else link.item_id,
            "group": link.group,
            "agent": link.agent,
            "session": turn.session if turn else None,
            "turn_index": turn.turn_index if turn else None,
            "content_hash": link.content_hash,
        }
        named.append(fields)
    used = {(link["model"], link["content_hash"]) for link in named}
    for row in vectors.cached(conn):
        if scope.group is None and scope.agent is None or (row.model, row.content_hash) in used:
            yield record(
                "embedding",
                {**row._asdict(), "vector": base64.b64encode(row.vector).decode("ascii")},
            )
    for fields in sorted(named, key=_link_order):
        yield record("embedded_item", fields)


def _link_order(fields: dict[str, Any]) -> tuple[Any, ...]:
    f = fields
    return (f["model"], f["item_kind"], f["group"], f["agent"], f["session"] or "",
            f["turn_index"] or 0, f["item_id"] or "")  # fmt: skip
