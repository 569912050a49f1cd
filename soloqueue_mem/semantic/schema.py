"""DDL for the tables the semantic layer owns in memory.db (migrations only)."""

from __future__ import annotations

import sqlite3

from soloqueue_mem.db.migrate import execute_script

# As SQLite spells them; PostgreSQL's schema renders the same text
# (soloqueue_mem.storage.postgres.schema), so a column is declared once.
EMBEDDING_TABLES = """
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
        """


def m008_create_embedding_cache(conn: sqlite3.Connection) -> None:
    """Vectors keyed by (model, content hash), so no text is embedded twice by one
    model (seed 003 §5.3), and which item (memory, episode, turn) has which content
    hash under which model. Vectors are little-endian float32 BLOBs, L2-normalised.
    ``embedded_items`` keeps the scope (group, agent) of an item, which never changes,
    to narrow a search in SQL; whether an item is still active is checked against its
    own table at query time, so the filters stay exact."""
    execute_script(
        conn,
        EMBEDDING_TABLES
        + """CREATE INDEX idx_embedded_items_scope
            ON embedded_items (model, kind, group_id, agent_id);
        """,
    )


def m016_version_embeddings(conn: sqlite3.Connection) -> None:
    """One version per model, a new random one on every write to its rows of
    ``embedding_cache`` or ``embedded_items`` (triggers), so a search checks whether
    its memory-mapped copy is current by reading one row (:mod:`.mapped`) instead of
    counting 100k links. Random, not a counter: a database restored from a backup, or
    another store's put in its place, never repeats the version of other contents."""
    statements = [
        """
        CREATE TABLE embedding_versions (
            model TEXT PRIMARY KEY,
            version TEXT NOT NULL
        ) WITHOUT ROWID;
        """,
        """
        INSERT INTO embedding_versions (model, version)
            SELECT model, hex(randomblob(8))
            FROM (SELECT model FROM embedding_cache UNION SELECT model FROM embedded_items);
        """,
    ]
    for table in ("embedding_cache", "embedded_items"):
        for event, row in (("INSERT", "NEW"), ("UPDATE", "NEW"), ("DELETE", "OLD")):
            statements.append(
                f"""
                CREATE TRIGGER {table}_{event.lower()}_versions AFTER {event} ON {table}
                BEGIN
                    INSERT INTO embedding_versions (model, version)
                        VALUES ({row}.model, hex(randomblob(8)))
                        ON CONFLICT (model) DO UPDATE SET version = excluded.version;
                END;
                """
            )
    execute_script(conn, "".join(statements))
