"""All SQL for ``memories`` on PostgreSQL, with the update rules of the SQLite store.

Confirm, supersede or create (seed 003 §4.1) follow :func:`soloqueue_mem.memory.store.
remember` step for step; the (group, agent) scope's rows are locked by a
transaction-scoped advisory lock on it, so two hosts stating the same thing at once
confirm one memory instead of storing two.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from soloqueue_mem import jsonio
from soloqueue_mem.clock import iso, parse_timestamp
from soloqueue_mem.memory import correction
from soloqueue_mem.memory.model import Memory, check_type, content_key, fixed_expiry, renewed
from soloqueue_mem.memory.store import (
    Draft,
    Filters,
    Remembered,
    _retention,
    _takes_attribute,
    check_draft,
    confirmed,
    new_memory,
)
from soloqueue_mem.memory.store import _memory as memory_from_row
from soloqueue_mem.storage.postgres.ids import row_by_prefix
from soloqueue_mem.storage.postgres.newest import newest_matches
from soloqueue_mem.storage.postgres.text import document, term_query
from soloqueue_mem.text.fts import RECENT_WINDOW as WINDOW

if TYPE_CHECKING:
    import psycopg

_COLUMNS = (
    "id, group_id, agent_id, type, priority, content, subject, predicate, source, "
    "source_episode_id, tags, importance_score, confidence, access_count, decay_rate, "
    "created_at, updated_at, last_accessed_at, expires_at, superseded_by, archived_at, "
    "fixed_expiry"
)
_ACTIVE = (
    "superseded_by IS NULL AND archived_at IS NULL AND (expires_at IS NULL OR expires_at > %(now)s)"
)


def _search_text(memory: Memory) -> str:
    """What the lexical index holds: content, subject, predicate and tags."""
    return document(" ".join([memory.content, memory.subject, memory.predicate, *memory.tags]))


def remember(
    conn: psycopg.Connection,
    draft: Draft,
    group: str,
    agent: str,
    now: datetime,
    event_id: str | None = None,
) -> Remembered:
    """Store ``draft`` in (group, agent): confirm, supersede or create. With an
    ``event_id`` already stored in the scope, nothing changes: the first call's action
    and memory, marked ``duplicate`` (the scope's lock makes this hold across hosts)."""
    draft = check_draft(draft)
    priority, expires = _retention(draft, now)
    fixed = draft.until is not None or fixed_expiry(draft.duration, draft.type, now)
    stamp = iso(now)
    key = content_key(draft.content)
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"{group}/{agent}",))
        seen = _replayed(conn, group, agent, event_id) if event_id is not None else None
        if seen is not None:
            return seen
        result = _remember(conn, draft, (group, agent), (priority, expires, fixed), stamp, key)
        if event_id is not None:
            conn.execute(
                "INSERT INTO remember_events (group_id, agent_id, event_id, memory_id, action,"
                " created_at) VALUES (%s, %s, %s, %s, %s, %s)",
                (group, agent, event_id, result.memory.id, result.action, stamp),
            )
        return result


def _replayed(conn: psycopg.Connection, group: str, agent: str, event_id: str) -> Remembered | None:
    """What ``event_id`` did in (group, agent), if it was stored and its memory still
    exists (a key whose memory was forgotten since is dropped and the call runs anew)."""
    key = (group, agent, event_id)
    found = conn.execute(
        "SELECT memory_id, action FROM remember_events"
        " WHERE group_id = %s AND agent_id = %s AND event_id = %s",
        key,
    ).fetchone()
    if found is None:
        return None
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM memories WHERE id = %s",  # noqa: S608 - constant columns
        (found[0],),
    ).fetchone()
    if row is None:
        conn.execute(
            "DELETE FROM remember_events WHERE group_id = %s AND agent_id = %s AND event_id = %s",
            key,
        )
        return None
    return Remembered(found[1], memory_from_row(row), [], duplicate=True)


def _remember(
    conn: psycopg.Connection,
    draft: Draft,
    scope_ids: tuple[str, str],
    kept: tuple[str, datetime | None, bool],
    stamp: str,
    key: str,
) -> Remembered:
    """The body of :func:`remember`, inside its transaction and lock."""
    group, agent = scope_ids
    scope = {"group": group, "agent": agent, "now": stamp}
    same = _active(conn, "content_key = %(key)s", {**scope, "key": key})
    restated = same[0] if same else None
    previous: list[str] = []
    if draft.subject and draft.predicate and _takes_attribute(restated, draft):
        where = "subject = %(subject)s AND predicate = %(predicate)s"
        params = {**scope, "subject": draft.subject, "predicate": draft.predicate}
        previous = [m.id for m in _active(conn, where, params) if m != restated]
    if not previous and restated is None:
        previous = _corrected(conn, draft, scope_ids, stamp)
    if restated is not None:
        memory = _confirm(conn, restated, draft, kept, stamp)
    else:
        memory = _insert(conn, draft, scope_ids, kept, stamp, key)
    for old in previous:
        conn.execute(
            "UPDATE memories SET superseded_by = %s, updated_at = %s WHERE id = %s",
            (memory.id, stamp, old),
        )
    if restated is not None:
        return Remembered("confirmed", memory, previous)
    return Remembered("superseded" if previous else "created", memory, previous)


