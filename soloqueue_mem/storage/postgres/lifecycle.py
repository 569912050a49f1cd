"""``consolidate`` and ``session end`` on PostgreSQL: the steps of
:mod:`soloqueue_mem.lifecycle.consolidate` and :mod:`soloqueue_mem.lifecycle.digest`
over the database, with the SQL they need on ``memories``.

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
from soloqueue_mem.config import Config
from soloqueue_mem.home import Home
from soloqueue_mem.lifecycle import consolidate
from soloqueue_mem.lifecycle.consolidate import Options, Progress
from soloqueue_mem.lifecycle.digest import DbTarget
from soloqueue_mem.lifecycle.model_extract import configured
from soloqueue_mem.lifecycle.on_log import extracted_turns
from soloqueue_mem.lifecycle.session_end import Ended, end_and_digest
from soloqueue_mem.memory import working
from soloqueue_mem.sessions.events import SessionKey
from soloqueue_mem.sessions.turns import sessions_with_unextracted
from soloqueue_mem.storage.postgres import sessions
from soloqueue_mem.storage.postgres.connect import held_alone
from soloqueue_mem.storage.postgres.episodes import INDEXES
from soloqueue_mem.storage.postgres.memories import TSVECTOR

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable

    import psycopg

    from soloqueue_mem.lifecycle.model_extract import ModelExtraction
    from soloqueue_mem.memory.store import Draft, Remembered
    from soloqueue_mem.semantic.model import Embedder

RUN_LOCK = 0x636F6E73  # "cons": one consolidate at a time on the database
BUSY = "another consolidate is running on the database; try again later or use --wait"
NOT_HERE = "not on the PostgreSQL back end yet"


def run(
    conn: psycopg.Connection,
    home: Home,
    now: datetime,
    options: Options,
    remember: Callable[[Draft, str, str], Remembered] | None = None,
    open_artifacts: Callable[[], sqlite3.Connection | None] | None = None,
) -> dict[str, Any]:
    """One consolidation of the database (the report of the SQLite run; expired
    attachments take this host's artifact rows of theirs with them, ``open_artifacts``).
    With ``options.model`` (and ``remember``, the back end's), the queued turns are retried
    first, their memories stored through ``remember``, and extraction goes through the
    model, queuing in the database (:mod:`soloqueue_mem.lifecycle.queue`)."""
    import psycopg

    started = time.monotonic()
    model, progress = options.model, options.progress
    home.ensure()
    state = home.root / ".consolidate_state"  # this host's run lock and last run time
    with (
        lock.exclusive(state, "consolidate", wait=options.wait, note_holder=False),
        held_alone(conn, RUN_LOCK, options.wait, BUSY),
    ):
        report: dict[str, Any] = {"dry_run": options.dry_run, "now": iso(now)}
        if options.dry_run:
            model = None  # a dry run neither calls the model nor queues anything
        elif model is not None:
            assert remember is not None
            model.use_database(conn)
            report["queue"] = model.retry_queue(remember)
        options = options._replace(extracted_on_log=lambda key: extracted_turns(conn, key))
        with conn.transaction() if options.dry_run else nullcontext():
            _steps(conn, home, now, options, progress, report, model)
            report["expire"]["attachments"] = _expire_attachments(
                conn, None if options.dry_run or open_artifacts is None else open_artifacts(), now
            )
            if options.dry_run:
                raise psycopg.Rollback()  # the block ends, rolled back, nothing raised
        consolidate.finish(home, report, started, now, options.dry_run)
    return report


def _steps(
    conn: psycopg.Connection,
    home: Home,
    now: datetime,
    options: Options,
    progress: Progress | None,
    report: dict[str, Any],
    model: ModelExtraction | None,
) -> None:
    target = _target(conn, home, options.language)
    due = sessions_with_unextracted(conn)  # digest_due takes the ended or idle ones
    report["sessions"] = consolidate.digest_due(home, target, due, now, options, model, progress)
    memories = consolidate.DbMemories(conn, TSVECTOR)
    report |= consolidate.retire_then_dedup(
        memories,
        now,
        model,
        lambda: {
            "deleted": consolidate.expire_step(memories, now),
            "attachments": 0,
            "working": working.expire(conn, now),
        },
    )
    report["embed"] = _embed(conn, now, options, progress)
    report["graph"] = consolidate.graph_step(options)
    active = memories.active(now)
    report["identity"] = consolidate.publish(home, active, now, options.dry_run, model)
    report["model"] = model.report() if model is not None else {"used": False}


def _expire_attachments(
    conn: psycopg.Connection, artifacts: sqlite3.Connection | None, now: datetime
) -> int:
    from soloqueue_mem.memory.attach import Rows, expire
    from soloqueue_mem.storage.postgres.attachments import TSVECTOR

    try:
        return expire(Rows(conn, TSVECTOR), artifacts, now)
    finally:
        if artifacts is not None:
            artifacts.close()


def _embed(
    conn: psycopg.Connection, now: datetime, options: Options, progress: Progress | None
) -> dict[str, Any]:
    """Vectors for the memories and episodes that lack one (as SQLite's embed step)."""
    from soloqueue_mem.storage.postgres.dense import has_embedding_column
    from soloqueue_mem.storage.postgres.embed import embed_all

    def lacking() -> str | None:
        if has_embedding_column(conn):
            return None
        return "the server has no pgvector (CREATE EXTENSION vector failed)"

    def embed(embedder: Embedder, step: Callable[[int, int], None] | None) -> dict[str, Any]:
        return embed_all(conn, embedder, now, progress=step)

    return consolidate.embed_step(options, progress, embed, lacking)


def end_session(
    conn: psycopg.Connection, home: Home, config: Config, key: SessionKey, now: datetime
) -> Ended:
    """``session end`` (:func:`soloqueue_mem.lifecycle.session_end.end_and_digest`), the
    model's failed turns queued in the database."""
    model = configured(config, now)
    if model is not None:
        model.use_database(conn)
    target = _target(conn, home, config.language)
    return end_and_digest(target, key, config, now, extracted_turns(conn, key), model)


def _target(conn: psycopg.Connection, home: Home, language: str) -> DbTarget:
    """Digesting into the database: a session's records are read from it, not from
    this host's log (which holds only the turns this host wrote)."""

    def records(key: SessionKey) -> list[dict[str, Any]]:
        return sessions.read(conn, home, key).records

    return DbTarget(home, conn, language, records, INDEXES)
