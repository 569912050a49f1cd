"""One way to run the domain's SQL on either back end's connection.

The domain functions (values, queues, working memory, scratchpad, ...) are written once,
with SQLite's ``?`` marks, and take the connection their back end holds: a
``sqlite3.Connection`` or a ``psycopg.Connection`` in autocommit. :class:`Db` wraps it
and hides what the two dialects spell differently:

- marks: ``?`` becomes ``%s`` on PostgreSQL, ``:name`` becomes ``%(name)s`` (and a
  literal ``%`` is doubled);
- write transactions: ``BEGIN IMMEDIATE`` (:func:`soloqueue_mem.db.connect.write_tx`)
  on SQLite, ``conn.transaction()`` on PostgreSQL; both nest as savepoints;
- locks: SQLite has one writer at a time, so a write transaction is already the lock;
  PostgreSQL takes a transaction-scoped advisory lock on the name;
- new ids: ``lastrowid`` on SQLite, ``RETURNING id`` on PostgreSQL; an id put back
  by hand moves PostgreSQL's sequence past it (SQLite's rowid needs nothing);
- byte order: SQLite compares text bytewise; PostgreSQL needs ``COLLATE "C"``;
- row locks: ``SELECT … FOR UPDATE`` (or ``… SKIP LOCKED``) on PostgreSQL; SQLite's
  write transaction already holds the whole database;
- a JSON list holding a value: ``json_each`` on SQLite, ``jsonb`` containment on
  PostgreSQL; a column among a list of ids: ``json_each`` of the list as JSON, or
  ``= ANY`` of an array;
- the turns' table: memory.db's ``conversation_turns``, seed 004's ``quarantine_logs``
  on PostgreSQL (table names are a contract: neither is renamed).

What truly differs (DDL, full-text search, vectors, bulk copy) stays per back end.
"""

from __future__ import annotations

import json
import re
import sqlite3
from functools import cache
from itertools import count

from soloqueue_mem.db.connect import is_read_only, write_tx

TYPE_CHECKING = False  # typing's constant is not needed at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence
    from contextlib import AbstractContextManager
    from typing import Any

    # a sqlite3.Connection or a psycopg.Connection in autocommit; the PostgreSQL driver
    # is not named here: only storage/ imports it
    Connection = Any
    Params = Sequence[Any] | dict[str, Any]
else:
    Connection = object  # a name for annotations, which are strings at run time

_TRANSLATED: dict[tuple[str, bool], str] = {}
_CURSORS = count()  # names PostgreSQL's server-side cursors apart
PAGE = 2000  # rows a server-side cursor fetches at a time


@cache
def _named_mark() -> re.Pattern[str]:
    """Compiled on first use: SQLite's ``log`` imports this module and never needs it."""
    return re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


def postgres_sql(sql: str, named: bool = False) -> str:
    """``sql`` with PostgreSQL's marks: ``?`` (or, with ``named`` parameters, ``:name``)
    becomes ``%s`` (``%(name)s``), and ``%`` becomes ``%%``."""
    translated = _TRANSLATED.get((sql, named))
    if translated is None:
        text = sql.replace("%", "%%")
        text = _named_mark().sub(r"%(\1)s", text) if named else text.replace("?", "%s")
        translated = _TRANSLATED[sql, named] = text
    return translated


