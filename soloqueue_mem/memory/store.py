"""All SQL for ``memories`` and its FTS index, and the update rules of seed 003 §4.1.

A new statement of an active memory (same normalized content) confirms it: its
confidence rises instead of a duplicate being stored. A new memory with the
(subject, predicate) of an active one supersedes it: the old row keeps its content
and points at its successor through ``superseded_by``, so history stays readable.
Scope (group/agent) is always a SQL ``WHERE``; ``sqlite3.Row`` never leaves here.

:func:`remember` runs on both back ends (:class:`soloqueue_mem.db.adapter.Db`): the
(group, agent) scope's rows are locked by its write transaction (on PostgreSQL, a
transaction-scoped advisory lock on the scope, so two hosts stating the same thing at
once confirm one memory instead of storing two). Only the full-text index differs:
:class:`FullText`, FTS5 here, the ``search`` column on PostgreSQL.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime

from soloqueue_mem import jsonio
from soloqueue_mem.clock import iso, parse_timestamp
from soloqueue_mem.db.adapter import Db
from soloqueue_mem.db.connect import write_tx
from soloqueue_mem.db.ids import in_lists, row_by_prefix, scope_where
from soloqueue_mem.errors import BadInput
from soloqueue_mem.memory import correction, fts_index
from soloqueue_mem.memory.model import (
    DEFAULT_DURATION,
    RETENTION,
    Memory,
    check_duration,
    check_tags,
    check_type,
    check_unit,
    content_key,
    fixed_expiry,
    renewed,
    retention,
)
from soloqueue_mem.text.cjk import index_form
from soloqueue_mem.text.fts import match_expression
from soloqueue_mem.text.replaced import replaced_value
from soloqueue_mem.tuples import NamedTuple, Protocol

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import Any

    from soloqueue_mem.db.adapter import Connection

MAX_CONTENT_CHARS = 16_000

_COLUMNS = (
    "id, group_id, agent_id, type, priority, content, subject, predicate, source, "
    "source_episode_id, tags, importance_score, confidence, access_count, decay_rate, "
    "created_at, updated_at, last_accessed_at, expires_at, superseded_by, archived_at, "
    "fixed_expiry"
)
# Columns a row stores beside those, each derived from its content: the normalized
# content's hash (a restatement is found by it) and the value the content says it
# replaced ("dropping .po": ``.po``, :func:`replaced_value`; "" for none),
# which :func:`expired` reads.
DERIVED = "content_key, replaced_value"
_QUALIFIED = ", ".join(f"memories.{name}" for name in _COLUMNS.split(", "))
_ACTIVE = (
    "memories.superseded_by IS NULL AND memories.archived_at IS NULL"
    " AND (memories.expires_at IS NULL OR memories.expires_at > :now)"
)


class Draft(NamedTuple):
    """What a caller asks to remember; ``None`` fields take the type's defaults."""

    content: str
    type: str = "FACT"
    subject: str = ""
    predicate: str = ""
    importance: float = 0.5
    confidence: float = 0.5
    duration: str | None = None
    tags: tuple[str, ...] = ()
    source: str = "manual"
    source_episode_id: str | None = None
    until: datetime | None = None  # expires then (a plan's day and a margin), not by duration
    update_hint: str = ""  # what known fact this one changes (:mod:`.correction`)


class Remembered(NamedTuple):
    action: str  # "created", "confirmed" or "superseded"
    memory: Memory
    superseded: list[str]  # ids of the memories this one replaced
    duplicate: bool = False  # its event_id was stored before: nothing changed now


class Filters(NamedTuple):
    group: str | None = None
    agent: str | None = None
    type: str | None = None
    tag: str | None = None
    subject: str | None = None
    since: str | None = None  # updated at or after this ISO time
    include_inactive: bool = False  # expired and superseded too


def _memory(row: tuple[Any, ...]) -> Memory:
    return Memory(
        id=row[0],
        group=row[1],
        agent=row[2],
        type=row[3],
        priority=row[4],
        content=row[5],
        subject=row[6],
        predicate=row[7],
        source=row[8],
        source_episode_id=row[9],
        tags=[] if row[10] == "[]" else jsonio.loads(row[10]),  # most: recall reads hundreds
        importance=row[11],
        confidence=row[12],
        access_count=row[13],
        decay_rate=row[14],
        created_at=row[15],
        updated_at=row[16],
        last_accessed_at=row[17],
        expires_at=row[18],
        superseded_by=row[19],
        archived_at=row[20],
        fixed_expiry=bool(row[21]),
    )


def check_draft(draft: Draft) -> Draft:
    """The draft with its fields validated and trimmed; BadInput names the bad one."""
    content = draft.content.strip()
    if not content:
        raise BadInput("a memory needs some content")
    if len(content) > MAX_CONTENT_CHARS:
        raise BadInput(
            f"memory content is longer than {MAX_CONTENT_CHARS} characters "
            "(store large text with `artifact save`)"
        )
    if "\x00" in content:
        raise BadInput("memory content contains a NUL character")
    return draft._replace(
        content=content,
        type=check_type(draft.type),
        subject=draft.subject.strip(),
        predicate=draft.predicate.strip(),
        importance=check_unit("importance", draft.importance),
        confidence=check_unit("confidence", draft.confidence),
        tags=tuple(check_tags(list(draft.tags))),
        duration=None if draft.duration is None else check_duration(draft.duration),
    )


