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
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from soloqueue_mem.db.adapter import Db
from soloqueue_mem.errors import TempFail
from soloqueue_mem.graph.db import WrittenOnce
from soloqueue_mem.graph.store import Node, Scope

if TYPE_CHECKING:
    import psycopg

_WORKER_LOCK = 0x47524150  # the graph worker's session lock ("GRAP")


class PgGraph(WrittenOnce):
    """The graph tables of the PostgreSQL database (``conn``: autocommit; whoever
    opened it closes it, through :meth:`close` or otherwise): the methods graph.db
    spells otherwise (no keyword index; a sequence)."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn

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

    # -- links --------------------------------------------------------------------------

    def decay_links(self, node_id: int, rate: float, floor: float, protected: Iterable[int]) -> int:
        touched = "(from_id = %(n)s OR to_id = %(n)s) AND NOT from_id = ANY(%(keep)s::bigint[])"
        params = {"n": node_id, "keep": Db(self.conn).ids(protected), "rate": rate, "floor": floor}
        self.conn.execute(
            f"UPDATE graph_links SET strength = strength * %(rate)s WHERE {touched}",  # noqa: S608
            params,
        )
        broken = self.conn.execute(
            f"DELETE FROM graph_links WHERE {touched} AND strength < %(floor)s",  # noqa: S608
            params,
        )
        return int(broken.rowcount)


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
