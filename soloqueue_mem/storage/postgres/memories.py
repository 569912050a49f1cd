"""``memories`` on PostgreSQL: its full-text index (the ``search`` column) for
:func:`soloqueue_mem.memory.store.remember`, which confirms, supersedes or creates on
both back ends, and the reads that use that index or PostgreSQL's arrays.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from soloqueue_mem.clock import iso
from soloqueue_mem.db.adapter import Db
from soloqueue_mem.db.ids import row_by_prefix
from soloqueue_mem.memory import store
from soloqueue_mem.memory.model import Memory, check_type, renewed
from soloqueue_mem.memory.store import _COLUMNS, Draft, Filters, Remembered, stored_values
from soloqueue_mem.memory.store import _memory as memory_from_row
from soloqueue_mem.storage.postgres.newest import newest_matches
from soloqueue_mem.storage.postgres.text import document, term_query
from soloqueue_mem.text.fts import RECENT_WINDOW as WINDOW

if TYPE_CHECKING:
    import psycopg

_ACTIVE = (
    "superseded_by IS NULL AND archived_at IS NULL AND (expires_at IS NULL OR expires_at > %(now)s)"
)


def _search_text(memory: Memory) -> str:
    """What the lexical index holds: content, subject, predicate and tags."""
    return document(" ".join([memory.content, memory.subject, memory.predicate, *memory.tags]))


class TsVector:
    """:class:`soloqueue_mem.memory.store.FullText` on PostgreSQL: the ``search`` column."""

    order = "seq"

    def insert(self, db: Db, memory: Memory, key: str) -> None:
        values = stored_values(memory)
        marks = ", ".join("?" * (len(values) + 1))
        db.execute(
            f"INSERT INTO memories ({_COLUMNS}, content_key, search)"  # noqa: S608 - constants
            f" VALUES ({marks}, to_tsvector('simple', ?))",
            (*values, key, _search_text(memory)),
        )

    def changed(self, db: Db, old: Memory, new: Memory) -> None:
        if _search_text(new) != _search_text(old):
            db.execute(
                "UPDATE memories SET search = to_tsvector('simple', ?) WHERE id = ?",
                (_search_text(new), new.id),
            )

    def search(
        self, db: Db, words: list[str], filters: Filters, now: datetime, limit: int
    ) -> list[tuple[Memory, float]]:
        return search(db.conn, words, filters, now, limit)


TSVECTOR = TsVector()


def remember(
    conn: psycopg.Connection,
    draft: Draft,
    group: str,
    agent: str,
    now: datetime,
    event_id: str | None = None,
) -> Remembered:
    """:func:`soloqueue_mem.memory.store.remember` on the database."""
    return store.remember(conn, draft, group, agent, now, event_id, index=TSVECTOR)


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