class FullText(Protocol):
    """How a back end's full-text index of memories follows the table."""

    order: str  # the column that orders rows as they were inserted

    def insert(self, db: Db, memory: Memory) -> None:
        """Insert the new ``memory`` (with its :func:`derived_values`) and index it."""
        ...

    def changed(self, db: Db, old: Memory, new: Memory) -> None:
        """Index the updated row ``new`` in place of ``old``."""
        ...

    def search(
        self, db: Db, words: list[str], filters: Filters, now: datetime, limit: int
    ) -> list[tuple[Memory, float]]:
        """Active memories matching any of ``words``, best first."""
        ...

    def dropped(self, db: Db, memory: Memory) -> None:
        """Drop the index entry of ``memory``, whose row is about to be deleted."""
        ...


def remember(
    conn: Connection,
    draft: Draft,
    group: str,
    agent: str,
    now: datetime,
    event_id: str | None = None,
    index: FullText | None = None,
) -> Remembered:
    """Store ``draft`` in (group, agent): confirm, supersede or create (see module doc).
    With an ``event_id`` already stored in the scope, nothing changes: the result is
    the first call's action and memory, marked ``duplicate``. ``index``: the back
    end's full-text index (FTS5 by default)."""
    draft = check_draft(draft)
    priority, expires = _retention(draft, now)
    fixed = draft.until is not None or fixed_expiry(draft.duration, draft.type, now)
    stamp = iso(now)
    db = Db(conn)
    with db.write():
        db.lock(f"{group}/{agent}")
        seen = _replayed(db, group, agent, event_id) if event_id is not None else None
        if seen is not None:
            return seen
        kept = (priority, expires, fixed)
        result = _remember(db, draft, (group, agent), kept, stamp, index or FTS5)
        if event_id is not None:
            db.execute(
                "INSERT INTO remember_events (group_id, agent_id, event_id, memory_id, action,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (group, agent, event_id, result.memory.id, result.action, stamp),
            )
        return result


def _replayed(db: Db, group: str, agent: str, event_id: str) -> Remembered | None:
    """What ``event_id`` did in (group, agent), if it was stored and its memory still
    exists (a key whose memory was forgotten since is dropped and the call runs anew)."""
    key = (group, agent, event_id)
    found = db.fetchone(
        "SELECT memory_id, action FROM remember_events"
        " WHERE group_id = ? AND agent_id = ? AND event_id = ?",
        key,
    )
    if found is None:
        return None
    row = db.fetchone(
        f"SELECT {_COLUMNS} FROM memories WHERE id = ?",  # noqa: S608 - constant columns
        (found[0],),
    )
    if row is None:
        db.execute(
            "DELETE FROM remember_events WHERE group_id = ? AND agent_id = ? AND event_id = ?",
            key,
        )
        return None
    return Remembered(found[1], _memory(row), [], duplicate=True)


def _remember(
    db: Db,
    draft: Draft,
    scope_ids: tuple[str, str],
    kept: tuple[str, datetime | None, bool],
    stamp: str,
    index: FullText,
) -> Remembered:
    """The body of :func:`remember`, inside its transaction."""
    group, agent = scope_ids
    key = content_key(draft.content)
    scope = {"group": group, "agent": agent, "now": stamp}
    same = _active(db, index, "content_key = :key", {**scope, "key": key})
    restated = same[0] if same else None
    previous: list[str] = []
    if draft.subject and draft.predicate and _takes_attribute(restated, draft):
        # The statement becomes the current value of (subject, predicate), also when
        # it re-states a memory stored earlier without them.
        where = "subject = :subject AND predicate = :predicate"
        params = {**scope, "subject": draft.subject, "predicate": draft.predicate}
        previous = [m.id for m in _active(db, index, where, params) if m != restated]
    if not previous and restated is None:
        previous = _corrected(db, index, draft, (group, agent), stamp)
    if restated is not None:
        memory = _confirm(db, index, restated, draft, kept, stamp)
    else:
        memory = new_memory(draft, (group, agent), kept, stamp)
        index.insert(db, memory)
    if previous:
        db.executemany(
            "UPDATE memories SET superseded_by = ?, updated_at = ? WHERE id = ?",
            [(memory.id, stamp, old) for old in previous],
        )
    if restated is not None:
        return Remembered("confirmed", memory, previous)
    return Remembered("superseded" if previous else "created", memory, previous)


def _corrected(
    db: Db, index: FullText, draft: Draft, scope_ids: tuple[str, str], stamp: str
) -> list[str]:
    """The id of the memory a correction without a key replaces, if any
    (:mod:`soloqueue_mem.memory.correction`)."""
    words = correction.topic(draft.update_hint, draft.content)
    if not words:
        return []
    filters = Filters(group=scope_ids[0], agent=scope_ids[1])
    found = index.search(db, sorted(words), filters, parse_timestamp(stamp), correction.CANDIDATES)
    holder = correction.handed_over(draft.update_hint or draft.content)
    chosen = correction.corrected(words, (memory for memory, _ in found), holder)
    return [] if chosen is None else [chosen.id]


def _retention(draft: Draft, now: datetime) -> tuple[str, datetime | None]:
    if draft.until is None:
        return retention(draft.duration or DEFAULT_DURATION[draft.type], now)
    seconds = max(1, int((draft.until - now).total_seconds()))
    return retention(f"{seconds}s", now)


def _takes_attribute(restated: Memory | None, draft: Draft) -> bool:
    """Whether the stored memory ends up with the draft's subject and predicate: a new
    one does, a re-stated one if it had none or the same."""
    if restated is None or not (restated.subject and restated.predicate):
        return True
    return (restated.subject, restated.predicate) == (draft.subject, draft.predicate)


