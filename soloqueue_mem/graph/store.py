"""All SQL for graph nodes, links, keywords and the focus list (seed 002 §3.2-§3.4).

A graph is the nodes of one (group, agent); links join nodes of one graph, so a node's
links and its focus membership belong to its agent's graph alone. Callers hold the
write transaction (:func:`soloqueue_mem.db.connect.write_tx`) around every change.

Every function is written once for graph.db and PostgreSQL
(:mod:`soloqueue_mem.db.adapter`): graph.db alone keeps a keyword index (``graph_keywords``)
and an AUTOINCREMENT sequence; the database gives node ids from its own sequence.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence

from soloqueue_mem.db.adapter import Db
from soloqueue_mem.tuples import NamedTuple

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from soloqueue_mem.db.adapter import Connection


class Scope(NamedTuple):
    group: str
    agent: str


class Node(NamedTuple):
    id: int
    group: str
    agent: str
    content: str
    phrase: str
    keywords: list[str]
    created_at: str
    scan_count: int


class Link(NamedTuple):
    from_id: int
    to_id: int
    strength: float
    relation: str | None


NODE_COLUMNS = "node_id, group_id, agent_id, content, phrase, keywords_json, created_at, scan_count"


def node_from_row(row: Sequence[object]) -> Node:
    return Node(
        int(row[0]),  # type: ignore[call-overload]
        str(row[1]),
        str(row[2]),
        str(row[3]),
        str(row[4]),
        json.loads(str(row[5])),
        str(row[6]),
        int(row[7]),  # type: ignore[call-overload]
    )


# -- nodes ------------------------------------------------------------------------------


def create_node(
    conn: Connection,
    scope: Scope,
    content: str,
    phrase: str,
    keywords: list[str],
    created_at: str,
) -> int:
    db = Db(conn)
    node_id = db.insert(
        "INSERT INTO graph_nodes (group_id, agent_id, content, phrase, keywords_json,"
        " created_at) VALUES (?, ?, ?, ?, ?, ?)",
        (*scope, content, phrase, json.dumps(keywords, ensure_ascii=False), created_at),
        key="node_id",
    )
    _index_keywords(db, node_id, keywords)
    return node_id


def insert_node(conn: Connection, node: Node) -> None:
    """Put ``node`` back with its own id (an import), its keywords indexed."""
    db = Db(conn)
    db.execute(
        "INSERT INTO graph_nodes (node_id, group_id, agent_id, content, phrase,"
        " keywords_json, created_at, scan_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (*node[:5], json.dumps(node.keywords, ensure_ascii=False), *node[6:]),
    )
    _index_keywords(db, node.id, node.keywords)


def reserve_node_ids(conn: Connection, at_least: int) -> None:
    """No new node takes an id up to ``at_least`` (a dangling link may name it): graph.db's
    AUTOINCREMENT sequence, or the database's, moved past it."""
    db = Db(conn)
    if db.postgres:
        db.claim_id("graph_nodes", "node_id", at_least)
        return
    updated = db.execute(
        "UPDATE sqlite_sequence SET seq = MAX(seq, ?) WHERE name = 'graph_nodes'", (at_least,)
    )
    if updated.rowcount == 0:
        db.execute("INSERT INTO sqlite_sequence (name, seq) VALUES ('graph_nodes', ?)", (at_least,))


def _index_keywords(db: Db, node_id: int, keywords: list[str]) -> None:
    """graph.db's keyword index (the database keeps none)."""
    if not db.postgres:
        db.executemany(
            "INSERT OR IGNORE INTO graph_keywords (keyword, node_id) VALUES (?, ?)",
            [(word.lower(), node_id) for word in keywords],
        )


def get_node(conn: Connection, node_id: int) -> Node | None:
    row = Db(conn).fetchone(
        f"SELECT {NODE_COLUMNS} FROM graph_nodes WHERE node_id = ?",  # noqa: S608 - constant
        (node_id,),
    )
    return node_from_row(row) if row else None


def get_nodes(conn: Connection, node_ids: Iterable[int]) -> dict[int, Node]:
    """The existing nodes among ``node_ids`` (deleted ones are absent), in one query."""
    db = Db(conn)
    rows = db.fetchall(
        f"SELECT {NODE_COLUMNS} FROM graph_nodes"  # noqa: S608 - constant columns
        f" WHERE {db.among('node_id')}",
        (db.ids(node_ids),),
    )
    return {int(row[0]): node_from_row(row) for row in rows}


def texts_of(conn: Connection, node_ids: Iterable[int]) -> dict[int, tuple[str, str]]:
    """The content and keywords (JSON) of the existing nodes among ``node_ids``, in one
    query: what recall matches against, without building whole nodes."""
    db = Db(conn)
    rows = db.fetchall(
        f"SELECT node_id, content, keywords_json FROM graph_nodes WHERE {db.among('node_id')}",  # noqa: S608
        (db.ids(node_ids),),
    )
    return {int(row[0]): (row[1], row[2]) for row in rows}


