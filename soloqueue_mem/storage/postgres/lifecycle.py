"""``consolidate`` and ``session end`` on PostgreSQL: the steps written once in
:mod:`soloqueue_mem.lifecycle.consolidate` and :mod:`soloqueue_mem.lifecycle.session_end`,
over the database.

One run at a time across every host: a run holds a session-level advisory lock
(another run exits 75, or waits with ``--wait``). Digesting is safe beside ``session
end`` on any host anyway (see :mod:`soloqueue_mem.storage.postgres.episodes`). A dry run runs every
step inside one transaction and rolls it back: the report says what a real run would
do, nothing is written to the database (its locks are held until it ends).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING

from soloqueue_mem.lifecycle.digest import DbTarget
from soloqueue_mem.storage.postgres.connect import held_alone

if TYPE_CHECKING:
    import psycopg

RUN_LOCK = 0x636F6E73  # "cons": one consolidate at a time on the database
BUSY = "another consolidate is running on the database; try again later or use --wait"


@contextmanager
def held(target: DbTarget, dry_run: bool, wait: bool) -> Iterator[DbTarget]:
    """The database held for one consolidation into ``target`` (on its connection):
    the run's advisory lock, and on a dry run one transaction, rolled back."""
    import psycopg

    conn: psycopg.Connection = target.conn  # type: ignore[assignment]
    with held_alone(conn, RUN_LOCK, wait, BUSY), conn.transaction() if dry_run else nullcontext():
        yield target
        if dry_run:
            raise psycopg.Rollback()  # the block ends, rolled back, nothing raised