def _confirm(
    db: Db,
    index: FullText,
    memory: Memory,
    draft: Draft,
    kept: tuple[str, datetime | None, bool],
    stamp: str,
) -> Memory:
    """Re-stated: confidence combines like independent evidence (1-(1-a)(1-b)), the
    later expiry wins (re-stating extends), and the expiry stays fixed only if both
    statements gave one. A memory without a subject and predicate takes the draft's."""
    updated = confirmed(memory, draft, kept, stamp)
    db.execute(
        "UPDATE memories SET confidence = ?, importance_score = ?, priority = ?,"
        " expires_at = ?, fixed_expiry = ?, tags = ?, subject = ?, predicate = ?,"
        " updated_at = ? WHERE id = ?",
        (
            updated.confidence,
            updated.importance,
            updated.priority,
            updated.expires_at,
            updated.fixed_expiry,
            jsonio.dumps_compact(updated.tags),
            updated.subject,
            updated.predicate,
            stamp,
            memory.id,
        ),
    )
    index.changed(db, memory, updated)
    return get(db.conn, memory.id)


def confirmed(
    memory: Memory, draft: Draft, kept: tuple[str, datetime | None, bool], stamp: str
) -> Memory:
    """``memory`` re-stated by ``draft`` (see :func:`_confirm`), as it is stored."""
    priority, expires, fixed = kept
    confidence = 1.0 - (1.0 - memory.confidence) * (1.0 - draft.confidence)
    keep_longer = _longer(memory.priority, memory.expires_at, priority, expires)
    updated = memory._replace(
        tags=sorted(set(memory.tags) | set(draft.tags)),
        confidence=round(confidence, 6),
        importance=max(memory.importance, draft.importance),
        priority=keep_longer[0],
        expires_at=keep_longer[1],
        fixed_expiry=memory.fixed_expiry and fixed,
        updated_at=stamp,
    )
    if draft.subject and draft.predicate and not (memory.subject and memory.predicate):
        updated = updated._replace(subject=draft.subject, predicate=draft.predicate)
    return updated


def _longer(
    priority: str, expires_at: str | None, new_priority: str, new_expires: datetime | None
) -> tuple[str, str | None]:
    if expires_at is None or new_expires is None:
        return "PERMANENT" if new_expires is None else priority, None
    later = max(expires_at, iso(new_expires))
    ranks = list(RETENTION)
    return max(priority, new_priority, key=ranks.index), later


def stored_values(memory: Memory) -> list[Any]:
    """The columns of :data:`_COLUMNS` and :data:`DERIVED` as a new row stores them
    (tags as JSON)."""
    values = list(memory)
    values[10] = jsonio.dumps_compact(memory.tags)
    return [*values, *derived_values(memory.content)]


def derived_values(content: str) -> tuple[str, str]:
    """The columns of :data:`DERIVED` for a row holding ``content``."""
    return content_key(content), replaced_value(content)


class Fts5:
    """:class:`FullText` on SQLite: the contentless FTS5 table ``memories_fts``, by rowid."""

    order = "rowid"

    def insert(self, db: Db, memory: Memory) -> None:
        values = stored_values(memory)
        placeholders = ", ".join("?" * len(values))
        cursor = db.execute(
            f"INSERT INTO memories ({_COLUMNS}, {DERIVED}) VALUES ({placeholders})",  # noqa: S608
            values,
        )
        _index(db.conn, int(cursor.lastrowid or 0), memory)

    def changed(self, db: Db, old: Memory, new: Memory) -> None:
        if _fts_values(new) != _fts_values(old):
            rowid = _rowid(db.conn, old.id)
            _unindex(db.conn, rowid, old)
            _index(db.conn, rowid, new)

    def search(
        self, db: Db, words: list[str], filters: Filters, now: datetime, limit: int
    ) -> list[tuple[Memory, float]]:
        match = match_expression(words)
        return [] if match is None else search(db.conn, match, [Search(filters)], now, limit)[0]

    def dropped(self, db: Db, memory: Memory) -> None:
        _unindex(db.conn, _rowid(db.conn, memory.id), memory)


FTS5 = Fts5()


def _new_id() -> str:
    """A fresh memory id. ``uuid`` is imported here: it loads ``platform`` (~2 ms), which
    recall, the commonest reader of this module, has no use for."""
    from uuid import uuid4

    return uuid4().hex


def new_memory(
    draft: Draft, scope: tuple[str, str], kept: tuple[str, datetime | None, bool], stamp: str
) -> Memory:
    """The Memory a new statement becomes in (group, agent), with a fresh id."""
    (group, agent), (priority, expires, fixed) = scope, kept
    return Memory(
        id=_new_id(),
        group=group,
        agent=agent,
        type=draft.type,
        priority=priority,
        content=draft.content,
        subject=draft.subject,
        predicate=draft.predicate,
        source=draft.source,
        source_episode_id=draft.source_episode_id,
        tags=list(draft.tags),
        importance=draft.importance,
        confidence=draft.confidence,
        access_count=0,
        decay_rate=0.1,
        created_at=stamp,
        updated_at=stamp,
        last_accessed_at=None,
        expires_at=iso(expires) if expires else None,
        superseded_by=None,
        fixed_expiry=fixed,
    )


def _fts_values(memory: Memory) -> tuple[str, str, str, str]:
    return (
        index_form(memory.content),
        index_form(memory.subject),
        index_form(memory.predicate),
        index_form(" ".join(memory.tags)),
    )


def _index(conn: sqlite3.Connection, rowid: int, memory: Memory) -> None:
    conn.execute(
        "INSERT INTO memories_fts (rowid, content, subject, predicate, tags)"
        " VALUES (?, ?, ?, ?, ?)",
        (rowid, *_fts_values(memory)),
    )