def update_content(
    conn: Connection, node_id: int, content: str, phrase: str, keywords: list[str]
) -> None:
    db = Db(conn)
    db.execute(
        "UPDATE graph_nodes SET content = ?, phrase = ?, keywords_json = ? WHERE node_id = ?",
        (content, phrase, json.dumps(keywords, ensure_ascii=False), node_id),
    )
    _unindex_keywords(db, node_id)
    _index_keywords(db, node_id, keywords)


def _unindex_keywords(db: Db, node_id: int) -> None:
    if not db.postgres:
        db.execute("DELETE FROM graph_keywords WHERE node_id = ?", (node_id,))


def delete_node(conn: Connection, node_id: int) -> None:
    """Delete the node and its out-links; links into it stay (dangling)."""
    db = Db(conn)
    db.execute("DELETE FROM graph_links WHERE from_id = ?", (node_id,))
    _unindex_keywords(db, node_id)
    db.execute("DELETE FROM graph_focus WHERE node_id = ?", (node_id,))
    db.execute("DELETE FROM graph_nodes WHERE node_id = ?", (node_id,))


def increment_scan_count(conn: Connection, node_id: int) -> None:
    Db(conn).execute(
        "UPDATE graph_nodes SET scan_count = scan_count + 1 WHERE node_id = ?", (node_id,)
    )


def scan_order(conn: Connection, scope: Scope) -> list[int]:
    """The graph's node ids, fewest scans first, then oldest (compression scheme B)."""
    rows = Db(conn).fetchall(
        "SELECT node_id FROM graph_nodes WHERE group_id = ? AND agent_id = ?"
        " ORDER BY scan_count, node_id",
        scope,
    )
    return [int(row[0]) for row in rows]


def nodes_of(conn: Connection, scope: Scope) -> list[Node]:
    rows = Db(conn).fetchall(
        f"SELECT {NODE_COLUMNS} FROM graph_nodes"  # noqa: S608 - constant columns
        " WHERE group_id = ? AND agent_id = ? ORDER BY node_id",
        scope,
    )
    return [node_from_row(row) for row in rows]


def scopes(conn: Connection) -> list[Scope]:
    """Every (group, agent) that has nodes, focus or queued tasks, in byte order."""
    db = Db(conn)
    rows = db.fetchall(
        "SELECT group_id, agent_id FROM (SELECT group_id, agent_id FROM graph_nodes"
        " UNION SELECT group_id, agent_id FROM graph_tasks) AS held"
        f" ORDER BY {db.bytewise('group_id')}, {db.bytewise('agent_id')}"
    )
    return [Scope(str(row[0]), str(row[1])) for row in rows]


# -- links ------------------------------------------------------------------------------


def create_link(
    conn: Connection, from_id: int, to_id: int, strength: float, relation: str | None
) -> None:
    """Create (or reset) the directed link ``from_id -> to_id``."""
    Db(conn).execute(
        "INSERT INTO graph_links (from_id, to_id, strength, relation) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (from_id, to_id) DO UPDATE SET strength = excluded.strength,"
        " relation = excluded.relation",
        (from_id, to_id, strength, relation),
    )


def out_links(conn: Connection, node_id: int, floor: float = 0.0) -> list[Link]:
    return _links(conn, "from_id", node_id, floor)


def out_links_of(
    conn: Connection, node_ids: Iterable[int], floor: float = 0.0
) -> dict[int, list[Link]]:
    """The out-links of each of ``node_ids`` (strongest first), in one query: the
    primary key (from_id, to_id) holds every column, so each source is one range."""
    found: dict[int, list[Link]] = {node_id: [] for node_id in node_ids}
    db = Db(conn)
    rows = db.fetchall(
        "SELECT from_id, to_id, strength, relation FROM graph_links"  # noqa: S608
        f" WHERE {db.among('from_id')} AND strength >= ?"
        " ORDER BY from_id, strength DESC, to_id",
        (db.ids(found), floor),
    )
    for row in rows:
        found[row[0]].append(Link(*row))
    return found


def in_links(conn: Connection, node_id: int, floor: float = 0.0) -> list[Link]:
    return _links(conn, "to_id", node_id, floor)


def _links(conn: Connection, end: str, node_id: int, floor: float) -> list[Link]:
    """The links whose ``end`` (``from_id`` or ``to_id``) is ``node_id``, strongest
    first, ties by the node at their other end."""
    other = "to_id" if end == "from_id" else "from_id"
    rows = Db(conn).fetchall(
        "SELECT from_id, to_id, strength, relation FROM graph_links"  # noqa: S608
        f" WHERE {end} = ? AND strength >= ? ORDER BY strength DESC, {other}",
        (node_id, floor),
    )
    return [Link(*row) for row in rows]


def importance(conn: Connection, node_id: int, floor: float) -> float:
    """The sum of the strengths of the links pointing at the node (broken ones aside),
    correctly rounded (``math.fsum``: the same on every back end, whatever order the
    rows come in)."""
    rows = Db(conn).fetchall(
        "SELECT strength FROM graph_links WHERE to_id = ? AND strength >= ?",
        (node_id, floor),
    )
    return math.fsum(row[0] for row in rows)


