"""Finding a row by its hex id or a unique prefix of it, on PostgreSQL (as
:func:`soloqueue_mem.db.ids.row_by_prefix` does in SQLite)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from soloqueue_mem.db.ids import checked_ref, only_row

if TYPE_CHECKING:
    import psycopg


def row_by_prefix(
    conn: psycopg.Connection, table: str, columns: str, ref: str, kind: str
) -> tuple[Any, ...]:
    """The row of ``table`` whose ``id`` is ``ref`` or the only one starting with it
    (``table`` and ``columns`` are constants of the calling module)."""
    ref = checked_ref(ref, kind)
    rows = conn.execute(
        f"SELECT {columns} FROM {table} WHERE starts_with(id, %s) LIMIT 2",  # noqa: S608
        (ref,),
    ).fetchall()
    return only_row(rows, ref, kind)
