"""All SQL for ``kv_store`` and ``session_state`` on PostgreSQL: JSON values by key in
a scope, with the rules of :mod:`soloqueue_mem.state.values` (its key check, its size
limit, its stored form) and the same results.

``table`` is always one of :data:`soloqueue_mem.state.values.SCOPES` (a constant of
the calling module), never the caller's input.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from soloqueue_mem import jsonio
from soloqueue_mem.clock import iso
from soloqueue_mem.errors import NotFound
from soloqueue_mem.home import validate_id
from soloqueue_mem.state.values import SCOPES, Entry, encode

if TYPE_CHECKING:
    import psycopg


def _where(table: str) -> str:
    return " AND ".join(f"{column} = %s" for column in SCOPES[table])


def put(
    conn: psycopg.Connection,
    table: str,
    scope: tuple[str, ...],
    key: str,
    value: Any,
    now: datetime,
) -> Entry:
    """Set ``key`` to ``value`` (replacing what it held)."""
    validate_id("key", key)
    text = encode(value)
    columns = ", ".join(SCOPES[table])
    marks = ", ".join(["%s"] * len(scope))
    conn.execute(
        f"INSERT INTO {table} ({columns}, key, value, updated_at)"  # noqa: S608 - constants
        f" VALUES ({marks}, %s, %s, %s) ON CONFLICT ({columns}, key)"
        " DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at",
        (*scope, key, text, iso(now)),
    )
    return Entry(scope, key, jsonio.loads(text), iso(now))


def entries(conn: psycopg.Connection, table: str, scope: tuple[str, ...]) -> list[Entry]:
    """Every key of the scope, in key order (byte order, as SQLite sorts)."""
    rows = conn.execute(
        f"SELECT key, value, updated_at FROM {table} WHERE {_where(table)}"  # noqa: S608
        ' ORDER BY key COLLATE "C"',
        scope,
    ).fetchall()
    return [Entry(scope, key, jsonio.loads(value), updated) for key, value, updated in rows]


def get(conn: psycopg.Connection, table: str, scope: tuple[str, ...], key: str) -> Entry:
    row = conn.execute(
        f"SELECT value, updated_at FROM {table} WHERE {_where(table)} AND key = %s",  # noqa: S608
        (*scope, key),
    ).fetchone()
    if row is None:
        raise NotFound(f"no key {key!r} in {'/'.join(scope)}")
    return Entry(scope, key, jsonio.loads(row[0]), row[1])


def remove(conn: psycopg.Connection, table: str, scope: tuple[str, ...], key: str) -> Entry:
    """Delete ``key``; NotFound when the scope does not hold it."""
    row = conn.execute(
        f"DELETE FROM {table} WHERE {_where(table)} AND key = %s"  # noqa: S608
        " RETURNING value, updated_at",
        (*scope, key),
    ).fetchone()
    if row is None:
        raise NotFound(f"no key {key!r} in {'/'.join(scope)}")
    return Entry(scope, key, jsonio.loads(row[0]), row[1])


def every(conn: psycopg.Connection, table: str) -> list[Entry]:
    """Every entry of every scope, by scope and key (export)."""
    columns = ", ".join(SCOPES[table])
    ordered = ", ".join(f'{c} COLLATE "C"' for c in (*SCOPES[table], "key"))
    rows = conn.execute(
        f"SELECT {columns}, key, value, updated_at FROM {table} ORDER BY {ordered}"  # noqa: S608
    ).fetchall()
    width = len(SCOPES[table])
    return [
        Entry(tuple(row[:width]), row[width], jsonio.loads(row[width + 1]), row[width + 2])
        for row in rows
    ]


def put_back(conn: psycopg.Connection, table: str, entry: Entry) -> str:
    """Put back an exported entry where the key is unset: ``added``, ``existing`` or
    ``conflict`` (the key holds another value)."""
    validate_id("key", entry.key)
    text = encode(entry.value)
    columns = ", ".join(SCOPES[table])
    marks = ", ".join(["%s"] * len(entry.scope))
    with conn.transaction():
        inserted = conn.execute(
            f"INSERT INTO {table} ({columns}, key, value, updated_at)"  # noqa: S608
            f" VALUES ({marks}, %s, %s, %s) ON CONFLICT DO NOTHING",
            (*entry.scope, entry.key, text, entry.updated_at),
        ).rowcount
        if inserted:
            return "added"
        found = get(conn, table, entry.scope, entry.key)
    same = found.value == entry.value and found.updated_at == entry.updated_at
    return "existing" if same else "conflict"
