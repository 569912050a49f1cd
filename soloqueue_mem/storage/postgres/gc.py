"""``gc`` on PostgreSQL: this data directory's CAS, as on SQLite.

The blobs and their catalog (``artifacts.db``) stay in the data directory: no database
row names a blob, so hosts that share a data directory share its catalog, and the two
phases run exactly as on SQLite.

One gc at a time across hosts: besides the local ``flock``, the run holds a session
advisory lock on the database; a second host's gc exits 75 (or waits with ``--wait``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from soloqueue_mem.home import Home
from soloqueue_mem.lifecycle.gc import GcOptions, nothing_done, run_gc
from soloqueue_mem.storage.postgres.connect import held_alone

if TYPE_CHECKING:
    import sqlite3

    import psycopg

_LOCK = 0x4743_4C4B  # the gc run's session advisory lock
BUSY = "gc is running on another host sharing this database; try later"


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
    with held_alone(conn, _LOCK, options.wait, BUSY):
        return run_gc(home, open_catalog, now, options, progress)
