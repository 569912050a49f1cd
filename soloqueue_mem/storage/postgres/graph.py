"""Seed 002's graph memory on PostgreSQL: :class:`soloqueue_mem.graph.db.GraphDb` with
the SQL of :mod:`soloqueue_mem.graph.store` in PostgreSQL's dialect, row for row the
same results in the same order (text is ordered by ``COLLATE "C"``, as SQLite's
binary order), so recall's paths and scores do not depend on the back end.

Several hosts share one graph: node ids come from a sequence, a link is upserted on
its key (``ON CONFLICT``), and a focus push holds a transaction-scoped advisory lock
on its graph, so two pushes never interleave their read of the top position with
their writes. The queue is :mod:`soloqueue_mem.graph.queue`'s, on this connection.

The graph worker's lock is a session advisory lock held on a connection of its own for
the worker's run; the server releases it when that connection ends, a killed worker's
included. Tasks are applied strictly in order, one worker at a time (each task reads
the focus the one before it left), so workers on several hosts take turns rather than
skip past one another's rows.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from soloqueue_mem.db.adapter import Db
from soloqueue_mem.errors import TempFail
from soloqueue_mem.graph import queue
from soloqueue_mem.graph.queue import Task
from soloqueue_mem.graph.store import NODE_COLUMNS, Link, Node, Scope, node_from_row

if TYPE_CHECKING:
    import psycopg

_WORKER_LOCK = 0x47524150  # the graph worker's session lock ("GRAP")
_LINK_COLUMNS = "from_id, to_id, strength, relation"


def _ids(node_ids: Iterable[int]) -> list[int]:
    return [int(node_id) for node_id in node_ids]


class PgGraph:
    """The graph tables of the PostgreSQL database (``conn``: autocommit; whoever
    opened it closes it, through :meth:`close` or otherwise)."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn

    def transaction(self) -> AbstractContextManager[Any]:
        return self.conn.transaction()

    def close(self) -> None:
        self.conn.close()

    def _rows(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        return self.conn.execute(sql, params).fetchall()  # type: ignore[arg-type]

    # -- nodes --------------------------------------------------------------------------

    def create_node(
        self, scope: Scope, content: str, phrase: str, keywords: list[str], created_at: str
    ) -> int:
        row = self.conn.execute(
            "INSERT INTO graph_nodes (group_id, agent_id, content, phrase, keywords_json,"
            " created_at) VALUES (%s, %s, %s, %s, %s, %s) RETURNING node_id",
            (*scope, content, phrase, json.dumps(keywords, ensure_ascii=False), created_at),
        ).fetchone()
        assert row is not None
        return int(row[0])

    def insert_node(self, node: Node) -> None:
        self.conn.execute(
            "INSERT INTO graph_nodes (node_id, group_id, agent_id, content, phrase,"
            " keywords_json, created_at, scan_count) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            (*node[:5], json.dumps(node.keywords, ensure_ascii=False), *node[6:]),
        )

    def reserve_node_ids(self, at_least: int) -> None:
        Db(self.conn).claim_id("graph_nodes", "node_id", at_least)

    def get_node(self, node_id: int) -> Node | None:
        rows = self._rows(
            f"SELECT {NODE_COLUMNS} FROM graph_nodes WHERE node_id = %s",  # noqa: S608
            (node_id,),
        )
        return node_from_row(rows[0]) if rows else None

    def get_nodes(self, node_ids: Iterable[int]) -> dict[int, Node]:
        rows = self._rows(
            f"SELECT {NODE_COLUMNS} FROM graph_nodes"  # noqa: S608 - constant columns
            " WHERE node_id = ANY(%s::bigint[])",
            (_ids(node_ids),),
        )
        return {int(row[0]): node_from_row(row) for row in rows}

    def texts_of(self, node_ids: Iterable[int]) -> dict[int, tuple[str, str]]:
        rows = self._rows(
            "SELECT node_id, content, keywords_json FROM graph_nodes"
            " WHERE node_id = ANY(%s::bigint[])",
            (_ids(node_ids),),
        )
        return {int(row[0]): (row[1], row[2]) for row in rows}

    def update_content(self, node_id: int, content: str, phrase: str, keywords: list[str]) -> None:
        self.conn.execute(
            "UPDATE graph_nodes SET content = %s, phrase = %s, keywords_json = %s"
            " WHERE node_id = %s",
            (content, phrase, json.dumps(keywords, ensure_ascii=False), node_id),
        )

    def delete_node(self, node_id: int) -> None:
        """Delete the node and its out-links; links into it stay (dangling)."""
        for table, column in (("graph_links", "from_id"), ("graph_focus", "node_id")):
            self.conn.execute(
                f"DELETE FROM {table} WHERE {column} = %s",  # noqa: S608 - constants
                (node_id,),
            )
        self.conn.execute("DELETE FROM graph_nodes WHERE node_id = %s", (node_id,))

    def increment_scan_count(self, node_id: int) -> None:
        self.conn.execute(
            "UPDATE graph_nodes SET scan_count = scan_count + 1 WHERE node_id = %s", (node_id,)
        )

    def scan_order(self, scope: Scope) -> list[int]:
        rows = self._rows(
            "SELECT node_id FROM graph_nodes WHERE group_id = %s AND agent_id = %s"
            " ORDER BY scan_count, node_id",
            tuple(scope),
        )
        return [int(row[0]) for row in rows]

    def nodes_of(self, scope: Scope) -> list[Node]:
        rows = self._rows(
            f"SELECT {NODE_COLUMNS} FROM graph_nodes"  # noqa: S608 - constant columns
            " WHERE group_id = %s AND agent_id = %s ORDER BY node_id",
            tuple(scope),
        )
        return [node_from_row(row) for row in rows]

    def scopes(self) -> list[Scope]:
        rows = self._rows(
            "SELECT group_id, agent_id FROM (SELECT group_id, agent_id FROM graph_nodes"
            " UNION SELECT group_id, agent_id FROM graph_tasks) AS held"
            ' ORDER BY group_id COLLATE "C", agent_id COLLATE "C"'
        )
        return [Scope(str(row[0]), str(row[1])) for row in rows]

    # -- links --------------------------------------------------------------------------

    def create_link(self, from_id: int, to_id: int, strength: float, relation: str | None) -> None:
        self.conn.execute(
            "INSERT INTO graph_links (from_id, to_id, strength, relation)"
            " VALUES (%s, %s, %s, %s) ON CONFLICT (from_id, to_id) DO UPDATE"
            " SET strength = excluded.strength, relation = excluded.relation",
            (from_id, to_id, strength, relation),
        )

    def out_links(self, node_id: int, floor: float = 0.0) -> list[Link]:
        rows = self._rows(
            f"SELECT {_LINK_COLUMNS} FROM graph_links"  # noqa: S608 - constant columns
            " WHERE from_id = %s AND strength >= %s ORDER BY strength DESC, to_id",
            (node_id, floor),
        )
        return [Link(*row) for row in rows]

    def out_links_of(self, node_ids: Iterable[int], floor: float = 0.0) -> dict[int, list[Link]]:
        found: dict[int, list[Link]] = {node_id: [] for node_id in node_ids}
        rows = self._rows(
            f"SELECT {_LINK_COLUMNS} FROM graph_links"  # noqa: S608 - constant columns
            " WHERE from_id = ANY(%s::bigint[]) AND strength >= %s"
            " ORDER BY from_id, strength DESC, to_id",
            (_ids(found), floor),
        )
        for row in rows:
            found[row[0]].append(Link(*row))
        return found

    def in_links(self, node_id: int, floor: float = 0.0) -> list[Link]:
        rows = self._rows(
            f"SELECT {_LINK_COLUMNS} FROM graph_links"  # noqa: S608 - constant columns
            " WHERE to_id = %s AND strength >= %s ORDER BY strength DESC, from_id",
            (node_id, floor),
        )
        return [Link(*row) for row in rows]

    def importance(self, node_id: int, floor: float) -> float:
        rows = self._rows(
            "SELECT strength FROM graph_links WHERE to_id = %s AND strength >= %s",
            (node_id, floor),
        )
        return math.fsum(row[0] for row in rows)  # as graph.db's: correctly rounded

    def decay_links(self, node_id: int, rate: float, floor: float, protected: Iterable[int]) -> int:
        touched = "(from_id = %(n)s OR to_id = %(n)s) AND NOT from_id = ANY(%(keep)s::bigint[])"
        params = {"n": node_id, "keep": _ids(protected), "rate": rate, "floor": floor}
        self.conn.execute(
            f"UPDATE graph_links SET strength = strength * %(rate)s WHERE {touched}",  # noqa: S608
            params,
        )
        broken = self.conn.execute(
            f"DELETE FROM graph_links WHERE {touched} AND strength < %(floor)s",  # noqa: S608
            params,
        )
        return int(broken.rowcount)

    def dangling_from(self, node_ids: Sequence[int], floor: float = 0.0) -> list[Link]:
        rows = self._rows(
            "SELECT l.from_id, l.to_id, l.strength, l.relation FROM graph_links AS l"
            " WHERE l.from_id = ANY(%s::bigint[]) AND l.strength >= %s"
            " AND NOT EXISTS (SELECT 1 FROM graph_nodes AS n WHERE n.node_id = l.to_id)"
            " ORDER BY l.to_id",
            (_ids(node_ids), floor),
        )
        order = {node_id: rank for rank, node_id in enumerate(node_ids)}
        return sorted((Link(*row) for row in rows), key=lambda link: order[link.from_id])

    def links_of(self, scope: Scope) -> list[Link]:
        rows = self._rows(
            "SELECT l.from_id, l.to_id, l.strength, l.relation FROM graph_links AS l"
            " JOIN graph_nodes AS n ON n.node_id = l.from_id"
            " WHERE n.group_id = %s AND n.agent_id = %s ORDER BY l.from_id, l.to_id",
            tuple(scope),
        )
        return [Link(*row) for row in rows]

    # -- focus --------------------------------------------------------------------------

    def focus(self, scope: Scope) -> list[int]:
        rows = self._rows(
            "SELECT node_id FROM graph_focus WHERE group_id = %s AND agent_id = %s"
            " ORDER BY seq DESC",
            tuple(scope),
        )
        return [int(row[0]) for row in rows]

    def push_focus(self, scope: Scope, node_ids: list[int], limit: int) -> None:
        """Make ``node_ids`` (oldest first) the newest focus nodes; evict past ``limit``."""
        with self.conn.transaction():
            self.conn.execute(
                "SELECT pg_advisory_xact_lock(hashtext(%s))",
                (f"graph_focus/{scope.group}/{scope.agent}",),
            )
            top = self._rows(
                "SELECT COALESCE(MAX(seq), 0) FROM graph_focus"
                " WHERE group_id = %s AND agent_id = %s",
                tuple(scope),
            )[0][0]
            with self.conn.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO graph_focus (group_id, agent_id, node_id, seq)"
                    " VALUES (%s, %s, %s, %s) ON CONFLICT (group_id, agent_id, node_id)"
                    " DO UPDATE SET seq = excluded.seq",
                    [(*scope, node_id, top + n) for n, node_id in enumerate(node_ids, start=1)],
                )
            self.conn.execute(
                "DELETE FROM graph_focus WHERE group_id = %(g)s AND agent_id = %(a)s"
                " AND node_id NOT IN (SELECT node_id FROM graph_focus"
                " WHERE group_id = %(g)s AND agent_id = %(a)s ORDER BY seq DESC LIMIT %(n)s)",
                {"g": scope.group, "a": scope.agent, "n": limit},
            )

    def counts(self, scope: Scope, floor: float) -> dict[str, int]:
        row = self._rows(
            "SELECT (SELECT COUNT(*) FROM graph_nodes WHERE group_id = %(g)s"
            "  AND agent_id = %(a)s),"
            " (SELECT COUNT(*) FROM graph_links AS l JOIN graph_nodes AS n"
            "  ON n.node_id = l.from_id"
            "  WHERE n.group_id = %(g)s AND n.agent_id = %(a)s AND l.strength >= %(f)s),"
            " (SELECT COUNT(*) FROM graph_links AS l JOIN graph_nodes AS n"
            "  ON n.node_id = l.from_id WHERE n.group_id = %(g)s AND n.agent_id = %(a)s"
            "  AND NOT EXISTS (SELECT 1 FROM graph_nodes AS t WHERE t.node_id = l.to_id)),"
            " (SELECT COUNT(*) FROM graph_focus WHERE group_id = %(g)s AND agent_id = %(a)s),"
            " (SELECT COUNT(*) FROM graph_tasks WHERE group_id = %(g)s AND agent_id = %(a)s)",
            {"g": scope.group, "a": scope.agent, "f": floor},
        )[0]
        names = ("nodes", "links", "dangling_links", "focus", "queued")
        return dict(zip(names, (int(n) for n in row), strict=True))

    # -- the task queue -----------------------------------------------------------------

    def enqueue(
        self, scope: Scope, messages: list[dict[str, str]], enqueued_at: str, max_size: int
    ) -> int:
        return queue.enqueue(self.conn, scope, messages, enqueued_at, max_size)

    def head(self, after: int = 0) -> Task | None:
        return queue.head(self.conn, after)

    def pending(self) -> list[Task]:
        return queue.pending(self.conn)

    def task(self, task_id: int) -> Task | None:
        return queue.task(self.conn, task_id)

    def insert_task(self, task: Task) -> None:
        queue.insert_task(self.conn, task)

    def take(self, task_id: int) -> bool:
        return queue.take(self.conn, task_id)

    def requeue(self, task: Task) -> int:
        return queue.requeue(self.conn, task)

    def depth(self) -> int:
        return queue.depth(self.conn)


@contextmanager
def worker_lock(url: str, wait: bool) -> Iterator[None]:
    """Hold the graph worker's lock for the block; TempFail when another worker (on
    any host) holds it and not ``wait``."""
    from soloqueue_mem.storage.postgres.connect import connect

    conn = connect(url)
    try:
        if wait:
            conn.execute("SELECT pg_advisory_lock(%s)", (_WORKER_LOCK,))
        else:
            row = conn.execute("SELECT pg_try_advisory_lock(%s)", (_WORKER_LOCK,)).fetchone()
            if not (row and row[0]):
                raise TempFail("the graph worker lock is held by another worker (any host)")
        yield
    finally:
        conn.close()