def _unindex(conn: sqlite3.Connection, rowid: int, memory: Memory) -> None:
    """Contentless FTS5 deletes by being given the indexed values again."""
    conn.execute(
        "INSERT INTO memories_fts (memories_fts, rowid, content, subject, predicate, tags)"
        " VALUES ('delete', ?, ?, ?, ?, ?)",
        (rowid, *_fts_values(memory)),
    )


def _rowid(conn: sqlite3.Connection, memory_id: str) -> int:
    return int(conn.execute("SELECT rowid FROM memories WHERE id = ?", (memory_id,)).fetchone()[0])


def _active(db: Db, index: FullText, where: str, params: dict[str, Any]) -> list[Memory]:
    """Active memories of ``:group``/``:agent`` matching ``where``, newest first."""
    rows = db.fetchall(
        f"SELECT {_COLUMNS} FROM memories"  # noqa: S608 - fixed fragments
        f" WHERE group_id = :group AND agent_id = :agent AND {where} AND {_ACTIVE}"
        f" ORDER BY updated_at DESC, {index.order} DESC",
        params,
    )
    return [_memory(row) for row in rows]


def get(conn: Connection, ref: str) -> Memory:
    """The memory with id ``ref``, or the only one whose id starts with it (like git)."""
    return _memory(row_by_prefix(conn, "memories", _COLUMNS, ref, "memory"))


def list_memories(
    conn: Connection, filters: Filters, now: datetime, limit: int, index: FullText = FTS5
) -> list[Memory]:
    """Memories matching ``filters``, most recently updated first."""
    db = Db(conn)
    where, params = filter_sql(db, filters, now)
    rows = db.fetchall(
        f"SELECT {_COLUMNS} FROM memories WHERE {where}"  # noqa: S608 - fixed fragments
        f" ORDER BY updated_at DESC, {index.order} DESC LIMIT :limit",
        {**params, "limit": limit},
    )
    return [_memory(row) for row in rows]


def starting_between(
    conn: Connection,
    filters: Filters,
    bounds: list[tuple[str, str]],
    expiring_by: datetime,
    now: datetime,
    limit: int,
    index: FullText = FTS5,
) -> list[Memory]:
    """Memories matching ``filters`` that expire by ``expiring_by`` and whose content
    starts with a text from ``low`` to ``high`` (both included; two texts of one
    length) for one of ``bounds``: a plan's generated prefix with its first and last
    day finds the plans dated between them (texts that differ only in digits order
    alike in every collation). The expiry bounds the rows read to a range of its
    index: content has none."""
    db = Db(conn)
    where, params = filter_sql(db, filters, now)
    where += " AND memories.expires_at > :now AND memories.expires_at <= :expiring_by"
    params["expiring_by"] = iso(expiring_by)
    starts = []
    for number, (low, high) in enumerate(bounds):
        starts.append(
            f"substr(memories.content, 1, {len(low)}) BETWEEN :low{number} AND :high{number}"
        )
        params |= {f"low{number}": low, f"high{number}": high}
    rows = db.fetchall(
        f"SELECT {_COLUMNS} FROM memories WHERE {where} AND ({' OR '.join(starts)})"  # noqa: S608 - fixed fragments
        f" ORDER BY updated_at DESC, {index.order} DESC LIMIT :limit",
        {**params, "limit": limit},
    )
    return [_memory(row) for row in rows]


def filter_sql(db: Db, filters: Filters, now: datetime) -> tuple[str, dict[str, Any]]:
    """The SQL condition (``:name`` marks) of ``filters`` and its parameters."""
    clauses = ["TRUE"] if filters.include_inactive else [_ACTIVE]
    params: dict[str, Any] = {"now": iso(now)}
    for column, name in (("group_id", "group"), ("agent_id", "agent"), ("subject", "subject")):
        if getattr(filters, name) is not None:
            clauses.append(f"memories.{column} = :{name}")
            params[name] = getattr(filters, name)
    if filters.since is not None:
        clauses.append("memories.updated_at >= :since")
        params["since"] = filters.since
    if filters.type is not None:
        clauses.append("memories.type = :type")
        params["type"] = check_type(filters.type)
    if filters.tag is not None:
        clauses.append(db.json_holds("memories.tags", ":tag"))
        params["tag"] = filters.tag
    return " AND ".join(clauses), params


class Changes(NamedTuple):
    content: str | None = None
    type: str | None = None
    subject: str | None = None
    predicate: str | None = None
    importance: float | None = None
    confidence: float | None = None
    duration: str | None = None
    add_tags: tuple[str, ...] = ()
    remove_tags: tuple[str, ...] = ()


def edit(
    conn: Connection, ref: str, changes: Changes, now: datetime, index: FullText = FTS5
) -> Memory:
    """Change a memory in place (a correction, not a new version: its history chain is
    unchanged). The row is locked while it is read and rewritten, so two hosts editing
    it apply one change after the other, each to the other's result."""
    db = Db(conn)
    with db.write():
        memory_id = get(conn, ref).id
        db.execute(f"SELECT 1 FROM memories WHERE id = ?{db.for_update}", (memory_id,))
        old = get(conn, memory_id)  # read again under the lock
        new = edited(old, changes, now)
        db.execute(
            "UPDATE memories SET content = ?, type = ?, subject = ?, predicate = ?,"
            " importance_score = ?, confidence = ?, tags = ?, priority = ?, expires_at = ?,"
            " fixed_expiry = ?, updated_at = ?, content_key = ?, replaced_value = ? WHERE id = ?",
            (*edited_values(new), memory_id),
        )
        index.changed(db, old, new)
    return new