def _corrected(
    conn: psycopg.Connection, draft: Draft, scope_ids: tuple[str, str], stamp: str
) -> list[str]:
    """The id of the memory a correction without a key replaces, if any (as SQLite's
    ``store._corrected``: :mod:`soloqueue_mem.memory.correction`)."""
    words = correction.topic(draft.update_hint, draft.content)
    if not words:
        return []
    filters = Filters(group=scope_ids[0], agent=scope_ids[1])
    found = search(conn, sorted(words), filters, parse_timestamp(stamp), correction.CANDIDATES)
    chosen = correction.corrected(words, (memory for memory, _ in found))
    return [] if chosen is None else [chosen.id]


def _confirm(
    conn: psycopg.Connection,
    memory: Memory,
    draft: Draft,
    kept: tuple[str, datetime | None, bool],
    stamp: str,
) -> Memory:
    """Re-stated: as :func:`soloqueue_mem.memory.store.confirmed` computes it."""
    updated = confirmed(memory, draft, kept, stamp)
    conn.execute(
        "UPDATE memories SET confidence = %s, importance_score = %s, priority = %s,"
        " expires_at = %s, fixed_expiry = %s, tags = %s, subject = %s, predicate = %s,"
        " updated_at = %s, search = to_tsvector('simple', %s) WHERE id = %s",
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
            _search_text(updated),
            memory.id,
        ),
    )
    return get(conn, memory.id)


def _insert(
    conn: psycopg.Connection,
    draft: Draft,
    scope: tuple[str, str],
    kept: tuple[str, datetime | None, bool],
    stamp: str,
    key: str,
) -> Memory:
    memory = new_memory(draft, scope, kept, stamp)
    values = list(memory)
    values[10] = jsonio.dumps_compact(memory.tags)
    marks = ", ".join(["%s"] * (len(values) + 1))
    conn.execute(
        f"INSERT INTO memories ({_COLUMNS}, content_key, search)"  # noqa: S608 - constants
        f" VALUES ({marks}, to_tsvector('simple', %s))",
        (*values, key, _search_text(memory)),
    )
    return memory


def _active(conn: psycopg.Connection, where: str, params: dict[str, Any]) -> list[Memory]:
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM memories"  # noqa: S608 - fixed fragments
        f" WHERE group_id = %(group)s AND agent_id = %(agent)s AND {where} AND {_ACTIVE}"
        " ORDER BY updated_at DESC, seq DESC",
        params,
    ).fetchall()
    return [memory_from_row(row) for row in rows]


def by_source(conn: psycopg.Connection, group: str, agent: str, source: str) -> Memory | None:
    """The scope's memory recorded from ``source`` (an import's ``v1:<id>``), if any."""
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM memories"  # noqa: S608 - constant columns
        " WHERE group_id = %s AND agent_id = %s AND source = %s ORDER BY seq LIMIT 1",
        (group, agent, source),
    ).fetchone()
    return memory_from_row(row) if row else None


def get(conn: psycopg.Connection, ref: str) -> Memory:
    """The memory with id ``ref``, or the only one whose id starts with it (like git)."""
    return memory_from_row(row_by_prefix(conn, "memories", _COLUMNS, ref, "memory"))


def _filter_sql(filters: Filters, now: datetime) -> tuple[str, dict[str, Any]]:
    clauses = ["TRUE"] if filters.include_inactive else [_ACTIVE]
    params: dict[str, Any] = {"now": iso(now)}
    for column, name in (("group_id", "group"), ("agent_id", "agent"), ("subject", "subject")):
        if getattr(filters, name) is not None:
            clauses.append(f"{column} = %({name})s")
            params[name] = getattr(filters, name)
    if filters.since is not None:
        clauses.append("updated_at >= %(since)s")
        params["since"] = filters.since
    if filters.type is not None:
        clauses.append("type = %(type)s")
        params["type"] = check_type(filters.type)
    if filters.tag is not None:
        clauses.append("tags::jsonb ? %(tag)s")
        params["tag"] = filters.tag
    return " AND ".join(clauses), params


