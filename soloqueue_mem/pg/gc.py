"""``gc`` on PostgreSQL: this data directory's CAS, kept for every host's references.

The blobs live on this host's disk (or a path hosts share). Phase 1 and the plan read
this data directory's ``artifacts.db`` as on SQLite; every blob a database row names
is kept as well — any host's row, read before the plan and again under the deletion
lock — so a blob another host references is never deleted (``BLOB_REFERENCES``: the
tables naming a blob by its CAS path, read when the database has them). A reference
source that cannot be read deletes nothing (GcRefused, exit 74).

One gc at a time across hosts: besides the local ``flock``, the run holds a session
advisory lock on the database; a second host's gc exits 75 (or waits with ``--wait``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from soloqueue_mem.errors import TempFail
from soloqueue_mem.home import Home
from soloqueue_mem.lifecycle.gc import GcOptions, GcRefused, nothing_done, run_gc

if TYPE_CHECKING:
    import sqlite3

    import psycopg

# Table -> its column holding a blob's path under the data directory
# (``artifacts/blobs/ab/cd/<sha256>``), as artifacts.db's ``artifacts.path``.
BLOB_REFERENCES = {"artifacts": "path"}
_LOCK = 0x4743_4C4B  # the gc run's session advisory lock


class DatabaseReferences:
    """The blob paths the database's rows name (see the module doc)."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn

    def paths(self) -> set[str]:
        return self._read("", ())

    def among(self, relpaths: list[str]) -> set[str]:
        return self._read(" WHERE {column} = ANY(%s)", (relpaths,))

    def _read(self, where: str, params: tuple[Any, ...]) -> set[str]:
        import psycopg

        found: set[str] = set()
        try:
            for table, column in BLOB_REFERENCES.items():
                row = self.conn.execute("SELECT to_regclass(%s)", (table,)).fetchone()
                if row is None or row[0] is None:
                    continue
                rows = self.conn.execute(
                    f"SELECT {column} FROM {table}" + where.format(column=column),  # noqa: S608
                    params,
                )
                found.update(path for (path,) in rows)
        except psycopg.Error as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise GcRefused(
                f"gc aborted: cannot read the blob references in the database ({reason});"
                " nothing was deleted"
            ) from None
        return found


def run(
    home: Home,
    conn: psycopg.Connection,
    open_catalog: Callable[[], sqlite3.Connection | None],
    now: datetime,
    options: GcOptions,
    progress: Callable[[int], None] | None,
) -> dict[str, Any]:
    """One gc run (the report is SQLite's), alone among the hosts sharing ``conn``'s
    database."""
    if not home.exists():
        return nothing_done(options.dry_run)
    home.check_safe()
    with _alone(conn, options.wait):
        return run_gc(home, open_catalog, now, options, progress, DatabaseReferences(conn))


@contextmanager
def _alone(conn: psycopg.Connection, wait: bool) -> Iterator[None]:
    if wait:
        conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK,))
    else:
        row = conn.execute("SELECT pg_try_advisory_lock(%s)", (_LOCK,)).fetchone()
        if row is None or not row[0]:
            raise TempFail("gc is running on another host sharing this database; try later")
    try:
        yield
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK,))