def edited(old: Memory, changes: Changes, now: datetime) -> Memory:
    """``old`` with ``changes`` made (checked as a draft is), updated now."""
    tags = (set(old.tags) | set(check_tags(list(changes.add_tags)))) - set(changes.remove_tags)
    draft = check_draft(
        Draft(
            content=old.content if changes.content is None else changes.content,
            type=changes.type or old.type,
            subject=old.subject if changes.subject is None else changes.subject,
            predicate=old.predicate if changes.predicate is None else changes.predicate,
            importance=_pick(changes.importance, old.importance),
            confidence=_pick(changes.confidence, old.confidence),
            tags=tuple(tags),
        )
    )
    priority, expires_at, fixed = old.priority, old.expires_at, old.fixed_expiry
    if changes.duration is not None:
        priority, expires = retention(changes.duration, now)
        expires_at = iso(expires) if expires else None
        fixed = fixed_expiry(changes.duration, draft.type, now)
    return old._replace(
        content=draft.content,
        type=draft.type,
        subject=draft.subject,
        predicate=draft.predicate,
        importance=draft.importance,
        confidence=draft.confidence,
        tags=list(draft.tags),
        priority=priority,
        expires_at=expires_at,
        fixed_expiry=fixed,
        updated_at=iso(now),
    )


def edited_values(new: Memory) -> tuple[Any, ...]:
    """The columns an edit writes, in the order both back ends' UPDATE names them:
    content, type, subject, predicate, importance_score, confidence, tags, priority,
    expires_at, fixed_expiry, updated_at, and the :data:`DERIVED` ones."""
    return (
        new.content,
        new.type,
        new.subject,
        new.predicate,
        new.importance,
        new.confidence,
        jsonio.dumps_compact(new.tags),
        new.priority,
        new.expires_at,
        new.fixed_expiry,
        new.updated_at,
        *derived_values(new.content),
    )


def _pick(value: float | None, default: float) -> float:
    return default if value is None else value


def history(conn: Connection, ref: str, index: FullText = FTS5) -> list[Memory]:
    """Every version of a memory's (subject, predicate) chain, oldest first."""
    memory = get(conn, ref)
    newest = memory
    while newest.superseded_by is not None:
        newest = get(conn, newest.superseded_by)
    return with_ancestors(conn, newest, index)


def with_ancestors(conn: Connection, memory: Memory, index: FullText = FTS5) -> list[Memory]:
    """``memory`` and every version it replaced, in chain order (the oldest first).

    Chain order is not creation order: a re-stated older memory can replace a newer one.
    """
    rows = Db(conn).fetchall(
        f"""WITH RECURSIVE chain(id, depth) AS (
                SELECT CAST(? AS TEXT), 0
                UNION
                SELECT m.id, chain.depth + 1 FROM memories m JOIN chain
                ON m.superseded_by = chain.id
            )
            SELECT {_QUALIFIED} FROM memories JOIN chain ON chain.id = memories.id
            ORDER BY chain.depth DESC, memories.created_at, memories.{index.order}""",  # noqa: S608
        (memory.id,),
    )
    return [_memory(row) for row in rows]


class Forgotten(NamedTuple):
    """What ``forget`` erased (``Store.forget`` returns it as the back end made it)."""

    ids: list[str]  # the memories erased, earlier versions included
    wal_cleared: bool  # False: another reader kept the bytes in the WAL until its checkpoint
    identity_rewritten: bool = False  # identity/MEMORY.md and USER.md were rewritten without them
    note: str | None = None  # a warning on where the erased bytes may still be (the CLI's)


def forget(conn: sqlite3.Connection, refs: Iterable[str]) -> Forgotten:
    """Erase memories and the earlier versions they superseded, for good (E6).

    ``secure_delete`` zeroes the freed bytes, merging the FTS index drops the deleted
    terms from its segments, and a truncating checkpoint empties the WAL, which still
    holds the old pages.
    """
    conn.execute("PRAGMA secure_delete = ON")
    with write_tx(conn):
        erased = erase(conn, refs)
        conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
    busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    return Forgotten(erased, not busy)


def erase(conn: Connection, refs: Iterable[str], index: FullText = FTS5) -> list[str]:
    """Delete the memories ``refs`` name, the earlier versions they superseded and their
    index entries (inside the caller's write transaction); their ids. NotFound for an
    unknown ref."""
    db = Db(conn)
    doomed: dict[str, Memory] = {}
    for ref in refs:
        for memory in with_ancestors(conn, get(conn, ref), index):
            doomed[memory.id] = memory
    for memory in doomed.values():
        index.dropped(db, memory)
    db.executemany("DELETE FROM memories WHERE id = ?", [(i,) for i in doomed])
    return list(doomed)


class Window(NamedTuple):
    """Rows a broad search scores: the newest matches (row id >= ``lo``) and every
    match of the ``narrow`` expression (the query's rarer terms), if any."""

    lo: int
    narrow: str | None


class Search(NamedTuple):
    """One memory search of :func:`search`: its filters, the ``window`` of a broad
    query (None: every match is scored) and ``skip`` (:func:`left_out` for these
    filters; None when not listed: each match read is tested)."""

    filters: Filters
    window: Window | None = None
    skip: frozenset[int] | None = None


