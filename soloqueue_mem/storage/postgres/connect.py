"""Opening the PostgreSQL database: one connection per process, migrated on open.

Migrations run under a transaction-scoped advisory lock, so processes on several hosts
opening a fresh database at once apply each step exactly once.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING

from soloqueue_mem.errors import SchemaTooNew, StorageError, TempFail, install_hint
from soloqueue_mem.storage.postgres.schema import EMBEDDING_COLUMN, MIGRATIONS

if TYPE_CHECKING:
    import psycopg

_MIGRATION_LOCK = 0x50515545  # any constant shared by every writer of the schema
CONNECT_TIMEOUT_SECONDS = 10


def connect(url: str) -> psycopg.Connection:
    """A connection to ``url`` with the schema at this version (StorageError when the
    server cannot be reached or the ``postgres`` extra is not installed)."""
    try:
        import psycopg
    except ImportError:
        raise StorageError(
            f"database_url needs the postgres extra; {install_hint('postgres')}"
        ) from None
    try:
        # autocommit: a lone query is its own transaction, and conn.transaction() blocks
        # are real ones (not savepoints of an implicit transaction never committed)
        conn = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS)
    except psycopg.Error as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StorageError(f"cannot connect to the database: {reason}") from None
    try:
        if not _current(conn):
            migrate(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _current(conn: psycopg.Connection) -> bool:
    """Whether the schema is at this version with no re-index pending: one round trip,
    no lock (the common case of a short-lived process); anything else goes through
    :func:`migrate`."""
    import psycopg

    try:
        row = conn.execute(
            "SELECT version, to_regclass('reindex_progress') IS NULL FROM schema_version"
        ).fetchone()
    except psycopg.errors.UndefinedTable:
        return False
    return row is not None and row[0] == len(MIGRATIONS) and row[1]


def migrate(conn: psycopg.Connection) -> int:
    """Apply the migrations this database lacks, then any re-index they left pending
    (:func:`soloqueue_mem.storage.postgres.reindex.resume`); return its version."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = conn.execute(
            "SELECT version, to_regclass('reindex_progress') IS NOT NULL FROM schema_version"
        ).fetchone()
        version, reindexing = row if row else (0, False)
        if version > len(MIGRATIONS):
            raise SchemaTooNew(
                f"the database is at schema version {version}; this soloqueue-mem knows "
                f"{len(MIGRATIONS)}: upgrade soloqueue-mem"
            )
        if version < len(MIGRATIONS):
            _apply(conn, version, row is None)
    if reindexing or version < len(MIGRATIONS):
        from soloqueue_mem.storage.postgres.reindex import resume

        resume(conn)
    return len(MIGRATIONS)


def _apply(conn: psycopg.Connection, version: int, first: bool) -> None:
    for step in MIGRATIONS[version:]:
        if callable(step):
            step(conn)
        else:
            conn.execute(step)  # type: ignore[arg-type]  # constant SQL
    if first:
        conn.execute("INSERT INTO schema_version VALUES (%s)", (len(MIGRATIONS),))
    else:
        conn.execute("UPDATE schema_version SET version = %s", (len(MIGRATIONS),))
    _add_embedding_column(conn)


def _add_embedding_column(conn: psycopg.Connection) -> None:
    """Add ``memories.embedding`` when pgvector can be enabled; nothing when it cannot
    (the server lacks it, or the role may not create extensions)."""
    import psycopg

    # a savepoint: a refusal leaves the migration intact
    with suppress(psycopg.Error), conn.transaction():
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute(EMBEDDING_COLUMN)  # type: ignore[arg-type]  # constant SQL


@contextmanager
def held_alone(conn: psycopg.Connection, key: int, wait: bool, busy: str) -> Iterator[None]:
    """A run that only one host at a time may make on the database (``consolidate``,
    ``gc``): a session advisory lock on ``key`` while the block runs. Without ``wait``,
    TempFail(``busy``) when another host holds it."""
    if wait:
        conn.execute("SELECT pg_advisory_lock(%s)", (key,))
    else:
        row = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
        if row is None or not row[0]:
            raise TempFail(busy)
    try:
        yield
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
