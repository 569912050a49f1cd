"""DDL for the tables the state layer owns in state.db: key-value store and session
state (migrations only)."""

from __future__ import annotations

import sqlite3

from soloqueue_mem.db.migrate import execute_script

# The tables as SQLite spells them; PostgreSQL's schema renders the same text
# (soloqueue_mem.storage.postgres.schema), so a column is declared once.
KV_STORE = """
        CREATE TABLE kv_store (
            group_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (group_id, agent_id, key)
        ) WITHOUT ROWID;
"""
SESSION_STATE = """
        CREATE TABLE session_state (
            group_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (group_id, agent_id, session_id, key)
        ) WITHOUT ROWID;
"""


def m002_create_kv_store(conn: sqlite3.Connection) -> None:
    execute_script(conn, KV_STORE)


def m003_create_session_state(conn: sqlite3.Connection) -> None:
    execute_script(conn, SESSION_STATE)
