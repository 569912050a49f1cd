"""``stats`` on PostgreSQL: the shared database's figures beside this host's own.

The database's rows (turns, sessions, memories, episodes, the working memory,
attachments) are every host's; the files (session logs, the CAS with ``artifacts.db``,
the gc and consolidate state, the extraction queue, hook errors) are this data
directory's. The report says which is which in ``shared``.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from soloqueue_mem.home import Home
from soloqueue_mem.ops.stats import store_stats as local_stats
from soloqueue_mem.storage.base import shown_url
from soloqueue_mem.storage.postgres.reindex import pending
from soloqueue_mem.storage.sqlite.stores import open_read_only

if TYPE_CHECKING:
    import psycopg

TABLES = ("quarantine_logs", "sessions", "memories", "episodes", "working_memory", "attachments")
COUNTED = {
    "turns": "quarantine_logs",
    "sessions": "sessions",
    "memories": "memories",
    "attachments": "attachments",
}
SHARED = [*(f"counts.{name}" for name in COUNTED), "databases.postgresql"]


def store_stats(
    home: Home, conn: psycopg.Connection, url: str, artifacts: sqlite3.Connection | None
) -> dict[str, Any]:
    """The SQLite report's shape, its database counts from PostgreSQL (see the module
    doc), plus ``backend`` and ``shared``."""
    report = local_stats(home, None, artifacts, lambda: open_read_only(home.state_db))
    counts = ", ".join(f"(SELECT count(*) FROM {table})" for table in TABLES)
    row = conn.execute(
        f"SELECT (SELECT version FROM schema_version),"  # noqa: S608 - constant names
        f" pg_database_size(current_database()), {counts}"
    ).fetchone()
    assert row is not None
    version, size, *rows = row
    database: dict[str, Any] = {
        "url": shown_url(url),
        "bytes": size,
        "schema_version": version,
        "rows": dict(zip(TABLES, rows, strict=True)),
    }
    if reindexing := pending(conn):
        database["reindex"] = reindexing
    for name, table in COUNTED.items():
        report["counts"][name] = database["rows"][table]
    report["databases"]["postgresql"] = database
    report["backend"] = "postgres"
    report["shared"] = SHARED
    return report
