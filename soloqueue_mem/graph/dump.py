"""The graph tables as export records and back (``export``/``import``).

A node is exported with its out-links, so a node put back where another node holds
its id (a conflict) brings none of its links either. Keywords are rebuilt from the
node (``graph_keywords`` is an index of ``keywords_json``); the focus list is
exported newest first and put back in that order. Ids are kept: links name node ids,
and a link left dangling by a deleted node must stay dangling, so importing raises
``graph_nodes``' id sequence past every id a link names. Either back end
(:class:`soloqueue_mem.graph.db.GraphDb`) is read and written the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from soloqueue_mem.graph.queue import Task
from soloqueue_mem.graph.store import Node, Scope

if TYPE_CHECKING:
    from soloqueue_mem.graph.db import GraphDb


class NodeRecord(NamedTuple):
    id: int
    group: str
    agent: str
    content: str
    phrase: str
    keywords: list[str]
    created_at: str
    scan_count: int
    links: list[dict[str, Any]]  # {"to_id", "strength", "relation"}, by to_id


class FocusRecord(NamedTuple):
    group: str
    agent: str
    node_ids: list[int]  # newest first


class TaskRecord(NamedTuple):
    id: int
    group: str
    agent: str
    messages: list[dict[str, Any]]
    enqueued_at: str
    attempts: int


def every(db: GraphDb) -> Iterator[NodeRecord | FocusRecord | TaskRecord]:
    """Each graph's nodes (by id) and its focus list, then the queued tasks (by id)."""
    for scope in db.scopes():
        for node in db.nodes_of(scope):
            yield NodeRecord(*node, links=_links(db, node.id))
        held = db.focus(scope)
        if held:
            yield FocusRecord(*scope, node_ids=held)
    for task in db.pending():
        yield TaskRecord(task.id, *task.scope, task.messages, task.enqueued_at, task.attempts)


def _links(db: GraphDb, node_id: int) -> list[dict[str, Any]]:
    links = sorted(db.out_links(node_id), key=lambda link: link.to_id)
    return [{"to_id": k.to_id, "strength": k.strength, "relation": k.relation} for k in links]


def check_links(record: NodeRecord) -> str | None:
    """Why the record's links are unusable (None when they are fine)."""
    for link in record.links:
        to_id, strength, relation = (link.get(k) for k in ("to_id", "strength", "relation"))
        if set(link) != {"to_id", "strength", "relation"}:
            return "a link must have exactly to_id, strength and relation"
        if not isinstance(to_id, int) or isinstance(to_id, bool) or not 1 <= to_id < 2**63:
            return "a link's to_id must be a node id"
        if not isinstance(strength, int | float) or isinstance(strength, bool):
            return "a link's strength must be a number"
        if not 0 <= strength <= 1 or not (relation is None or isinstance(relation, str)):
            return "a link's strength must be 0-1 and its relation text or null"
    return None


def put_back_node(db: GraphDb, record: NodeRecord) -> str:
    """``added``, ``existing`` (the same node with the same links) or ``conflict``."""
    node = Node(*record[:8])
    with db.transaction():
        held = db.get_node(record.id)
        if held is not None:
            same = (held, _links(db, held.id)) == (node, record.links)
            return "existing" if same else "conflict"
        db.insert_node(node)
        for link in record.links:
            db.create_link(node.id, link["to_id"], float(link["strength"]), link["relation"])
        db.reserve_node_ids(max([node.id, *(link["to_id"] for link in record.links)]))
    return "added"


def put_back_focus(db: GraphDb, record: FocusRecord) -> str:
    """The focus list of a graph that has none; ``existing`` when it is the same list,
    ``conflict`` when it differs or names a node the graph does not hold."""
    scope = Scope(record.group, record.agent)
    with db.transaction():
        held = db.focus(scope)
        if held:
            return "existing" if held == record.node_ids else "conflict"
        nodes = [db.get_node(node_id) for node_id in record.node_ids]
        if any(n is None or (n.group, n.agent) != scope for n in nodes):
            return "conflict"
        db.push_focus(scope, list(reversed(record.node_ids)), len(record.node_ids))
    return "added"


def put_back_task(db: GraphDb, record: TaskRecord) -> str:
    """A queued graph-remember task, its id kept."""
    task = Task(record.id, Scope(record.group, record.agent), *record[3:])
    with db.transaction():
        held = db.task(record.id)
        if held is not None:
            return "existing" if held == task else "conflict"
        db.insert_task(task)
    return "added"
