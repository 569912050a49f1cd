"""DDL for the tables the state layer owns in state.db: key-value store and session
state (migrations only)."""

from __future__ import annotations

import sqlite3

from soloqueue_mem.db.migrate import execute_script


def m002_create_kv_store(conn: sqlite3.Connection) -> None:
    execute_script(
        conn,
        """
        CREATE TABLE kv_store (
            group_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (group_id, agent_id, key)
        ) WITHOUT ROWID;
        """,
    )


def m003_create_session_state(conn: sqlite3.Connection) -> None:
    execute_script(
        conn,
        """
        CREATE TABLE session_state (
            group_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (group_id, agent_id, session_id, key)
        ) WITHOUT ROWID;
        """,
    )