def decay_links(
    conn: Connection, node_id: int, rate: float, floor: float, protected: Iterable[int]
) -> int:
    """Multiply the node's links (in and out) by ``rate``, except links from a node in
    ``protected`` (the focus); delete those that fall below ``floor``. Returns how many
    links broke."""
    db = Db(conn)
    keep = db.ids(protected)  # an empty list protects nothing
    touched = f"(from_id = ? OR to_id = ?) AND NOT {db.among('from_id')}"
    db.execute(
        f"UPDATE graph_links SET strength = strength * ? WHERE {touched}",  # noqa: S608
        (rate, node_id, node_id, keep),
    )
    broken = db.execute(
        f"DELETE FROM graph_links WHERE {touched} AND strength < ?",  # noqa: S608
        (node_id, node_id, keep, floor),
    )
    return int(broken.rowcount)


def dangling_from(conn: Connection, node_ids: Sequence[int], floor: float = 0.0) -> list[Link]:
    """The out-links of ``node_ids`` whose target no longer exists, in the order of
    ``node_ids``, then by target; one query."""
    db = Db(conn)
    rows = db.fetchall(
        "SELECT l.from_id, l.to_id, l.strength, l.relation FROM graph_links AS l"  # noqa: S608
        f" WHERE {db.among('l.from_id')} AND l.strength >= ?"
        " AND NOT EXISTS (SELECT 1 FROM graph_nodes AS n WHERE n.node_id = l.to_id)"
        " ORDER BY l.to_id",
        (db.ids(node_ids), floor),
    )
    order = {node_id: rank for rank, node_id in enumerate(node_ids)}
    return sorted((Link(*row) for row in rows), key=lambda link: order[link.from_id])


def links_of(conn: Connection, scope: Scope) -> list[Link]:
    """Every link whose source node is in the graph."""
    rows = Db(conn).fetchall(
        "SELECT l.from_id, l.to_id, l.strength, l.relation FROM graph_links AS l"
        " JOIN graph_nodes AS n ON n.node_id = l.from_id"
        " WHERE n.group_id = ? AND n.agent_id = ? ORDER BY l.from_id, l.to_id",
        scope,
    )
    return [Link(*row) for row in rows]


# -- focus ------------------------------------------------------------------------------


def focus(conn: Connection, scope: Scope) -> list[int]:
    """The focus node ids, newest first (LRU by queue order, not by time)."""
    rows = Db(conn).fetchall(
        "SELECT node_id FROM graph_focus WHERE group_id = ? AND agent_id = ? ORDER BY seq DESC",
        scope,
    )
    return [int(row[0]) for row in rows]


def push_focus(conn: Connection, scope: Scope, node_ids: list[int], limit: int) -> None:
    """Make ``node_ids`` (oldest first) the newest focus nodes; evict past ``limit``.
    The graph's focus is locked while it is read and written, so two pushes (from two
    hosts on PostgreSQL) never interleave."""
    db = Db(conn)
    with db.write():
        db.lock(f"graph_focus/{scope.group}/{scope.agent}")
        found = db.fetchone(
            "SELECT COALESCE(MAX(seq), 0) FROM graph_focus WHERE group_id = ? AND agent_id = ?",
            scope,
        )
        top = found[0] if found else 0
        db.executemany(
            "INSERT INTO graph_focus (group_id, agent_id, node_id, seq) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (group_id, agent_id, node_id) DO UPDATE SET seq = excluded.seq",
            [(*scope, node_id, top + n) for n, node_id in enumerate(node_ids, start=1)],
        )
        db.execute(
            "DELETE FROM graph_focus WHERE group_id = ? AND agent_id = ? AND node_id NOT IN"
            " (SELECT node_id FROM graph_focus WHERE group_id = ? AND agent_id = ?"
            " ORDER BY seq DESC LIMIT ?)",
            (*scope, *scope, limit),
        )


def counts(conn: Connection, scope: Scope, floor: float) -> dict[str, int]:
    """Nodes, links, broken-free dangling links, focus and queued tasks of the graph."""
    row = Db(conn).fetchone(
        "SELECT (SELECT COUNT(*) FROM graph_nodes WHERE group_id = :g AND agent_id = :a),"
        " (SELECT COUNT(*) FROM graph_links AS l JOIN graph_nodes AS n ON n.node_id = l.from_id"
        "  WHERE n.group_id = :g AND n.agent_id = :a AND l.strength >= :f),"
        " (SELECT COUNT(*) FROM graph_links AS l JOIN graph_nodes AS n ON n.node_id = l.from_id"
        "  WHERE n.group_id = :g AND n.agent_id = :a AND NOT EXISTS"
        "  (SELECT 1 FROM graph_nodes AS t WHERE t.node_id = l.to_id)),"
        " (SELECT COUNT(*) FROM graph_focus WHERE group_id = :g AND agent_id = :a),"
        " (SELECT COUNT(*) FROM graph_tasks WHERE group_id = :g AND agent_id = :a)",
        {"g": scope.group, "a": scope.agent, "f": floor},
    )
    assert row is not None
    names = ("nodes", "links", "dangling_links", "focus", "queued")
    return dict(zip(names, (int(n) for n in row), strict=True))
