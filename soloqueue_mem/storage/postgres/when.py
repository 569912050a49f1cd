"""The turns of a time window on PostgreSQL: recall's ``when`` channel ("last week",
"上周") reads the window's newest turns, as memory.db's ``newest_turns`` with ``until``."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from soloqueue_mem.clock import iso
from soloqueue_mem.storage.postgres.turns import _COLUMNS, _scope_sql, turn_from_row

if TYPE_CHECKING:
    import psycopg

    from soloqueue_mem.sessions.trace import Scope
    from soloqueue_mem.sessions.turns import Turn


def turns_before(conn: psycopg.Connection, scope: Scope, until: datetime, limit: int) -> list[Turn]:
    """The scope's newest turns since ``scope.since`` and before ``until``, newest first."""
    where, params = _scope_sql(scope)
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM quarantine_logs"  # noqa: S608 - fixed fragments
        f" WHERE {where} AND timestamp < %(until)s"
        " ORDER BY timestamp DESC, id DESC LIMIT %(limit)s",
        {**params, "until": iso(until), "limit": limit},
    ).fetchall()
    return [turn_from_row(row) for row in rows]