def list_memories(
    conn: psycopg.Connection, filters: Filters, now: datetime, limit: int
) -> list[Memory]:
    """Memories matching ``filters``, most recently updated first."""
    where, params = _filter_sql(filters, now)
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM memories WHERE {where}"  # noqa: S608 - fixed fragments
        " ORDER BY updated_at DESC, seq DESC LIMIT %(limit)s",
        {**params, "limit": limit},
    ).fetchall()
    return [memory_from_row(row) for row in rows]


def history(conn: psycopg.Connection, ref: str) -> list[Memory]:
    """Every version of a memory's (subject, predicate) chain, oldest first."""
    newest = get(conn, ref)
    while newest.superseded_by is not None:
        newest = get(conn, newest.superseded_by)
    return _with_ancestors(conn, newest)


def _with_ancestors(conn: psycopg.Connection, memory: Memory) -> list[Memory]:
    qualified = ", ".join(f"m.{name}" for name in _COLUMNS.split(", "))
    rows = conn.execute(
        f"""WITH RECURSIVE chain(id, depth) AS (
                SELECT %s::text, 0
                UNION
                SELECT m.id, chain.depth + 1 FROM memories m JOIN chain
                ON m.superseded_by = chain.id
            )
            SELECT {qualified} FROM memories m JOIN chain ON chain.id = m.id
            ORDER BY chain.depth DESC, m.created_at, m.seq""",  # noqa: S608
        (memory.id,),
    ).fetchall()
    return [memory_from_row(row) for row in rows]


def forget(conn: psycopg.Connection, refs: Iterable[str]) -> list[str]:
    """Erase memories and the earlier versions they superseded; their ids.

    PostgreSQL keeps deleted row versions until VACUUM reclaims them (autovacuum, or
    ``VACUUM memories``): unlike SQLite's ``secure_delete``, the bytes are not zeroed now.
    """
    with conn.transaction():
        doomed: dict[str, Memory] = {}
        for ref in refs:
            for memory in _with_ancestors(conn, get(conn, ref)):
                doomed[memory.id] = memory
        conn.execute("DELETE FROM memories WHERE id = ANY(%s)", (list(doomed),))
    return list(doomed)


def search(
    conn: psycopg.Connection, terms: list[str], filters: Filters, now: datetime, limit: int
) -> list[tuple[Memory, float]]:
    """Active memories matching any of ``terms``, best ``ts_rank`` first, among each
    term's ``WINDOW`` newest matches (as :func:`soloqueue_mem.storage.postgres.turns.trace`)."""
    phrases = [q for q in (term_query(t) for t in terms) if q]
    if not phrases:
        return []
    where, params = _filter_sql(filters, now)
    match = " | ".join(f"({p})" for p in phrases)
    ranked: dict[int, tuple[float, str]] = {}
    for phrase in phrases:
        for seq, score, updated in newest_matches(
            conn,
            "memories",
            "seq",
            phrase,
            where,
            {**params, "match": match},
            WINDOW,
            "ts_rank(search, to_tsquery('simple', %(match)s)), updated_at",
        ):
            ranked[seq] = (score, updated)
    best = sorted(ranked, key=lambda seq: ranked[seq], reverse=True)[:limit]
    rows = conn.execute(
        f"SELECT seq, {_COLUMNS} FROM memories WHERE seq = ANY(%s)",  # noqa: S608 - constants
        (best,),
    ).fetchall()
    by_seq = {row[0]: memory_from_row(row[1:]) for row in rows}
    return [(by_seq[seq], float(ranked[seq][0])) for seq in best if seq in by_seq]


def touch(conn: psycopg.Connection, ids: list[str], now: datetime) -> None:
    """Count a retrieval, as :func:`soloqueue_mem.memory.store.touch`."""
    if not ids:
        return
    stamp = iso(now)
    with conn.transaction():
        found = conn.execute(
            f"SELECT {_COLUMNS} FROM memories WHERE id = ANY(%s) FOR UPDATE",  # noqa: S608
            (ids,),
        ).fetchall()
        with conn.cursor() as cursor:  # executemany: pipelined, one round trip
            cursor.executemany(
                "UPDATE memories SET access_count = access_count + 1, last_accessed_at = %s,"
                " expires_at = %s WHERE id = %s",
                [(stamp, renewed(m, now), m.id) for m in map(memory_from_row, found)],
            )


def active_keys(
    conn: psycopg.Connection, group: str, agent: str, keys: list[str], now: datetime
) -> set[str]:
    """Which of the content ``keys`` an active memory of (group, agent) already has."""
    rows = conn.execute(
        f"SELECT content_key FROM memories"  # noqa: S608 - fixed fragments
        f" WHERE group_id = %(group)s AND agent_id = %(agent)s AND {_ACTIVE}"
        " AND content_key = ANY(%(keys)s)",
        {"group": group, "agent": agent, "now": iso(now), "keys": keys},
    ).fetchall()
    return {row[0] for row in rows}
