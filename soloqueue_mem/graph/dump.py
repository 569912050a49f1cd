"""The graph tables as export records and back (``export``/``import``).

A node is exported with its out-links, so a node put back where another node holds
its id (a conflict) brings none of its links either. Keywords are rebuilt from the
node (``graph_keywords`` is an index of ``keywords_json``); the focus list is
exported newest first and put back in that order. Ids are kept: links name node ids,
and a link left dangling by a deleted node must stay dangling, so importing raises
``graph_nodes``' AUTOINCREMENT sequence past every id a link names.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from typing import Any, NamedTuple

from soloqueue_mem.db.connect import write_tx
from soloqueue_mem.graph.queue import pending
from soloqueue_mem.graph.store import (
    Node,
    Scope,
    create_link,
    focus,
    get_node,
    nodes_of,
    out_links,
    push_focus,
    scopes,
)


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


def every(conn: sqlite3.Connection) -> Iterator[NodeRecord | FocusRecord | TaskRecord]:
    """Each graph's nodes (by id) and its focus list, then the queued tasks (by id)."""
    for scope in scopes(conn):
        for node in nodes_of(conn, scope):
            yield NodeRecord(*node, links=_links(conn, node.id))
        held = focus(conn, scope)
        if held:
            yield FocusRecord(*scope, node_ids=held)
    for task in pending(conn):
        yield TaskRecord(task.id, *task.scope, task.messages, task.enqueued_at, task.attempts)


def _links(conn: sqlite3.Connection, node_id: int) -> list[dict[str, Any]]:
    links = sorted(out_links(conn, node_id), key=lambda link: link.to_id)
    return [{"to_id": k.to_id, "strength": k.strength, "relation": k.relation} for k in links]


def check_links(record: NodeRecord) -> str | None:
    """Why the record's links are unusable (None when they are fine)."""
    for link in record.links:
        to_id, strength, relation = (link.get(k) for k in ("to_id", "strength", "relation"))
        if set(link) != {"to_id", "strength", "relation"}:
            return "a link must have exactly to_id, strength and relation"
        if not isinstance(to_id, int) or isinstance(to_id, bool) or to_id < 1:
            return "a link's to_id must be a node id"
        if not isinstance(strength, int | float) or isinstance(strength, bool):
            return "a link's strength must be a number"
        if not 0 <= strength <= 1 or not (relation is None or isinstance(relation, str)):
            return "a link's strength must be 0-1 and its relation text or null"
    return None


def put_back_node(conn: sqlite3.Connection, record: NodeRecord) -> str:
    """``added``, ``existing`` (the same node with the same links) or ``conflict``."""
    node = Node(*record[:8])
    with write_tx(conn):
        held = get_node(conn, record.id)
        if held is not None:
            same = (held, _links(conn, held.id)) == (node, record.links)
            return "existing" if same else "conflict"
        conn.execute(
            "INSERT INTO graph_nodes (node_id, group_id, agent_id, content, phrase,"
            " keywords_json, created_at, scan_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (*node[:5], json.dumps(node.keywords, ensure_ascii=False), *node[6:]),
        )
        conn.executemany(
            "INSERT OR IGNORE INTO graph_keywords (keyword, node_id) VALUES (?, ?)",
            [(word.lower(), node.id) for word in node.keywords],
        )
        for link in record.links:
            create_link(conn, node.id, link["to_id"], float(link["strength"]), link["relation"])
        _raise_sequence(conn, max([node.id, *(link["to_id"] for link in record.links)]))
    return "added"


def _raise_sequence(conn: sqlite3.Connection, at_least: int) -> None:
    """No new node takes an id up to ``at_least`` (a dangling link may name it)."""
    updated = conn.execute(
        "UPDATE sqlite_sequence SET seq = MAX(seq, ?) WHERE name = 'graph_nodes'", (at_least,)
    )
    if updated.rowcount == 0:
        conn.execute(
            "INSERT INTO sqlite_sequence (name, seq) VALUES ('graph_nodes', ?)", (at_least,)
        )


def put_back_focus(conn: sqlite3.Connection, record: FocusRecord) -> str:
    """The focus list of a graph that has none; ``existing`` when it is the same list,
    ``conflict`` when it differs or names a node the graph does not hold."""
    scope = Scope(record.group, record.agent)
    with write_tx(conn):
        held = focus(conn, scope)
        if held:
            return "existing" if held == record.node_ids else "conflict"
        nodes = [get_node(conn, node_id) for node_id in record.node_ids]
        if any(n is None or (n.group, n.agent) != scope for n in nodes):
            return "conflict"
        push_focus(conn, scope, list(reversed(record.node_ids)), len(record.node_ids))
    return "added"


def put_back_task(conn: sqlite3.Connection, record: TaskRecord) -> str:
    """A queued graph-remember task, its id kept."""
    messages = json.dumps(record.messages, ensure_ascii=False)
    with write_tx(conn):
        held = conn.execute(
            "SELECT group_id, agent_id, messages_json, enqueued_at, attempts FROM graph_tasks"
            " WHERE task_id = ?",
            (record.id,),
        ).fetchone()
        if held is not None:
            same = (held[0], held[1], json.loads(held[2]), held[3], held[4]) == tuple(record[1:])
            return "existing" if same else "conflict"
        conn.execute(
            "INSERT INTO graph_tasks (task_id, group_id, agent_id, messages_json, enqueued_at,"
            " attempts) VALUES (?, ?, ?, ?, ?, ?)",
            (record.id, record.group, record.agent, messages, record.enqueued_at, record.attempts),
        )
    return "added"
