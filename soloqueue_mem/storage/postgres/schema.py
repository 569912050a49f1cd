"""The PostgreSQL schema, migrated by version like ``soloqueue_mem/storage/sqlite/schema_*.py``.

``MIGRATIONS`` is append-only: entry ``n`` takes a database from version ``n`` to
``n + 1``. Table names follow seed 004 where they fit: the raw turns are
``quarantine_logs`` (its layer 1), the long-term memories ``memories``. Timestamps are
the same ISO-8601 UTC text as in SQLite (they sort as time), so the JSON is identical.
The ``search`` columns hold ``to_tsvector('simple', …)`` of the text as the project's
own text module prepares it (:mod:`soloqueue_mem.storage.postgres.text`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from soloqueue_mem.context.schema import TOKEN_CACHE
from soloqueue_mem.graph.schema import GRAPH_FOCUS_AND_TASKS, GRAPH_NODES, GRAPH_WIDE
from soloqueue_mem.lifecycle.schema import EXTRACTION_QUEUE, LOG_EXTRACTIONS
from soloqueue_mem.memory.schema import (
    ATTACHMENT_TEXTS,
    EPISODE_COLUMNS,
    MEMORY_WHAT,
    REMEMBER_EVENTS,
    SCRATCHPAD_COLUMNS,
    WORKING_MEMORY,
)
from soloqueue_mem.semantic.schema import EMBEDDING_TABLES
from soloqueue_mem.sessions.schema import SESSION_COLUMNS, TURN_MESSAGE
from soloqueue_mem.state.schema import KV_STORE, SESSION_STATE

if TYPE_CHECKING:
    import psycopg

# SQLite's spelling of a type or table option, and PostgreSQL's (a rowid key becomes a
# sequence: ids given out are never given out again, as AUTOINCREMENT does).
_TYPES = (
    (r"\bINTEGER PRIMARY KEY(?: AUTOINCREMENT)?", "BIGSERIAL PRIMARY KEY"),
    (r"\bREAL\b", "DOUBLE PRECISION"),
    (r"\bBLOB\b", "BYTEA"),
    (r"\) WITHOUT ROWID", ")"),
)


def render(*tables: str, wide: tuple[str, ...] = ()) -> str:
    """SQLite's ``CREATE TABLE`` statements (the domain's schema modules) as PostgreSQL
    creates them: a table shared as it is is declared once."""
    text = columns("".join(tables), wide)
    return text if text.rstrip().endswith(";") else text + ";"


def columns(sqlite: str, wide: tuple[str, ...] = ()) -> str:
    """SQLite's column declarations with PostgreSQL's types. The ``wide`` columns, an
    ``INTEGER`` in SQLite (64 bits there), are ``BIGINT``."""
    text = sqlite
    for pattern, postgres in _TYPES:
        text = re.sub(pattern, postgres, text)
    if wide:
        text = re.sub(rf"\b({'|'.join(wide)}) INTEGER\b", r"\1 BIGINT", text)
    return text


def _reindex(*tables: str) -> Callable[[psycopg.Connection], None]:
    """A step scheduling the re-index of ``tables`` (the bigram step's when none):
    :func:`migrate` then does it in batches committed one by one, resumed where a killed
    run stopped (:mod:`soloqueue_mem.storage.postgres.reindex`)."""

    def step(conn: psycopg.Connection) -> None:
        from soloqueue_mem.storage.postgres import reindex

        reindex.schedule(conn, tables or reindex.BIGRAM_TABLES)

    return step


def _replaced_values(conn: psycopg.Connection) -> None:
    """``memories.replaced_value``, every row given its value (memory.db's m017)."""
    conn.execute("ALTER TABLE memories ADD COLUMN replaced_value TEXT NOT NULL DEFAULT ''")
    _rederived_replaced_values(conn)


def _rederived_replaced_values(conn: psycopg.Connection) -> None:
    """``memories.replaced_value`` derived again by this program's rule, the rows whose
    value differs written (memory.db's m017 to m027: a step per version of the rule)."""
    from soloqueue_mem.memory.schema import replaced_values

    rows = conn.execute("SELECT seq, content, replaced_value FROM memories").fetchall()
    with conn.cursor() as cursor:
        cursor.executemany(
            "UPDATE memories SET replaced_value = %s WHERE seq = %s", replaced_values(rows)
        )


# An entry is SQL, or a function given the connection (a step that needs this package's
# own text processing, run inside the migration's transaction).
MIGRATIONS: list[str | Callable[[psycopg.Connection], None]] = [
    # 1: turns, sessions, memories
    f"""
    CREATE TABLE quarantine_logs (
        id BIGSERIAL PRIMARY KEY,{TURN_MESSAGE}
        timestamp TEXT NOT NULL,
        token_estimate INTEGER,
        event_id TEXT,
        metadata_json TEXT,
        search TSVECTOR NOT NULL,
        UNIQUE (group_id, agent_id, session_id, turn_index)
    );
    CREATE UNIQUE INDEX quarantine_logs_event ON quarantine_logs
        (group_id, agent_id, session_id, event_id) WHERE event_id IS NOT NULL;
    CREATE INDEX quarantine_logs_search ON quarantine_logs USING GIN (search);
    CREATE INDEX quarantine_logs_group_time ON quarantine_logs (group_id, timestamp);
    CREATE INDEX quarantine_logs_time ON quarantine_logs (timestamp);
    CREATE TABLE sessions ({SESSION_COLUMNS}
        next_turn_index INTEGER NOT NULL DEFAULT 0,
        ended_at TEXT,
        PRIMARY KEY (group_id, agent_id, session_id)
    );
    CREATE TABLE memories (
        seq BIGSERIAL UNIQUE,
        id TEXT PRIMARY KEY,{MEMORY_WHAT}
        source TEXT NOT NULL,
        source_episode_id TEXT,
        tags TEXT NOT NULL DEFAULT '[]',
        importance_score DOUBLE PRECISION NOT NULL,
        confidence DOUBLE PRECISION NOT NULL,
        access_count INTEGER NOT NULL DEFAULT 0,
        decay_rate DOUBLE PRECISION NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        last_accessed_at TEXT,
        expires_at TEXT,
        superseded_by TEXT,
        archived_at TEXT,
        fixed_expiry BOOLEAN NOT NULL DEFAULT FALSE,
        content_key TEXT NOT NULL,
        search TSVECTOR NOT NULL
    );
    CREATE INDEX memories_scope ON memories (group_id, agent_id, updated_at);
    CREATE INDEX memories_key ON memories (group_id, agent_id, content_key);
    CREATE INDEX memories_superseded ON memories (superseded_by);
    CREATE INDEX memories_search ON memories USING GIN (search);
    """,
    # 3: seed 004's working memory (as memory.db's m009); episodes (as m005) and each
    # turn's extraction state (as conversation_turns.extracted/episode_id)
    render(WORKING_MEMORY)
    + f"""
    CREATE INDEX working_memory_group ON working_memory (group_id, id);
    ALTER TABLE quarantine_logs ADD COLUMN extracted BOOLEAN NOT NULL DEFAULT FALSE,
        ADD COLUMN episode_id TEXT;
    CREATE INDEX quarantine_logs_unextracted ON quarantine_logs
        (group_id, agent_id, session_id, turn_index) WHERE NOT extracted;
    CREATE TABLE episodes (
        seq BIGSERIAL UNIQUE,
        id TEXT PRIMARY KEY,{columns(EPISODE_COLUMNS)},
        search TSVECTOR NOT NULL
    );
    CREATE INDEX episodes_session ON episodes (group_id, agent_id, session_id, last_turn);
    CREATE INDEX episodes_time ON episodes (ended_at);
    CREATE INDEX episodes_search ON episodes USING GIN (search);
    """,
    # (pgrecall, entry 4) CJK runs indexed as bigrams: every row re-indexed
    _reindex(),
    # (pgextract, entry 6) extraction on log (as state.db's log_extractions), the model
    # extraction's retry queue (as state.db's extraction_queue), and memory.db's
    # embedding cache and item links (m008: the vectors as stored bytes, by model and
    # content hash; each item's copy for the HNSW search is its ``embedding`` column)
    render(LOG_EXTRACTIONS, EXTRACTION_QUEUE)
    + """
    CREATE INDEX extraction_queue_due ON extraction_queue (next_attempt_at, id)
        WHERE status = 'pending';
    """
    # the cache's key was declared a primary key here from the start
    + render(EMBEDDING_TABLES).replace("UNIQUE (model", "PRIMARY KEY (model"),
    # 7 (pggraph): seed 002's graph memory (graph.db's m001). Ids come from sequences,
    # never reused, so a link to a deleted node stays dangling; no foreign key on
    # ``to_id`` for that reason. graph.db's ``graph_keywords`` is not kept here.
    render(GRAPH_NODES, GRAPH_FOCUS_AND_TASKS, wide=GRAPH_WIDE),
    # (pgctx, entry 5) the scratchpad (as memory.db's m006, keyed by group and agent),
    # kv preferences and session variables (as state.db's m002/m003), and the token
    # counts context build caches (as memory.db's m004)
    f"""
    CREATE TABLE scratchpad ({SCRATCHPAD_COLUMNS},
        PRIMARY KEY (group_id, agent_id)
    );
    """
    + render(KV_STORE, SESSION_STATE, TOKEN_CACHE),
    # (pgattach, entry 8) attachments (as memory.db's table): the row and its extracted
    # text are shared, the blob stays in the CAS of the host that attached it; ``search``
    # holds the bigram lexemes of its description, transcription, text, name and tags
    f"""
    CREATE TABLE attachments (
        seq BIGSERIAL UNIQUE,
        id TEXT PRIMARY KEY,
        group_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        session_id TEXT NOT NULL DEFAULT '',
        episode_id TEXT NOT NULL DEFAULT '',
        filename TEXT NOT NULL,
        original_filename TEXT NOT NULL,
        mime_type TEXT NOT NULL,
        file_size BIGINT NOT NULL,
        local_path TEXT NOT NULL,
        url TEXT NOT NULL DEFAULT '',
        direction TEXT NOT NULL,{ATTACHMENT_TEXTS}
        artifact_id BIGINT,
        content_hash TEXT NOT NULL,
        search TSVECTOR NOT NULL
    );
    CREATE INDEX attachments_search ON attachments USING GIN (search);
    CREATE INDEX attachments_group_time ON attachments (group_id, created_at);
    CREATE INDEX attachments_expiry ON attachments (expires_at) WHERE expires_at IS NOT NULL;
    """,
    # 9: the idempotency keys of ``remember --event-id`` (as memory.db's m012)
    render(REMEMBER_EVENTS),
    # (stems) English words indexed by their Porter stem, as in SQLite: every row re-indexed
    _reindex("quarantine_logs", "memories", "episodes", "attachments"),
    # (replaced value) the value a memory says it replaced, read by expiry (as memory.db's m017)
    _replaced_values,
    # (replaced value, rule 2) the earlier of two values of one kind around a change
    # named too: rows written under rule 1 derived again (as memory.db's m018)
    _rederived_replaced_values,
    # (replaced value, rule 3) a cue of a thing moved to another day or time ("被 roll 到
    # 10/31"): rows written under rule 2 derived again (as memory.db's m019)
    _rederived_replaced_values,
    # (replaced value, rule 4) a handover names the one who left: rows written under
    # rule 3 derived again (as memory.db's m020)
    _rederived_replaced_values,
    # (replaced value, rule 5) a request to stop going to someone names them: rows
    # written under rule 4 derived again (as memory.db's m021)
    _rederived_replaced_values,
    # (replaced value, rule 6) "not X, it's Y" names X; a handover with the time before
    # the verb of leaving: rows written under rule 5 derived again (as memory.db's m022)
    _rederived_replaced_values,
    # (replaced value, rule 7) "corrected" is a cue; a handover whose leaver goes off to
    # other work or on leave: rows written under rule 6 derived again (as memory.db's m023)
    _rederived_replaced_values,
    # (expiry index) recall's plans of a coming window read one range of the expiries
    # (``memories_starting``), as memory.db's m015 index lets them
    "CREATE INDEX IF NOT EXISTS memories_expires ON memories (expires_at)"
    " WHERE expires_at IS NOT NULL",
    # (replaced value, rule 8) a number said again with the one it replaces after "not"
    # names that one: rows written under rule 7 derived again (as memory.db's m024)
    _rederived_replaced_values,
    # (replaced value, rule 9) a date with the month's name is one value: rows written
    # under rule 8 derived again (as memory.db's m025)
    _rederived_replaced_values,
    # (replaced value, rule 10) a typo taken back, a lead on leave, 由X带: rows written
    # under rule 9 derived again (as memory.db's m026)
    _rederived_replaced_values,
    # (replaced value, rule 11) the numbers of a list's items are no values: rows written
    # under rule 10 derived again (as memory.db's m027)
    _rederived_replaced_values,
]

# Added after the migrations when the server has pgvector (``CREATE EXTENSION vector``
# needs the right to create it): the dense channel's columns on memories, episodes and
# turns, multilingual-e5-small's 384 dimensions, and their HNSW indexes for cosine
# distance (storage/postgres/dense.py). Building an index over existing vectors wants a large
# maintenance_work_mem (see the README).
EMBEDDING_DIMENSIONS = 384
EMBEDDED_TABLES = ("memories", "episodes", "quarantine_logs")
EMBEDDING_COLUMN = ";".join(
    f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS embedding vector({EMBEDDING_DIMENSIONS});"
    f" CREATE INDEX IF NOT EXISTS {table}_embedding ON {table}"
    " USING hnsw (embedding vector_cosine_ops)"
    for table in EMBEDDED_TABLES
)
