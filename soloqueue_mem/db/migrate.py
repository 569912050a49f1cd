"""Forward-only migrations recorded in ``PRAGMA user_version``.

Each database has one ordered list of plain functions; the position in the list is the
version. Every migration runs with its version bump in one ``BEGIN IMMEDIATE``
transaction, and the version is re-read inside it, so two processes opening an old
database at once migrate it exactly once. A database newer than the code is refused.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from soloqueue_mem.errors import SchemaTooNew


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(
    conn: sqlite3.Connection,
    migrations: Sequence[Callable[[sqlite3.Connection], None]],
    name: str,
) -> None:
    """Bring ``conn`` to ``len(migrations)``; raise SchemaTooNew for newer files."""
    from soloqueue_mem.db.connect import write_tx

    head = len(migrations)
    version = schema_version(conn)
    if version > head:
        raise SchemaTooNew(
            f"{name} has schema version {version}, newer than this soloqueue-mem "
            f"understands ({head}); upgrade soloqueue-mem"
        )
    while version < head:
        with write_tx(conn):
            version = schema_version(conn)  # another process may have migrated meanwhile
            if version >= head:
                break
            migrations[version](conn)
            conn.execute(f"PRAGMA user_version = {version + 1}")
        version = schema_version(conn)


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
