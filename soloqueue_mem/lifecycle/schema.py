"""DDL for the tables the lifecycle layer owns in state.db: the extraction queue and
the log extractions (migrations only)."""

from __future__ import annotations

import sqlite3

from soloqueue_mem.db.migrate import execute_script
from soloqueue_mem.sessions.schema import TURN_MESSAGE

# The tables as SQLite spells them; PostgreSQL's schema renders the same text
# (soloqueue_mem.storage.postgres.schema), so a column is declared once.
EXTRACTION_QUEUE = f"""
        CREATE TABLE extraction_queue (
            id INTEGER PRIMARY KEY AUTOINCREMENT,{TURN_MESSAGE}
            retry_count INTEGER NOT NULL DEFAULT 0,
            max_retries INTEGER NOT NULL DEFAULT 3,
            status TEXT NOT NULL DEFAULT 'pending',
            created_at TEXT NOT NULL,
            last_attempted_at TEXT,
            next_attempt_at TEXT NOT NULL,
            error TEXT,
            UNIQUE (group_id, agent_id, session_id, turn_index)
        );
"""
LOG_EXTRACTIONS = """
        CREATE TABLE log_extractions (
            group_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            turn_index INTEGER NOT NULL,
            reserved_at TEXT NOT NULL,
            extracted_at TEXT,
            memories INTEGER,
            PRIMARY KEY (group_id, agent_id, session_id, turn_index)
        ) WITHOUT ROWID;
"""


def m001_create_extraction_queue(conn: sqlite3.Connection) -> None:
    execute_script(
        conn,
        EXTRACTION_QUEUE
        + "CREATE INDEX idx_queue_due ON extraction_queue (status, next_attempt_at);",
    )


def m004_create_log_extractions(conn: sqlite3.Connection) -> None:
    execute_script(conn, LOG_EXTRACTIONS)
