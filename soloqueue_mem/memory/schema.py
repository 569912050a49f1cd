"""DDL for the tables the memory layer owns in memory.db (migrations only)."""

from __future__ import annotations

import sqlite3

from soloqueue_mem.db.migrate import execute_script


def m003_create_memories(conn: sqlite3.Connection) -> None:
    """Semantic memories (seed 003 §4.1/§4.6 columns plus group/agent scope).

    ``content_key`` is a hash of the normalized content, for dedup on write. The FTS
    table is contentless like the turns' one: it indexes the index form (CJK
    characters spaced) of content, subject, predicate and tags, keyed by rowid.
    """
    execute_script(
        conn,
        """
        CREATE TABLE memories (
            id TEXT NOT NULL UNIQUE,
            group_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            type TEXT NOT NULL,
            priority TEXT NOT NULL,
            content TEXT NOT NULL,
            subject TEXT NOT NULL DEFAULT '',
            predicate TEXT NOT NULL DEFAULT '',
            source TEXT NOT NULL DEFAULT 'manual',
            source_episode_id TEXT,
            tags TEXT NOT NULL DEFAULT '[]',
            importance_score REAL NOT NULL DEFAULT 0.5,
            confidence REAL NOT NULL DEFAULT 0.5,
            access_count INTEGER NOT NULL DEFAULT 0,
            decay_rate REAL NOT NULL DEFAULT 0.1,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            last_accessed_at TEXT,
            expires_at TEXT,
            superseded_by TEXT,
            content_key TEXT NOT NULL
        );
        CREATE INDEX idx_memories_content_key ON memories (group_id, agent_id, content_key);
        CREATE INDEX idx_memories_subject
            ON memories (group_id, agent_id, subject, predicate) WHERE superseded_by IS NULL;
        CREATE INDEX idx_memories_superseded_by
            ON memories (superseded_by) WHERE superseded_by IS NOT NULL;
        CREATE INDEX idx_memories_updated ON memories (updated_at);
        CREATE VIRTUAL TABLE memories_fts USING fts5(
            content, subject, predicate, tags,
            content='', tokenize='porter unicode61 remove_diacritics 2'
        );
        """,
    )
