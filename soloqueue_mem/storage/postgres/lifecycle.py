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

import time
from contextlib import nullcontext
from datetime import datetime
from typing import TYPE_CHECKING, Any

from soloqueue_mem import lock
from soloqueue_mem.clock import iso
from soloqueue_mem.lifecycle import consolidate
from soloqueue_mem.lifecycle.consolidate import Options
from soloqueue_mem.lifecycle.digest import DbTarget
from soloqueue_mem.lifecycle.on_log import extracted_turns
from soloqueue_mem.storage.postgres.connect import held_alone

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable

    import psycopg

    from soloqueue_mem.memory.store import Draft, Remembered
    from soloqueue_mem.semantic.model import Embedder

RUN_LOCK = 0x636F6E73  # "cons": one consolidate at a time on the database
BUSY = "another consolidate is running on the database; try again later or use --wait"


def run(
    conn: psycopg.Connection,
    target: DbTarget,
    now: datetime,
    options: Options,
    remember: Callable[[Draft, str, str], Remembered] | None = None,
    open_artifacts: Callable[[], sqlite3.Connection | None] | None = None,
) -> dict[str, Any]:
    """One consolidation of the database, digested into ``target`` (the report of the
    SQLite run; expired attachments take this host's artifact rows of theirs with them,
    ``open_artifacts``).
    With ``options.model`` (and ``remember``, the back end's), the queued turns are retried
    first, their memories stored through ``remember``, and extraction goes through the
    model, queuing in the database (:mod:`soloqueue_mem.lifecycle.queue`)."""
    import psycopg

    started = time.monotonic()
    model, home = options.model, target.home
    home.ensure()
    state = home.root / ".consolidate_state"  # this host's run lock and last run time
    with (
        lock.exclusive(state, "consolidate", wait=options.wait, note_holder=False),
        held_alone(conn, RUN_LOCK, options.wait, BUSY),
    ):
        report: consolidate.Report = {"dry_run": options.dry_run, "now": iso(now)}
        if options.dry_run:
            model = None  # a dry run neither calls the model nor queues anything
        elif model is not None:
            assert remember is not None
            model.use_database(conn)
            report["queue"] = model.retry_queue(remember)
        options = options._replace(extracted_on_log=lambda key: extracted_turns(conn, key))

        def embed(embedder: Embedder, step: Callable[[int, int], None] | None) -> dict[str, Any]:
            from soloqueue_mem.storage.postgres.embed import embed_all

            return embed_all(conn, embedder, now, progress=step)

        def lacking() -> str | None:
            from soloqueue_mem.storage.postgres.dense import NO_PGVECTOR, has_embedding_column

            return None if has_embedding_column(conn) else NO_PGVECTOR

        with conn.transaction() if options.dry_run else nullcontext():
            report |= consolidate.steps(target, now, options, model, embed, open_artifacts, lacking)
            if options.dry_run:
                raise psycopg.Rollback()  # the block ends, rolled back, nothing raised
        consolidate.finish(home, report, started, now, options.dry_run)
    return report
