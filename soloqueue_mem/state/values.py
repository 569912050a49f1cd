"""JSON values by key, in a scope: ``kv_store`` (group, agent) and ``session_state``
(group, agent, session). Keys follow the rules of ids; values are any JSON of at most
``MAX_VALUE_BYTES`` once encoded.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any, NamedTuple

from soloqueue_mem import jsonio
from soloqueue_mem.clock import iso
from soloqueue_mem.db.connect import write_tx
from soloqueue_mem.errors import BadInput, NotFound
from soloqueue_mem.home import validate_id
from soloqueue_mem.text.records import within_record

MAX_VALUE_BYTES = 64 * 1024
# Each table's scope columns, in order.
SCOPES = {
    "kv_store": ("group_id", "agent_id"),
    "session_state": ("group_id", "agent_id", "session_id"),
}


class Entry(NamedTuple):
    scope: tuple[str, ...]
    key: str
    value: Any
    updated_at: str


def encode(value: Any) -> str:
    """The stored form of ``value``; BadInput when it is too big."""
    text = jsonio.dumps_compact(value)
    if len(text.encode("utf-8")) > MAX_VALUE_BYTES:
        raise BadInput(f"the value is larger than {MAX_VALUE_BYTES} bytes of JSON")
    return text


def _where(table: str) -> str:
    return " AND ".join(f"{column} = ?" for column in SCOPES[table])


def put(
    conn: sqlite3.Connection,
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
    marks = ", ".join("?" * len(scope))
    with write_tx(conn):
        conn.execute(
            f"INSERT OR REPLACE INTO {table} ({columns}, key, value, updated_at)"  # noqa: S608
            f" VALUES ({marks}, ?, ?, ?)",
            (*scope, key, text, iso(now)),
        )
    return Entry(scope, key, jsonio.loads(text), iso(now))


def entries(conn: sqlite3.Connection, table: str, scope: tuple[str, ...]) -> list[Entry]:
    """Every key of the scope, in key order."""
    rows = conn.execute(
        f"SELECT key, value, updated_at FROM {table} WHERE {_where(table)} ORDER BY key",  # noqa: S608
        scope,
    )
    return [Entry(scope, key, jsonio.loads(value), updated) for key, value, updated in rows]


def get(conn: sqlite3.Connection, table: str, scope: tuple[str, ...], key: str) -> Entry:
    row = conn.execute(
        f"SELECT value, updated_at FROM {table} WHERE {_where(table)} AND key = ?",  # noqa: S608
        (*scope, key),
    ).fetchone()
    if row is None:
        raise NotFound(f"no key {key!r} in {'/'.join(scope)}")
    return Entry(scope, key, jsonio.loads(row[0]), row[1])


def as_list(rows: list[Entry], first: str | None = None) -> str | None:
    """``- key: value`` lines (strings as they are, other values as JSON), ``first``
    leading; None when there are none. A value's further lines are indented, so it
    cannot start a heading or an item of its own."""
    rows = sorted(rows, key=lambda e: e.key != first)
    lines = [
        f"- {e.key}: "
        + within_record(e.value if isinstance(e.value, str) else jsonio.dumps_compact(e.value))
        for e in rows
    ]
    return "\n".join(lines) or None


def remove(conn: sqlite3.Connection, table: str, scope: tuple[str, ...], key: str) -> Entry:
    """Delete ``key``; NotFound when the scope does not hold it."""
    with write_tx(conn):
        entry = get(conn, table, scope, key)
        conn.execute(
            f"DELETE FROM {table} WHERE {_where(table)} AND key = ?",  # noqa: S608
            (*scope, key),
        )
    return entry


def every(conn: sqlite3.Connection, table: str) -> list[Entry]:
    """Every entry of every scope, by scope and key (export)."""
    columns = ", ".join(SCOPES[table])
    rows = conn.execute(
        f"SELECT {columns}, key, value, updated_at FROM {table}"  # noqa: S608
        f" ORDER BY {columns}, key"
    )
    width = len(SCOPES[table])
    return [
        Entry(tuple(row[:width]), row[width], jsonio.loads(row[width + 1]), row[width + 2])
        for row in rows
    ]


def put_back(conn: sqlite3.Connection, table: str, entry: Entry) -> str:
    """Put back an exported entry where the key is unset: ``added``, ``existing`` or
    ``conflict`` (the key holds another value)."""
    validate_id("key", entry.key)
    text = encode(entry.value)
    columns = ", ".join(SCOPES[table])
    marks = ", ".join("?" * len(entry.scope))
    with write_tx(conn):
        row = conn.execute(
            f"SELECT value, updated_at FROM {table} WHERE {_where(table)} AND key = ?",  # noqa: S608
            (*entry.scope, entry.key),
        ).fetchone()
        if row is not None:
            same = jsonio.loads(row[0]) == entry.value and row[1] == entry.updated_at
            return "existing" if same else "conflict"
        conn.execute(
            f"INSERT INTO {table} ({columns}, key, value, updated_at)"  # noqa: S608
            f" VALUES ({marks}, ?, ?, ?)",
            (*entry.scope, entry.key, text, entry.updated_at),
        )
    return "added"
