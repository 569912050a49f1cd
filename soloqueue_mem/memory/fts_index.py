"""Re-creating a table's FTS5 index from the table itself (``verify --reindex``)."""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable
    from typing import Any


def rebuild(
    conn: sqlite3.Connection,
    table: str,
    columns: str,
    index: Callable[[sqlite3.Connection, int, tuple[Any, ...]], None],
) -> int:
    """Empty ``{table}_fts`` and ``index`` every row of ``table`` again (its rowid and
    ``columns``), inside the caller's write transaction; the number of rows indexed."""
    conn.execute(f"INSERT INTO {table}_fts ({table}_fts) VALUES ('delete-all')")  # noqa: S608
    rows = conn.execute(f"SELECT rowid, {columns} FROM {table}").fetchall()  # noqa: S608
    for row in rows:
        index(conn, row[0], row[1:])
    return len(rows)