def search(
    conn: sqlite3.Connection,
    match: str,
    searches: list[Search],
    now: datetime,
    limit: int,
) -> list[list[tuple[Memory, float]]]:
    """For each of ``searches``, the memories in its filters matching an FTS5
    expression, best BM25 first (higher is better), the newer first among equal scores.

    The index ranks the matches once for all of them (recall's active search and its
    search of what corrections replaced), scoring only the rows some ``window`` admits:
    FTS5 walks every match either way, but scoring them is what costs on common words.
    Only the best are read from the table (:func:`_best_in_scope`)."""
    admitted: list[str] = []
    bounds: dict[str, Any] = {}
    for number, one in enumerate(searches):
        admitted.append(_admitted(one.window, number))
        if one.window is not None:
            bounds |= {f"lo{number}": one.window.lo, f"narrow{number}": one.window.narrow}
    ranked = conn.execute(
        f"""SELECT rowid, -bm25(memories_fts) AS score, {", ".join(admitted)}
            FROM memories_fts WHERE memories_fts MATCH :match AND ({" OR ".join(admitted)})
            ORDER BY score DESC""",  # noqa: S608 - fixed fragments
        {**bounds, "match": match},
    )
    walks = itertools.tee(ranked, len(searches))
    return [
        _best_in_scope(
            conn,
            _admitted_by(walk, number),
            *filter_sql(Db(conn), one.filters, now),
            limit,
            one.skip or frozenset(),
        )
        for number, (one, walk) in enumerate(zip(searches, walks, strict=True))
    ]


def _admitted(window: Window | None, number: int) -> str:
    """The condition on the rows the ``number``-th search's ``window`` admits."""
    if window is None:
        return "(1)"
    condition = f"memories_fts.rowid >= :lo{number}"
    if window.narrow:
        condition += (
            " OR memories_fts.rowid IN"
            f" (SELECT rowid FROM memories_fts WHERE memories_fts MATCH :narrow{number})"
        )
    return f"({condition})"


def _admitted_by(ranked: Iterable[tuple[Any, ...]], number: int) -> Iterator[tuple[int, float]]:
    """The (row id, score) of the ``ranked`` rows the ``number``-th search admits."""
    return ((row[0], row[1]) for row in ranked if row[2 + number])


def _best_in_scope(
    conn: sqlite3.Connection,
    ranked: Iterable[tuple[int, float]],
    where: str,
    params: dict[str, Any],
    limit: int,
    skip: frozenset[int],
) -> list[tuple[Memory, float]]:
    """The ``limit`` best of the ``ranked`` matches (row id, score; best first) whose
    memory passes ``where``, ordered as a join of every match would order them (score,
    then the newer, then the row order), without that join: the matches are read down
    to the ``limit``-th one kept and the rows tying with it, their memories in growing
    batches (a filter that keeps few reads further), those in ``skip`` not at all."""
    best: list[tuple[int, float]] = []
    found: dict[int, Memory] = {}
    pending: list[tuple[int, float]] = []
    batch = 2 * limit
    for rowid, score in ranked:
        if len(pending) >= batch:
            best += _kept(conn, pending, where, params, found)
            pending, batch = [], 2 * batch
        if len(best) >= limit and score < best[limit - 1][1]:
            break
        if rowid not in skip:
            pending.append((rowid, score))
    best += _kept(conn, pending, where, params, found)
    best.sort()  # stable sorts: full ties stay in row order, as the join's
    best.sort(key=lambda hit: found[hit[0]].updated_at, reverse=True)
    best.sort(key=lambda hit: -hit[1])
    return [(found[rowid], float(score)) for rowid, score in best[:limit]]


def _kept(
    conn: sqlite3.Connection,
    hits: list[tuple[int, float]],
    where: str,
    params: dict[str, Any],
    found: dict[int, Memory],
) -> list[tuple[int, float]]:
    """Those of ``hits`` whose memory passes ``where`` (an entry without its row is
    not kept), their memories added to ``found``."""
    if not hits:
        return []
    for row in conn.execute(
        f"SELECT wanted.value, {_QUALIFIED} FROM json_each(:ids) AS wanted"  # noqa: S608
        f" CROSS JOIN memories ON memories.rowid = wanted.value WHERE {where}",
        {**params, "ids": json.dumps([rowid for rowid, _ in hits])},
    ):
        found[row[0]] = _memory(row[1:])
    return [hit for hit in hits if hit[0] in found]


LEFT_OUT_CAP = 5_000  # beyond this many memories out of a search, it joins its matches


@contextmanager
def snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """One read transaction around several statements (unless the caller holds one),
    so they see the same state: what :func:`left_out` lists, the index's counts and
    the rows read agree."""
    opened = not conn.in_transaction
    if opened:
        conn.execute("BEGIN")
    try:
        yield
    finally:
        if opened:
            conn.execute("COMMIT")


def left_out(
    conn: sqlite3.Connection, filters: Filters, now: datetime, cap: int = LEFT_OUT_CAP
) -> frozenset[int] | None:
    """Row ids of the memories ``filters`` leave out of a search: the inactive ones
    (superseded, archived, expired) and, with a group (and agent), those of other
    scopes, each set read from an index. None when more than ``cap`` are left out or
    a filter is set that no index lists (type, tag, subject, since, an agent without
    its group): the search then reads each match's row to test it."""
    if filters.type or filters.tag or filters.subject or filters.since:
        return None
    if filters.agent is not None and filters.group is None:
        return None
    found: set[int] = set()
    for where in _left_out_where(filters):
        (ids,) = conn.execute(  # one JSON array: thousands of rows cost no Python tuples
            "SELECT json_group_array(rowid) FROM"  # noqa: S608 - fixed fragments
            f" (SELECT rowid FROM memories WHERE {where} LIMIT :n)",
            {"now": iso(now), "group": filters.group, "agent": filters.agent, "n": cap + 1},
        ).fetchone()
        found.update(json.loads(ids))
        if len(found) > cap:
            return None
    return frozenset(found)


