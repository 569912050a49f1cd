"""DDL for the tables the memory layer owns in memory.db (migrations only)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable

from soloqueue_mem import jsonio
from soloqueue_mem.db.migrate import execute_script

# Column lists as SQLite spells them, shared with PostgreSQL's tables that declare them
# alike (soloqueue_mem.storage.postgres.schema renders them), so a column is declared once.
MEMORY_WHAT = """
            group_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            type TEXT NOT NULL,
            priority TEXT NOT NULL,
            content TEXT NOT NULL,
            subject TEXT NOT NULL DEFAULT '',
            predicate TEXT NOT NULL DEFAULT '',"""
EPISODE_COLUMNS = """
            group_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            summary TEXT NOT NULL,
            goal TEXT NOT NULL DEFAULT '',
            outcome TEXT NOT NULL DEFAULT 'success',
            started_at TEXT NOT NULL,
            ended_at TEXT NOT NULL,
            action_nodes TEXT NOT NULL DEFAULT '[]',
            entities TEXT NOT NULL DEFAULT '[]',
            tools_used TEXT NOT NULL DEFAULT '[]',
            linked_memory_ids TEXT NOT NULL DEFAULT '[]',
            tags TEXT NOT NULL DEFAULT '[]',
            importance_score REAL NOT NULL DEFAULT 0.5,
            access_count INTEGER NOT NULL DEFAULT 0,
            source TEXT NOT NULL DEFAULT 'session_end',
            first_turn INTEGER NOT NULL,
            last_turn INTEGER NOT NULL,
            created_at TEXT NOT NULL"""
SCRATCHPAD_COLUMNS = """
            group_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            content TEXT NOT NULL,
            active_projects TEXT NOT NULL DEFAULT '[]',
            current_focus TEXT NOT NULL DEFAULT '',
            open_questions TEXT NOT NULL DEFAULT '[]',
            next_steps TEXT NOT NULL DEFAULT '[]',
            updated_at TEXT NOT NULL"""
ATTACHMENT_TEXTS = """
            description TEXT NOT NULL DEFAULT '',
            transcription TEXT NOT NULL DEFAULT '',
            extracted_text TEXT NOT NULL DEFAULT '',
            tags TEXT NOT NULL DEFAULT '[]',
            linked_memory_ids TEXT NOT NULL DEFAULT '[]',
            created_at TEXT NOT NULL,
            expires_at TEXT,"""


def m003_create_memories(conn: sqlite3.Connection) -> None:
    """Semantic memories (seed 003 §4.1/§4.6 columns plus group/agent scope).

    ``content_key`` is a hash of the normalized content, for dedup on write. The FTS
    table is contentless like the turns' one: it indexes the index form (CJK
    characters spaced) of content, subject, predicate and tags, keyed by rowid.
    """
    execute_script(
        conn,
        f"""
        CREATE TABLE memories (
            id TEXT NOT NULL UNIQUE,{MEMORY_WHAT}
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


def m005_create_episodes(conn: sqlite3.Connection) -> None:
    """Episodes (seed 003 §4.2/§4.6 columns plus scope and the turns they cover), and a
    contentless full-text index of their summary, goal, entities and tools."""
    execute_script(
        conn,
        f"""
        CREATE TABLE episodes (
            id TEXT NOT NULL UNIQUE,{EPISODE_COLUMNS}
        );
        CREATE INDEX idx_episodes_session ON episodes (group_id, agent_id, session_id, last_turn);
        CREATE INDEX idx_episodes_time ON episodes (started_at);
        CREATE VIRTUAL TABLE episodes_fts USING fts5(
            summary, goal, entities, tools,
            content='', tokenize='porter unicode61 remove_diacritics 2'
        );
        """,
    )


def m006_create_scratchpad(conn: sqlite3.Connection) -> None:
    """The scratchpad of seed 003 §4.3, one per group and agent (the seed's user_id):
    Markdown content plus the fields parsed from its four sections."""
    execute_script(
        conn,
        f"""
        CREATE TABLE scratchpad (
            user_id TEXT PRIMARY KEY,{SCRATCHPAD_COLUMNS}
        ) WITHOUT ROWID;
        """,
    )


def m007_add_memories_archived_at(conn: sqlite3.Connection) -> None:
    """Decay archives instead of deleting (seed 003 §7.4): an archived memory is out
    of recall and listings but recoverable (``memory restore``)."""
    conn.execute("ALTER TABLE memories ADD COLUMN archived_at TEXT")


# Tables as SQLite spells them; PostgreSQL's schema renders the same text
# (soloqueue_mem.storage.postgres.schema), so a column is declared once.
WORKING_MEMORY = """
        CREATE TABLE working_memory (
            id INTEGER PRIMARY KEY,
            group_id TEXT NOT NULL,
            content TEXT NOT NULL,
            content_key TEXT NOT NULL,
            source TEXT NOT NULL,
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL
        );
"""
REMEMBER_EVENTS = """
        CREATE TABLE remember_events (
            group_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            event_id TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            action TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (group_id, agent_id, event_id)
        ) WITHOUT ROWID;
"""


def m009_create_working_memory(conn: sqlite3.Connection) -> None:
    """Seed 004's working memory: a per-group list, newest last by ``id`` (the
    Redis list's LPUSH order), trimmed to 50 entries and read for 24 hours."""
    execute_script(
        conn,
        WORKING_MEMORY + "CREATE INDEX idx_working_memory_group ON working_memory (group_id, id);",
    )


def m010_add_memories_fixed_expiry(conn: sqlite3.Connection) -> None:
    """1 when the memory was given a duration other than its type's default (a plan's
    date, ``--duration 10d``): retrieval extends other memories' expiry, not these."""
    conn.execute("ALTER TABLE memories ADD COLUMN fixed_expiry INTEGER NOT NULL DEFAULT 0")


def m011_create_attachments(conn: sqlite3.Connection) -> None:
    """Attachments (seed 003 §4.4): files a user sent or an agent produced, their
    bytes in the CAS (``artifact_id``, ``content_hash``), what is known about them, and
    a contentless full-text index of description, transcription, extracted text,
    file name and tags. Scoped by group and agent; ``expires_at`` NULL is never."""
    execute_script(
        conn,
        f"""
        CREATE TABLE attachments (
            id TEXT NOT NULL UNIQUE,
            group_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            session_id TEXT NOT NULL DEFAULT '',
            episode_id TEXT NOT NULL DEFAULT '',
            filename TEXT NOT NULL DEFAULT '',
            original_filename TEXT NOT NULL DEFAULT '',
            mime_type TEXT NOT NULL DEFAULT '',
            file_size INTEGER NOT NULL DEFAULT 0,
            local_path TEXT NOT NULL DEFAULT '',
            url TEXT NOT NULL DEFAULT '',
            direction TEXT NOT NULL DEFAULT 'inbound',{ATTACHMENT_TEXTS}
            artifact_id INTEGER,
            content_hash TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX idx_attachments_scope ON attachments (group_id, agent_id, created_at);
        CREATE INDEX idx_attachments_expires ON attachments (expires_at)
            WHERE expires_at IS NOT NULL;
        CREATE VIRTUAL TABLE attachments_fts USING fts5(
            description, transcription, extracted_text, filename, tags,
            content='', tokenize='porter unicode61 remove_diacritics 2'
        );
        """,
    )


def m012_create_remember_events(conn: sqlite3.Connection) -> None:
    """Idempotency keys of ``remember`` (issue 15): a statement retried with an
    ``event_id`` already stored in its scope changes nothing and reports the memory it
    made, so a ``remember --batch`` killed midway can simply be run again."""
    execute_script(conn, REMEMBER_EVENTS)


def m013_reindex_memories_as_bigrams(conn: sqlite3.Connection) -> None:
    """The memory, episode and attachment indexes re-made in the bigram form
    (:mod:`soloqueue_mem.text.cjk`): CJK runs were indexed one character a token before.
    Each index is given what its table's writer gives it at this version."""
    from soloqueue_mem.text.cjk import index_form as form

    def joined(*lists: str) -> str:
        return " ".join(word for items in lists for word in jsonio.loads(items))

    _reindex(
        conn, "memories", "content, subject, predicate, tags",
        lambda content, subject, predicate, tags: (
            form(content), form(subject), form(predicate), form(joined(tags))),
    )  # fmt: skip
    _reindex(
        conn, "episodes", "summary, goal, entities, tools",
        lambda summary, goal, entities, tags, tools_used: (
            form(summary), form(goal), form(joined(entities, tags)), joined(tools_used)),
        "summary, goal, entities, tags, tools_used",
    )  # fmt: skip
    _reindex(
        conn, "attachments", "description, transcription, extracted_text, filename, tags",
        lambda description, transcription, extracted, filename, tags: (
            form(description), form(transcription), form(extracted), form(filename),
            form(joined(tags))),
    )  # fmt: skip


def _reindex(
    conn: sqlite3.Connection,
    table: str,
    indexed: str,
    values: Callable[..., tuple[str, ...]],
    read: str | None = None,
) -> None:
    """Empty ``<table>_fts`` and index every row of ``table`` again: the ``read``
    columns (default: the ``indexed`` ones) go through ``values``, which gives the
    index's ``indexed`` columns."""
    fts = f"{table}_fts"
    conn.execute(f"INSERT INTO {fts} ({fts}) VALUES ('delete-all')")
    rows = conn.execute(f"SELECT rowid, {read or indexed} FROM {table}")  # noqa: S608
    marks = ", ".join("?" * (indexed.count(",") + 2))
    conn.executemany(
        f"INSERT INTO {fts} (rowid, {indexed}) VALUES ({marks})",  # noqa: S608
        [(row[0], *values(*row[1:])) for row in rows.fetchall()],
    )


def m015_index_retired_memories(conn: sqlite3.Connection) -> None:
    """Indexes of the memories that are out of search (archived, or with an expiry
    that may have passed; superseded ones have theirs since m003), so a search can
    list the few it must skip instead of reading every match's row
    (:func:`soloqueue_mem.memory.store.left_out`)."""
    execute_script(
        conn,
        """
        CREATE INDEX idx_memories_archived ON memories (archived_at)
            WHERE archived_at IS NOT NULL;
        CREATE INDEX idx_memories_expires ON memories (expires_at)
            WHERE expires_at IS NOT NULL;
        """,
    )


def m017_add_memories_replaced_value(conn: sqlite3.Connection) -> None:
    """The value a memory's content says it replaced ("The studio is dropping .po":
    ``.po``; "" for none), so that expiry reads it in SQL: such a memory is kept out of
    recall at its expiry, not deleted, as the two ends of a supersede link are
    (:func:`soloqueue_mem.memory.store.expired`). Every row is given its value."""
    conn.execute("ALTER TABLE memories ADD COLUMN replaced_value TEXT NOT NULL DEFAULT ''")
    rederive_replaced_values(conn)


def m018_rederive_memories_replaced_value(conn: sqlite3.Connection) -> None:
    """Rule 2 of ``replaced_value`` (:data:`soloqueue_mem.text.replaced.RULE_VERSION`):
    of two values of one kind around a change, the earlier ("48 小时太早了，改成提前 24
    小时" names ``48 小时``). A row written under rule 1 is given what rule 2 says, so an
    older correction is kept at its expiry as a newer one is."""
    rederive_replaced_values(conn)


def m019_rederive_memories_replaced_value(conn: sqlite3.Connection) -> None:
    """Rule 3 of ``replaced_value``: a cue of a thing moved to another day or time ("ETD
    10/27 那条船满了，被 roll 到 10/31" names ``10/27``). Rows written under rule 2
    are given what rule 3 says, as in :func:`m018_rederive_memories_replaced_value`."""
    rederive_replaced_values(conn)


def m020_rederive_memories_replaced_value(conn: sqlite3.Connection) -> None:
    """Rule 4 of ``replaced_value``: a handover names the one who left ("阿杰下周去漳州
    那边开新项目了，同安的收尾交给蔡雨婷" names ``阿杰``). Rows written under rule 3 are
    given what rule 4 says, as in :func:`m018_rederive_memories_replaced_value`."""
    rederive_replaced_values(conn)


def m021_rederive_memories_replaced_value(conn: sqlite3.Connection) -> None:
    """Rule 5 of ``replaced_value``: a request to stop going to someone or using
    something names them ("以后排班别找小周了" names ``小周``), and a speaker's repair of
    their own words what it takes back ("寄东莞松山湖那个厂……哦不是，寄长安镇那个厂" names
    ``东莞松山湖``). Rows written under rule 4 are given what rule 5 says, as in
    :func:`m018_rederive_memories_replaced_value`."""
    rederive_replaced_values(conn)


def m022_rederive_memories_replaced_value(conn: sqlite3.Connection) -> None:
    """Rule 6 of ``replaced_value``: "not X, it's Y" names ``X`` as 不是X，是Y does ("not
    -16, it's -14 LUFS" names ``-16``), and a handover reads the time before the verb
    of leaving ("阿杰下周调去做新品线了") and a task going to someone with other words
    between ("以后 OTA 的事找小林"). Rows written under rule 5 are given what rule 6 says,
    as in :func:`m018_rederive_memories_replaced_value`."""
    rederive_replaced_values(conn)


def m023_rederive_memories_replaced_value(conn: sqlite3.Connection) -> None:
    """Rule 7 of ``replaced_value``: "corrected" is a change cue as 更正 is ("rate 0.12,
    corrected to 0.14" names ``0.12``), and a handover reads someone going off to other
    work or away for a while ("主图以后交给 Kelly 吧，阿杰去专心做视频" names ``阿杰``,
    "Ciarán's gone on secondment … so Niamh is supervising Heron" ``Ciarán``). Rows
    written under rule 6 are given what rule 7 says, as in
    :func:`m018_rederive_memories_replaced_value`."""
    rederive_replaced_values(conn)


def m024_rederive_memories_replaced_value(conn: sqlite3.Connection) -> None:
    """Rule 8 of ``replaced_value``: a number said again with the one it replaces after
    "not" names that one ("The consult fee is $175, not $150" names ``150``, "是 3.22，
    不是 3.19" ``3.19``). Rows written under rule 7 are given what rule 8 says, as in
    :func:`m018_rederive_memories_replaced_value`."""
    rederive_replaced_values(conn)


def m025_rederive_memories_replaced_value(conn: sqlite3.Connection) -> None:
    """Rule 9 of ``replaced_value``: a date with the month's name is one value ("moved
    from June 26 to July 3" names ``June 26``). Rows written under rule 8 are given what
    rule 9 says, as in :func:`m018_rederive_memories_replaced_value`."""
    rederive_replaced_values(conn)


def m026_rederive_memories_replaced_value(conn: sqlite3.Connection) -> None:
    """Rule 10 of ``replaced_value``: a typo taken back is a change cue, and a handover
    reads one who goes on leave and a new lead said as 由X带 ("Leo 下周开始休陪产假，
    install 改由陈默带" names ``Leo``). Rows written under rule 9 are given what rule 10
    says, as in :func:`m018_rederive_memories_replaced_value`."""
    rederive_replaced_values(conn)


def m027_rederive_memories_replaced_value(conn: sqlite3.Connection) -> None:
    """Rule 11 of ``replaced_value``: the numbers of a list's items are no values ("1)
    …；2) 成品暂存改到…" named ``1``). Rows written under rule 10 are given what rule 11
    says, as in :func:`m018_rederive_memories_replaced_value`."""
    rederive_replaced_values(conn)


def rederive_replaced_values(conn: sqlite3.Connection) -> None:
    """Give every memory the ``replaced_value`` this program's rule derives from its
    content, writing only the rows whose stored value differs."""
    rows = conn.execute("SELECT rowid, content, replaced_value FROM memories").fetchall()
    conn.executemany(
        "UPDATE memories SET replaced_value = ? WHERE rowid = ?", replaced_values(rows)
    )


def replaced_values(rows: Iterable[tuple[int, str, str]]) -> list[tuple[str, int]]:
    """``(value, row key)`` for each of ``rows`` (``(row key, content, stored value)``)
    whose stored value is not the one the rule derives from its content now: how both
    back ends derive ``replaced_value`` again when its rule changes (a schema step per
    version of the rule)."""
    from soloqueue_mem.text.replaced import replaced_value

    derived = ((replaced_value(content), key, stored) for key, content, stored in rows)
    return [(value, key) for value, key, stored in derived if value != stored]
