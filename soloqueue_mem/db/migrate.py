"""Forward-only migrations recorded in ``PRAGMA user_version``: reading the version,
refusing newer files, running a migration's statements.

Each database has one ordered list of plain functions; the position in the list is the
version. :func:`soloqueue_mem.db.connect.open_db` runs the missing ones on open. A
database newer than the code is refused. This module imports nothing of ``db``, so the
migrations beside each subsystem can use it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from soloqueue_mem.errors import SchemaTooNew, StorageError


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def not_newer(conn: sqlite3.Connection, head: int, name: str) -> int:
    """The file's schema version; SchemaTooNew if a newer release wrote it."""
    version = schema_version(conn)
    if version > head:
        raise SchemaTooNew(
            f"{name} has schema version {version}, newer than this soloqueue-mem "
            f"understands ({head}); upgrade soloqueue-mem"
        )
    return version


def check_current(
    conn: sqlite3.Connection,
    migrations: Sequence[Callable[[sqlite3.Connection], None]],
    name: str,
) -> None:
    """For a database that cannot be migrated (read-only): it must be at this
    program's schema exactly."""
    if not_newer(conn, len(migrations), name) < len(migrations):
        raise StorageError(
            f"{name} is read-only and from an older soloqueue-mem; open the store once "
            "with write access to upgrade it"
        )


def execute_script(conn: sqlite3.Connection, script: str) -> None:
    """Run several statements inside the caller's transaction.

    ``Connection.executescript`` would COMMIT first, breaking the rule that a
    migration and its version bump are one transaction.
    """
    statement = ""
    for line in script.splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            conn.execute(statement)
            statement = ""
    if statement.strip():
        conn.execute(statement)
