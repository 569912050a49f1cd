"""DDL for the tables the semantic layer owns in memory.db (migrations only)."""

from __future__ import annotations

import sqlite3

from soloqueue_mem.db.migrate import execute_script


def m008_create_embedding_cache(conn: sqlite3.Connection) -> None:
    """Vectors keyed by (model, content hash), so no text is embedded twice by one
    model (seed 003 §5.3), and which item (memory, episode, turn) has which content
    hash under which model. Vectors are little-endian float32 BLOBs, L2-normalised.
    ``embedded_items`` keeps the scope (group, agent) of an item, which never changes,
    to narrow a search in SQL; whether an item is still active is checked against its
    own table at query time, so the filters stay exact."""
    execute_script(
        conn,
        """
        CREATE TABLE embedding_cache (
            model TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL,
            created_at TEXT NOT NULL,
            UNIQUE (model, content_hash)
        );
        CREATE TABLE embedded_items (
            model TEXT NOT NULL,
            kind TEXT NOT NULL,
            item_id TEXT NOT NULL,
            group_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            PRIMARY KEY (model, kind, item_id)
        ) WITHOUT ROWID;
        CREATE INDEX idx_embedded_items_scope
            ON embedded_items (model, kind, group_id, agent_id);
        """,
    )