class Db:
    """One connection of either driver, for SQL written once (see the module doc)."""

    __slots__ = ("conn", "postgres")

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.postgres = not isinstance(conn, sqlite3.Connection)

    def execute(self, sql: str, params: Params = ()) -> Any:
        """The driver's cursor (``rowcount``, ``fetchone``, iteration). ``params``: a
        sequence for ``?`` marks, or a dict for ``:name`` marks."""
        if self.postgres:
            return self.conn.execute(postgres_sql(sql, isinstance(params, dict)), params)
        return self.conn.execute(sql, params)

    def fetchone(self, sql: str, params: Params = ()) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = self.execute(sql, params).fetchone()
        return row

    def fetchall(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        return list(self.execute(sql, params).fetchall())

    def stream(self, sql: str, params: Params = ()) -> Iterator[tuple[Any, ...]]:
        """The rows of a query that may be long, a page at a time: through a server-side
        cursor on PostgreSQL (inside the caller's transaction), whose client would
        otherwise hold them all; SQLite's cursor reads them so already."""
        if not self.postgres:
            yield from self.conn.execute(sql, params)
            return
        with self.conn.cursor(name=f"soloqueue_stream_{next(_CURSORS)}") as cursor:
            cursor.itersize = PAGE
            cursor.execute(postgres_sql(sql, isinstance(params, dict)), params)
            yield from cursor

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if self.postgres:
            with self.conn.cursor() as cursor:  # type: ignore[union-attr]
                cursor.executemany(postgres_sql(sql), rows)
        else:
            self.conn.executemany(sql, rows)  # type: ignore[union-attr]

    def read_only(self) -> bool:
        """Whether the connection may not write (a SQLite store opened read-only)."""
        return not self.postgres and is_read_only(self.conn)  # type: ignore[arg-type]

    def write(self) -> AbstractContextManager[Any]:
        """A write transaction, a savepoint when nested; rolled back on any exception."""
        if self.postgres:
            return self.conn.transaction()  # type: ignore[union-attr]
        return write_tx(self.conn)  # type: ignore[arg-type]

    def lock(self, name: str) -> None:
        """Serialise writers of ``name`` until the transaction ends (inside :meth:`write`)."""
        if self.postgres:
            self.execute("SELECT pg_advisory_xact_lock(hashtext(?))", (name,))

    def insert(self, sql: str, params: Sequence[Any], key: str = "id") -> int:
        """Run an ``INSERT`` into a table whose integer key ``key`` is given out by the
        database; the new row's key."""
        if self.postgres:
            row = self.fetchone(f"{sql} RETURNING {key}", params)
            assert row is not None
            return int(row[0])
        return int(self.execute(sql, params).lastrowid or 0)

    def claim_id(self, table: str, column: str, id_: int) -> None:
        """After a row of ``table`` was inserted with ``column`` = ``id_`` by hand: no new
        row takes an id up to it. PostgreSQL's sequence is moved past it, never back (an
        id given out once is never given out again); SQLite's rowid needs nothing."""
        if self.postgres:
            self.execute(
                "SELECT setval(pg_get_serial_sequence(?, ?), ?) WHERE ? > COALESCE("
                "pg_sequence_last_value(pg_get_serial_sequence(?, ?)::regclass), 0)",
                (table, column, id_, id_, table, column),
            )

    @property
    def for_update(self) -> str:
        """A ``SELECT``'s ending that locks its rows until the transaction ends (on
        SQLite the write transaction already holds the database)."""
        return " FOR UPDATE" if self.postgres else ""

    @property
    def claim(self) -> str:
        """:attr:`for_update`, passing over the rows another transaction holds (``SKIP
        LOCKED``): two writers never take the same rows, and neither waits."""
        return " FOR UPDATE SKIP LOCKED" if self.postgres else ""

    def among(self, column: str) -> str:
        """SQL: ``column`` is one of the integer ids a ``?`` mark stands for (its
        parameter: :meth:`ids`)."""
        if self.postgres:
            return f"{column} = ANY(?::bigint[])"
        return f"{column} IN (SELECT value FROM json_each(?))"

    def ids(self, ids: Iterable[int]) -> Any:
        """The parameter of :meth:`among`: a JSON list on SQLite, an array on PostgreSQL."""
        listed = [int(id_) for id_ in ids]
        return listed if self.postgres else json.dumps(listed)

    def json_holds(self, column: str, mark: str) -> str:
        """SQL: the JSON list in text ``column`` holds the string ``mark`` stands for."""
        if self.postgres:
            return f"({column})::jsonb @> jsonb_build_array({mark}::text)"
        return f"EXISTS (SELECT 1 FROM json_each({column}) WHERE value = {mark})"

    @property
    def turns(self) -> str:
        """The name of the turns' table (see the module doc)."""
        return "quarantine_logs" if self.postgres else "conversation_turns"

    def bytewise(self, column: str) -> str:
        """``column`` for ``ORDER BY`` in byte order (SQLite's own)."""
        return f'{column} COLLATE "C"' if self.postgres else column
