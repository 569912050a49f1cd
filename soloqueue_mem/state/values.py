"""JSON values by key, in a scope: ``kv_store`` (group, agent) and ``session_state``
(group, agent, session). Keys follow the rules of ids; values are any JSON of at most
``MAX_VALUE_BYTES`` once encoded. The same SQL runs on both back ends
(:class:`soloqueue_mem.db.adapter.Db`); ``table`` is always one of :data:`SCOPES` (a
constant of the calling module), never the caller's input.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from soloqueue_mem import jsonio
from soloqueue_mem.clock import iso
from soloqueue_mem.db.adapter import Db
from soloqueue_mem.errors import BadInput, NotFound
from soloqueue_mem.home import validate_id
from soloqueue_mem.text.records import within_record

if TYPE_CHECKING:
    from soloqueue_mem.db.adapter import Connection

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
    conn: Connection,
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
    db = Db(conn)
    with db.write():
        db.execute(
            f"INSERT INTO {table} ({columns}, key, value, updated_at)"  # noqa: S608 - constants
            f" VALUES ({marks}, ?, ?, ?) ON CONFLICT ({columns}, key)"
            " DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
            (*scope, key, text, iso(now)),
        )
    return Entry(scope, key, jsonio.loads(text), iso(now))


def entries(conn: Connection, table: str, scope: tuple[str, ...]) -> list[Entry]:
    """Every key of the scope, in key order (byte order)."""
    db = Db(conn)
    rows = db.fetchall(
        f"SELECT key, value, updated_at FROM {table} WHERE {_where(table)}"  # noqa: S608
        f" ORDER BY {db.bytewise('key')}",
        scope,
    )
    return [Entry(scope, key, jsonio.loads(value), updated) for key, value, updated in rows]


def get(conn: Connection, table: str, scope: tuple[str, ...], key: str) -> Entry:
    row = Db(conn).fetchone(
        f"SELECT value, updated_at FROM {table} WHERE {_where(table)} AND key = ?",  # noqa: S608
        (*scope, key),
    )
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


def remove(conn: Connection, table: str, scope: tuple[str, ...], key: str) -> Entry:
    """Delete ``key``; NotFound when the scope does not hold it (or another writer
    deleted it first)."""
    db = Db(conn)
    with db.write():
        entry = get(conn, table, scope, key)
        deleted = db.execute(
            f"DELETE FROM {table} WHERE {_where(table)} AND key = ?",  # noqa: S608
            (*scope, key),
        ).rowcount
        if not deleted:
            raise NotFound(f"no key {key!r} in {'/'.join(scope)}")
    return entry


def every(conn: Connection, table: str) -> list[Entry]:
    """Every entry of every scope, by scope and key (export)."""
    db = Db(conn)
    columns = ", ".join(SCOPES[table])
    ordered = ", ".join(db.bytewise(c) for c in (*SCOPES[table], "key"))
    rows = db.fetchall(
        f"SELECT {columns}, key, value, updated_at FROM {table} ORDER BY {ordered}"  # noqa: S608
    )
    width = len(SCOPES[table])
    return [
        Entry(tuple(row[:width]), row[width], jsonio.loads(row[width + 1]), row[width + 2])
        for row in rows
    ]


def put_back(conn: Connection, table: str, entry: Entry) -> str:
    """Put back an exported entry where the key is unset: ``added``, ``existing`` or
    ``conflict`` (the key holds another value)."""
    validate_id("key", entry.key)
    text = encode(entry.value)
    columns = ", ".join(SCOPES[table])
    marks = ", ".join("?" * len(entry.scope))
    db = Db(conn)
    with db.write():
        inserted = db.execute(
            f"INSERT INTO {table} ({columns}, key, value, updated_at)"  # noqa: S608
            f" VALUES ({marks}, ?, ?, ?) ON CONFLICT DO NOTHING",
            (*entry.scope, entry.key, text, entry.updated_at),
        ).rowcount
        if inserted:
            return "added"
        found = get(conn, table, entry.scope, entry.key)
    same = found.value == entry.value and found.updated_at == entry.updated_at
    return "existing" if same else "conflict"