def _left_out_where(filters: Filters) -> list[str]:
    """The complement of :func:`filter_sql` for the filters :func:`left_out` takes,
    one indexed condition a statement."""
    where = []
    if not filters.include_inactive:
        where += ["superseded_by IS NOT NULL", "archived_at IS NOT NULL", "expires_at <= :now"]
    if filters.group is not None:
        where += ["group_id < :group", "group_id > :group"]
    if filters.agent is not None:
        where += [f"group_id = :group AND agent_id {op} :agent" for op in ("<", ">")]
    return where


def index_has_fewer(conn: sqlite3.Connection, match: str, n: int) -> bool:
    """True when fewer than ``n`` rows of the whole index match, active or not: a
    walk of the index alone, without reading the memories (several times cheaper than
    :func:`nth_newest_match`, whose answer it bounds)."""
    return _nth_in_index(conn, match, n) is None


def _nth_in_index(conn: sqlite3.Connection, match: str, n: int) -> int | None:
    row = conn.execute(
        "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?"
        " ORDER BY rowid DESC LIMIT 1 OFFSET ?",
        (match, n - 1),
    ).fetchone()
    return None if row is None else int(row[0])


def nth_newest_match(
    conn: sqlite3.Connection,
    match: str,
    filters: Filters,
    now: datetime,
    n: int,
    skip: frozenset[int] | None = None,
) -> int | None:
    """The row id of the ``n``-th newest active match in scope; None if fewer match.

    With ``skip`` (:func:`left_out` for these filters), the index alone is walked:
    the ``n`` newest matches not skipped are among its ``n + len(skip)`` newest, so
    no memory's row is read. Else each match is joined to its memory."""
    if skip is not None and not skip:
        return _nth_in_index(conn, match, n)
    if skip is not None:
        rows = conn.execute(
            "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rowid DESC LIMIT ?",
            (match, n + len(skip)),
        )
        kept = [row[0] for row in rows if row[0] not in skip]
        return kept[n - 1] if len(kept) >= n else None
    where, params = filter_sql(Db(conn), filters, now)
    row = conn.execute(
        f"""SELECT memories_fts.rowid FROM memories_fts
            JOIN memories ON memories.rowid = memories_fts.rowid
            WHERE memories_fts MATCH :match AND {where}
            ORDER BY memories_fts.rowid DESC LIMIT 1 OFFSET :skip""",  # noqa: S608
        {**params, "match": match, "skip": n - 1},
    ).fetchone()
    return None if row is None else int(row[0])


def touch(conn: Connection, ids: list[str], now: datetime) -> None:
    """Count a retrieval: ``access_count`` + 1, ``last_accessed_at`` = now, and the
    expiry renewed as re-stating would (:func:`~soloqueue_mem.memory.model.renewed`)."""
    if not ids:
        return
    stamp = iso(now)
    marks = ", ".join("?" * len(ids))
    db = Db(conn)
    with db.write():  # a memory deleted since it was found is skipped
        found = db.fetchall(
            f"SELECT {_COLUMNS} FROM memories WHERE id IN ({marks}){db.for_update}",  # noqa: S608
            ids,
        )
        db.executemany(
            "UPDATE memories SET access_count = access_count + 1, last_accessed_at = ?,"
            " expires_at = ? WHERE id = ?",
            [(stamp, renewed(m, now), m.id) for m in map(_memory, found)],
        )


def rebuild_fts(conn: sqlite3.Connection) -> int:
    """Re-create the memory index from the table (inside the caller's write
    transaction); return the number of memories indexed."""
    return fts_index.rebuild(
        conn, "memories", _COLUMNS, lambda conn, rowid, row: _index(conn, rowid, _memory(row))
    )


# --- lifecycle (consolidate) ---------------------------------------------------------


def active(conn: Connection, now: datetime, index: FullText = FTS5) -> list[Memory]:
    """Every active memory (for dedup, decay and the identity files), oldest first."""
    rows = Db(conn).fetchall(
        f"SELECT {_COLUMNS} FROM memories WHERE {_ACTIVE}"  # noqa: S608 - fixed fragments
        f" ORDER BY {index.order}",
        {"now": iso(now)},
    )
    return [_memory(row) for row in rows]


def supersede(conn: Connection, pairs: list[tuple[str, str]], now: datetime) -> None:
    """``(old, new)``: ``old`` is replaced by ``new`` (dedup keeps the best of a cluster)."""
    Db(conn).executemany(
        "UPDATE memories SET superseded_by = ?, updated_at = ? WHERE id = ?",
        [(new, iso(now), old) for old, new in pairs],
    )


def archive(conn: Connection, ids: list[str], now: datetime) -> None:
    Db(conn).executemany(
        "UPDATE memories SET archived_at = ? WHERE id = ?", [(iso(now), i) for i in ids]
    )


def restore(conn: Connection, ref: str, now: datetime) -> Memory:
    """Bring an archived memory back (its decay starts again from now)."""
    db = Db(conn)
    with db.write():
        memory = get(conn, ref)
        db.execute(
            "UPDATE memories SET archived_at = NULL, last_accessed_at = ? WHERE id = ?",
            (iso(now), memory.id),
        )
    return get(conn, memory.id)


def demote(conn: Connection, ids: list[str], now: datetime) -> None:
    """To TRANSIENT: expires within a day unless it already expires sooner."""
    until = iso(now + RETENTION["TRANSIENT"])  # type: ignore[operator]
    Db(conn).executemany(
        "UPDATE memories SET priority = 'TRANSIENT', expires_at = CASE"
        " WHEN expires_at IS NOT NULL AND expires_at < ? THEN expires_at ELSE ? END"
        " WHERE id = ?",
        [(until, until, i) for i in ids],
    )


