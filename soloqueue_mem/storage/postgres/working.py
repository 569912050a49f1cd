"""All SQL for ``working_memory`` on PostgreSQL: seed 004's per-group list with the
rules of :mod:`soloqueue_mem.memory.working` (its entry filter, 50 entries, 24 h).

A push holds a transaction-scoped advisory lock on the group, so two hosts pushing
the same entry at once store it once and the trim counts every entry.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import TYPE_CHECKING

from soloqueue_mem.clock import iso
from soloqueue_mem.memory.model import content_key
from soloqueue_mem.memory.working import CAP, RETURNED, TTL, Added, Entry, checked, screen

if TYPE_CHECKING:
    import psycopg

_COLUMNS = "id, group_id, content, source, created_at, expires_at"


def add(conn: psycopg.Connection, group: str, content: str, source: str, now: datetime) -> Added:
    """Push ``content`` onto the group's list unless the filter drops it, then trim."""
    content = checked(content)
    stamp, expires = iso(now), iso(now + TTL)
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"working/{group}",))
        reason = screen(content, [e.content for e in latest(conn, group, now, CAP)])
        if reason is not None:
            return Added(None, reason)
        row = conn.execute(
            "INSERT INTO working_memory"
            " (group_id, content, content_key, source, created_at, expires_at)"
            " VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
            (group, content, content_key(content), source, stamp, expires),
        ).fetchone()
        assert row is not None
        conn.execute(
            "DELETE FROM working_memory WHERE group_id = %(group)s AND ("
            " expires_at <= %(now)s OR id NOT IN (SELECT id FROM working_memory"
            " WHERE group_id = %(group)s ORDER BY id DESC LIMIT %(cap)s))",
            {"group": group, "now": stamp, "cap": CAP},
        )
    return Added(Entry(int(row[0]), group, content, source, stamp, expires), None)


def latest(
    conn: psycopg.Connection, group: str, now: datetime, limit: int = RETURNED
) -> list[Entry]:
    """The group's newest live entries, newest first (LRANGE 0 limit-1)."""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM working_memory"  # noqa: S608 - constant columns
        " WHERE group_id = %s AND expires_at > %s ORDER BY id DESC LIMIT %s",
        (group, iso(now), limit),
    ).fetchall()
    return [Entry(*row) for row in rows]


def expire(conn: psycopg.Connection, now: datetime) -> int:
    """Delete every group's expired entries (see :func:`soloqueue_mem.memory.working.expire`)."""
    return conn.execute("DELETE FROM working_memory WHERE expires_at <= %s", (iso(now),)).rowcount


def clear(conn: psycopg.Connection, group: str) -> int:
    """Drop the group's list (DEL); the number of entries removed."""
    return conn.execute("DELETE FROM working_memory WHERE group_id = %s", (group,)).rowcount


def every(conn: psycopg.Connection, group: str | None) -> Iterator[Entry]:
    """Every entry (of ``group`` when given), live or not, oldest first (export)."""
    where, params = ("group_id = %s", (group,)) if group is not None else ("TRUE", ())
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM working_memory WHERE {where} ORDER BY id",  # noqa: S608
        params,
    )
    for row in rows:
        yield Entry(*row)


def put_back(conn: psycopg.Connection, entry: Entry) -> str:
    """Put back an exported entry under its id: ``added``, ``existing`` or ``conflict``
    (the id sequence moves past it, so later pushes never take it)."""
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM working_memory WHERE id = %s",  # noqa: S608
        (entry.id,),
    ).fetchone()
    if row is not None:
        return "existing" if Entry(*row) == entry else "conflict"
    conn.execute(
        "INSERT INTO working_memory"
        " (id, group_id, content, content_key, source, created_at, expires_at)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s)",
        (*entry[:3], content_key(entry.content), *entry[3:]),
    )
    conn.execute(
        "SELECT setval('working_memory_id_seq', GREATEST(%s, last_value))"
        " FROM working_memory_id_seq",
        (entry.id,),
    )
    return "added"
