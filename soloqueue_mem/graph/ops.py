"""The graph's operations as the CLI (and any other client) calls them."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Sequence

from soloqueue_mem.errors import BadInput, NotFound
from soloqueue_mem.graph.params import Params
from soloqueue_mem.graph.store import Link, Node, Scope
from soloqueue_mem.sessions.events import Event

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import Any

    from soloqueue_mem.config import Config
    from soloqueue_mem.graph.db import GraphDb
    from soloqueue_mem.sessions.events import SessionKey


def read_messages(data: bytes, max_bytes: int) -> list[dict[str, str]]:
    """Chat messages from stdin's bytes: an OpenAI message array, one message, or JSONL
    (one message per line). Any bad part rejects the whole input (BadInput)."""
    from soloqueue_mem import jsonio
    from soloqueue_mem.sessions.events import parse_event
    from soloqueue_mem.sessions.intake import read_document

    if len(data) > max_bytes:
        raise BadInput(f"input is larger than {max_bytes} bytes (max_input_bytes)")
    lines = [line for line in data.splitlines() if line.strip()]
    if len(lines) > 1 and lines[0].lstrip()[:1] == b"{":
        return messages_of(
            parse_event(jsonio.loads(line, line=n), line=n)
            for n, line in enumerate(data.splitlines(), start=1)
            if line.strip()
        )
    return messages_of(read_document(io.BytesIO(data), max_bytes))


def messages_of(events: Iterable[Event]) -> list[dict[str, str]]:
    """Chat messages (role, content) of validated events; BadInput when none has text."""
    messages = [{"role": e.role, "content": e.content} for e in events if e.content.strip()]
    if not messages:
        raise BadInput("no message with text to remember")
    return messages


def remember(
    db: GraphDb,
    scope: Scope,
    messages: list[dict[str, str]],
    now: str,
    params: Params,
) -> dict[str, Any]:
    """Enqueue the messages (TempFail when the queue is full); the queued task."""
    task_id = db.enqueue(scope, messages, now, params.max_queue_size)
    return {
        "task_id": str(task_id),
        "group": scope.group,
        "agent": scope.agent,
        "messages": len(messages),
        "queued": db.depth(),
    }


def feed_compressed(
    open_graph: Callable[[], GraphDb | None],
    config: Config,
    key: SessionKey,
    records: Sequence[dict[str, Any]],
    now: str,
) -> dict[str, Any] | None:
    """With ``context_compress_feeds_graph``, queue the user and assistant turns a
    context compression took out of the context as one task of the session's agent
    graph (``open_graph``: :func:`soloqueue_mem.storage.graph.open_graph_db`); the task,
    or None (the setting off, no text, or the queue full: the graph forgets by design,
    and the compression has already kept the turns as memories)."""
    if not records or not config.context_compress_feeds_graph:
        return None
    from soloqueue_mem.errors import TempFail
    from soloqueue_mem.graph.params import params
    from soloqueue_mem.sessions.events import from_record
    from soloqueue_mem.sessions.offload import l1_record

    events = [from_record(l1_record(r)) for r in records]
    said = [e for e in events if e.role in ("user", "assistant") and e.content.strip()]
    if not said:
        return None
    db = open_graph()
    assert db is not None
    try:
        return remember(db, Scope(key.group, key.agent), messages_of(said), now, params(config))
    except TempFail:
        return None
    finally:
        db.close()


def node_json(node: Node, focus: Iterable[int] = ()) -> dict[str, Any]:
    return {
        "node_id": str(node.id),
        "group": node.group,
        "agent": node.agent,
        "content": node.content,
        "phrase": node.phrase,
        "keywords": node.keywords,
        "created_at": node.created_at,
        "scan_count": node.scan_count,
        "focus": node.id in set(focus),
    }


def _link_json(link: Link, other: int, exists: bool) -> dict[str, Any]:
    return {
        "node_id": str(other),
        "strength": round(link.strength, 6),
        "relation": link.relation,
        "dangling": not exists,
    }


def show(db: GraphDb, node_id: int, params: Params) -> dict[str, Any]:
    """A node with its links out and in, strengths and dangling marks; NotFound."""
    node = db.get_node(node_id)
    if node is None:
        raise NotFound(f"graph node {node_id} not found (try: soloqueue-mem graph focus)")
    outgoing = db.out_links(node_id)
    incoming = db.in_links(node_id)
    alive = db.get_nodes([link.to_id for link in outgoing])
    focus = db.focus(Scope(node.group, node.agent))
    return {
        **node_json(node, focus),
        "importance": round(db.importance(node_id, params.link_break_threshold), 6),
        "out": [_link_json(link, link.to_id, link.to_id in alive) for link in outgoing],
        "in": [_link_json(link, link.from_id, True) for link in incoming],
    }


def focus_nodes(db: GraphDb, scope: Scope) -> list[dict[str, Any]]:
    """The focus list, newest first."""
    ids = db.focus(scope)
    nodes = db.get_nodes(ids)
    return [
        {"position": n, **node_json(nodes[i], ids)}
        for n, i in enumerate(ids, start=1)
        if i in nodes
    ]


def stats(db: GraphDb | None, params: Params) -> dict[str, Any]:
    """Counts per graph and the queue's depth (no store: nothing)."""
    if db is None:
        return {"graphs": [], "queued": 0}
    graphs = [
        {"group": s.group, "agent": s.agent, **db.counts(s, params.link_break_threshold)}
        for s in db.scopes()
    ]
    return {"graphs": graphs, "queued": db.depth()}
