"""DDL for the tables the sessions layer owns in memory.db (migrations only)."""

from __future__ import annotations

import sqlite3

from soloqueue_mem import jsonio
from soloqueue_mem.db.migrate import execute_script

# Column lists as SQLite spells them, shared by the tables declaring them alike (the
# extraction queue; PostgreSQL's turns and sessions, rendered by
# soloqueue_mem.storage.postgres.schema), so a column is declared once.
TURN_MESSAGE = """
            group_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            turn_index INTEGER NOT NULL,
            role TEXT NOT NULL,
            content TEXT NOT NULL,
            tool_calls TEXT,
            tool_results TEXT,"""
SESSION_COLUMNS = """
            group_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            started_at TEXT NOT NULL,
            last_turn_at TEXT NOT NULL,
            turn_count INTEGER NOT NULL DEFAULT 0,"""


def m001_create_turns(conn: sqlite3.Connection) -> None:
    """Turn index (seed 003 §4.5 plus group/agent scope), sessions, and full-text index.

    The FTS table is contentless: the text is stored once, in ``conversation_turns``;
    the index holds only tokens of its index form (CJK characters spaced apart).
    """
    execute_script(
        conn,
        f"""
        CREATE TABLE conversation_turns (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            group_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            turn_index INTEGER NOT NULL,
            role TEXT NOT NULL,
            content TEXT NOT NULL DEFAULT '',
            tool_calls TEXT,
            tool_results TEXT,
            has_tool_calls INTEGER NOT NULL DEFAULT 0,
            timestamp TEXT NOT NULL,
            token_estimate INTEGER,
            episode_id TEXT,
            extracted INTEGER NOT NULL DEFAULT 0,
            event_id TEXT,
            metadata_json TEXT,
            UNIQUE (group_id, agent_id, session_id, turn_index)
        );
        CREATE UNIQUE INDEX idx_turns_event
            ON conversation_turns (group_id, agent_id, session_id, event_id)
            WHERE event_id IS NOT NULL;
        CREATE INDEX idx_turns_timestamp ON conversation_turns (timestamp);
        CREATE INDEX idx_turns_extracted ON conversation_turns (extracted) WHERE extracted = 0;
        CREATE TABLE sessions ({SESSION_COLUMNS}
            jsonl_bytes INTEGER NOT NULL DEFAULT 0,
            ended_at TEXT,
            PRIMARY KEY (group_id, agent_id, session_id)
        ) WITHOUT ROWID;
        CREATE VIRTUAL TABLE conversation_turns_fts USING fts5(
            body, content='', tokenize='porter unicode61 remove_diacritics 2'
        );
        """,
    )


def m002_index_turns_by_session(conn: sqlite3.Connection) -> None:
    """Seed 003's idx_turns_session: a search scoped to a session finds its rows fast."""
    conn.execute("CREATE INDEX idx_turns_session ON conversation_turns (session_id)")


REINDEX_BATCH = 10_000  # turns read, put in the index form and inserted at a time


def m014_reindex_turns_as_bigrams(conn: sqlite3.Connection) -> None:
    """The turn index re-made in the bigram form (:mod:`soloqueue_mem.text.cjk`): CJK
    runs were indexed one character a token before. Turns are read ``REINDEX_BATCH``
    at a time; the migration is one transaction, so a crash leaves the old index and
    the next open starts over."""
    from soloqueue_mem.text.cjk import index_forms

    conn.execute(
        "INSERT INTO conversation_turns_fts (conversation_turns_fts) VALUES ('delete-all')"
    )
    last = 0
    while rows := conn.execute(
        "SELECT id, content, tool_calls, tool_results FROM conversation_turns"
        " WHERE id > ? ORDER BY id LIMIT ?",
        (last, REINDEX_BATCH),
    ).fetchall():
        bodies = [_body(content, calls, results) for _, content, calls, results in rows]
        conn.executemany(
            "INSERT INTO conversation_turns_fts (rowid, body) VALUES (?, ?)",
            zip([row[0] for row in rows], index_forms(bodies), strict=True),
        )
        last = rows[-1][0]


def _body(content: str, calls: str | None, results: str | None) -> str:
    """A stored turn's searchable text as schema 14 indexes it (``index_body`` of
    ``sessions.events`` at that version; a migration keeps its own copy)."""
    parts = [content]
    for call in jsonio.loads(calls) if calls else []:
        tool_input = call["input"]
        parts.append(call["name"])
        parts.append(tool_input if isinstance(tool_input, str) else jsonio.dumps(tool_input))
    parts.extend(result["content"] for result in (jsonio.loads(results) if results else []))
    return "\n".join(part for part in parts if part)
