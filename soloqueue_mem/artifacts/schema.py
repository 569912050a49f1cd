"""DDL for artifacts.db (migrations only): seed 000 §5.2 plus a normalised tag table."""

from __future__ import annotations

import sqlite3

from soloqueue_mem.db.migrate import execute_script


def m001_create_artifacts(conn: sqlite3.Connection) -> None:
    """``artifacts`` keeps the seed's columns (``tags`` as a JSON list, for readers of the
    seed schema); ``artifact_tags`` holds the same tags one per row so GC's queries use
    an index instead of ``LIKE``."""
    execute_script(
        conn,
        """
        CREATE TABLE artifacts (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            content_hash TEXT NOT NULL,
            group_id TEXT,
            title TEXT,
            tags TEXT NOT NULL DEFAULT '[]',
            author TEXT,
            created_at TEXT NOT NULL,
            path TEXT NOT NULL,
            size INTEGER NOT NULL,
            mime TEXT
        );
        CREATE INDEX idx_content_hash ON artifacts (content_hash);
        CREATE INDEX idx_created ON artifacts (created_at);
        CREATE TABLE artifact_tags (
            tag TEXT NOT NULL,
            artifact_id INTEGER NOT NULL REFERENCES artifacts (id) ON DELETE CASCADE,
            PRIMARY KEY (tag, artifact_id)
        ) WITHOUT ROWID;
        CREATE INDEX idx_artifact_tags_artifact ON artifact_tags (artifact_id);
        """,
    )
