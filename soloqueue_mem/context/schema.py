"""DDL for the tables the context layer owns in memory.db (migrations only)."""

from __future__ import annotations

import sqlite3

# As SQLite spells it; PostgreSQL's schema renders the same text
# (soloqueue_mem.storage.postgres.schema), so a column is declared once.
TOKEN_CACHE = """CREATE TABLE token_cache (
            key TEXT NOT NULL,
            encoding TEXT NOT NULL,
            tokens INTEGER NOT NULL,
            PRIMARY KEY (key, encoding)
        ) WITHOUT ROWID"""


def m004_create_token_cache(conn: sqlite3.Connection) -> None:
    """Token counts per encoding of logged turns' L1 messages (``turn:g/a/s#i``) and
    of other texts (``text:<sha256>``): a logged turn never changes, so its count is
    computed once per encoding and a long session is not re-encoded on every build."""
    conn.execute(TOKEN_CACHE)
