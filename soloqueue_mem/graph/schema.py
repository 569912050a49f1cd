"""DDL of graph.db. Table names are part of the store's contract (README).

Node ids come from AUTOINCREMENT, so the id of a deleted node is never reused: a link
left pointing at it stays dangling ("remembers having known") instead of pointing at a
newer node by accident. Links have no foreign key on ``to_id`` for the same reason.
"""

from __future__ import annotations

import sqlite3

from soloqueue_mem.db.migrate import execute_script

# The tables as SQLite spells them; PostgreSQL's schema renders the same text with its
# ids as BIGINT (soloqueue_mem.storage.postgres.schema), so a column is declared once.
GRAPH_NODES = """
        CREATE TABLE graph_nodes (
            node_id INTEGER PRIMARY KEY AUTOINCREMENT,
            group_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            content TEXT NOT NULL,
            phrase TEXT NOT NULL,
            keywords_json TEXT NOT NULL,
            created_at TEXT NOT NULL,
            scan_count INTEGER NOT NULL DEFAULT 0
        );
        -- compression scheme B visits the fewest-scanned nodes first
        CREATE INDEX graph_nodes_scan ON graph_nodes (group_id, agent_id, scan_count, node_id);
        CREATE TABLE graph_links (
            from_id INTEGER NOT NULL,
            to_id INTEGER NOT NULL,
            strength REAL NOT NULL CHECK (strength >= 0 AND strength <= 1),
            relation TEXT,
            PRIMARY KEY (from_id, to_id)
        ) WITHOUT ROWID;
        -- in-links: importance, and the links that decay with a node
        CREATE INDEX graph_links_in ON graph_links (to_id, from_id);
"""
# graph.db's index of ``keywords_json`` (nothing searches it; PostgreSQL has none)
GRAPH_KEYWORDS = """        CREATE TABLE graph_keywords (
            keyword TEXT NOT NULL,
            node_id INTEGER NOT NULL REFERENCES graph_nodes (node_id) ON DELETE CASCADE,
            PRIMARY KEY (keyword, node_id)
        ) WITHOUT ROWID;
        CREATE INDEX graph_keywords_node ON graph_keywords (node_id);
"""
GRAPH_FOCUS_AND_TASKS = """        CREATE TABLE graph_focus (
            group_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            node_id INTEGER NOT NULL REFERENCES graph_nodes (node_id),
            seq INTEGER NOT NULL,
            PRIMARY KEY (group_id, agent_id, node_id)
        );
        CREATE TABLE graph_tasks (
            task_id INTEGER PRIMARY KEY AUTOINCREMENT,
            group_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            messages_json TEXT NOT NULL,
            enqueued_at TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0
        );
        """
# the columns holding a node's id or an order, BIGINT on PostgreSQL
GRAPH_WIDE = ("from_id", "to_id", "node_id", "seq")


def m001_create_graph(conn: sqlite3.Connection) -> None:
    execute_script(conn, GRAPH_NODES + GRAPH_KEYWORDS + GRAPH_FOCUS_AND_TASKS)