def expired(conn: Connection, now: datetime, limit: int) -> list[str]:
    """Ids of up to ``limit`` memories past their expiry; locked until the transaction
    ends, but for those another one holds. A memory that replaced a value is kept, out
    of recall: one a supersede link joins (it was replaced, or it replaced one), and
    one that names the value it replaced ("The studio is dropping .po", whatever said
    ".po" never became a memory); the turns that said the old value stay marked stale
    (:mod:`soloqueue_mem.memory.stale`) after the correction expired. But for a stated
    duration (``fixed_expiry``: "for two days"), which ends when the user said."""
    db = Db(conn)
    rows = db.fetchall(
        "SELECT id FROM memories WHERE expires_at IS NOT NULL AND expires_at <= ?"
        " AND (fixed_expiry OR superseded_by IS NULL AND replaced_value = '' AND NOT EXISTS"
        " (SELECT 1 FROM memories AS later WHERE later.superseded_by = memories.id))"
        f" LIMIT ?{db.claim}",
        (iso(now), limit),
    )
    return [row[0] for row in rows]


def session_transients(
    conn: Connection, group: str, agent: str, session: str, since: str
) -> list[str]:
    """Ids of a session's TRANSIENT memories (seed 001: cleared when it ends): those
    from its episodes, and those stated in its group and agent since it started."""
    rows = Db(conn).execute(
        "SELECT id FROM memories WHERE priority = 'TRANSIENT' AND group_id = ? AND agent_id = ?"
        " AND (source_episode_id IN (SELECT id FROM episodes WHERE group_id = ?"
        " AND agent_id = ? AND session_id = ?)"
        " OR (source_episode_id IS NULL AND created_at >= ?))",
        (group, agent, group, agent, session, since),
    )
    return [row[0] for row in rows]


def delete(conn: Connection, ids: list[str], index: FullText = FTS5) -> None:
    """Delete rows and their index entries (inside the caller's transaction)."""
    db = Db(conn)
    for memory_id in ids:
        index.dropped(db, get(conn, memory_id))
    db.executemany("DELETE FROM memories WHERE id = ?", [(i,) for i in ids])


def matching_ids(
    conn: sqlite3.Connection, ids: list[str], filters: Filters, now: datetime
) -> dict[str, Memory]:
    """The memories among ``ids`` that match ``filters`` exactly (active unless asked),
    by id: how a search outside FTS (the dense channel) applies the same scope. The ids
    lead the join (CROSS JOIN keeps that order): left to itself, SQLite walks the
    group's index, every row of a 100k-memory group (0.1 s instead of 0.2 ms)."""
    where, params = filter_sql(Db(conn), filters, now)
    rows = conn.execute(
        f"SELECT {_QUALIFIED} FROM json_each(:ids) AS wanted"  # noqa: S608 - fixed fragments
        f" CROSS JOIN memories ON memories.id = wanted.value WHERE {where}",
        {**params, "ids": json.dumps(ids)},
    )
    return {row[0]: _memory(row) for row in rows}


def active_keys(
    conn: Connection, group: str, agent: str, keys: list[str], now: datetime
) -> set[str]:
    """Which of the content ``keys`` an active memory of (group, agent) already has."""
    found: set[str] = set()
    db = Db(conn)
    for marks, part in in_lists(keys):
        rows = db.fetchall(
            "SELECT content_key FROM memories"  # noqa: S608 - fixed fragments
            f" WHERE group_id = :group AND agent_id = :agent AND {_ACTIVE}"
            f" AND content_key IN ({marks})",
            {"group": group, "agent": agent, "now": iso(now), **part},
        )
        found.update(row[0] for row in rows)
    return found


# -- export and import ------------------------------------------------------------------


def every(
    conn: Connection, group: str | None = None, agent: str | None = None, index: FullText = FTS5
) -> Iterator[Memory]:
    """Every memory of ``group`` and ``agent`` (None: of any), superseded, archived and
    expired ones included, oldest row first, read a page at a time (:meth:`Db.stream`)."""
    where, params = scope_where(group, agent)
    sql = f"SELECT {_COLUMNS} FROM memories WHERE {where} ORDER BY {index.order}"  # noqa: S608
    return map(_memory, Db(conn).stream(sql, params))


def put_back(conn: Connection, memory: Memory, index: FullText = FTS5) -> str:
    """Put back an exported memory as it was (id, chain and counters included):
    ``added``, ``existing`` (the same row is there) or ``conflict`` (another row
    holds its id). ``index``: the back end's full-text index."""
    db = Db(conn)
    with db.write():
        db.lock(f"memory {memory.id}")  # two imports of one dump: one adds it
        found = db.fetchone(
            f"SELECT {_COLUMNS} FROM memories WHERE id = ?",  # noqa: S608 - constant columns
            (memory.id,),
        )
        if found is not None:
            return "existing" if _memory(found) == memory else "conflict"
        index.insert(db, memory)
    return "added"


def by_source(
    conn: Connection, group: str, agent: str, source: str, index: FullText = FTS5
) -> Memory | None:
    """The scope's memory recorded from ``source`` (an import's ``v1:<id>``), if any."""
    row = Db(conn).fetchone(
        f"SELECT {_COLUMNS} FROM memories"  # noqa: S608 - constant columns
        f" WHERE group_id = ? AND agent_id = ? AND source = ? ORDER BY {index.order} LIMIT 1",
        (group, agent, source),
    )
    return _memory(row) if row else None
