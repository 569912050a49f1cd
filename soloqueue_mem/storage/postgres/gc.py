"""``gc`` on PostgreSQL: this data directory's CAS, as on SQLite.

The blobs and their catalog (``artifacts.db``) stay in the data directory: no database
row names a blob, so hosts that share a data directory share its catalog, and the two
phases run exactly as on SQLite.

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
from soloqueue_mem.lifecycle.gc import GcOptions, nothing_done, run_gc

if TYPE_CHECKING:
    import sqlite3

    import psycopg

_LOCK = 0x4743_4C4B  # the gc run's session advisory lock


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
        return run_gc(home, open_catalog, now, options, progress)


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
