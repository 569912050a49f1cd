"""``migrate --to``'s graph part: graph.db's nodes, links, focus lists and queued tasks
copied into the database's graph tables with their ids, in batches, resumably (rows
the database lacks are inserted, ``ON CONFLICT DO NOTHING``) and read back and
compared like the rest of the copy (:mod:`soloqueue_mem.storage.postgres.copy_sqlite`). The id
sequences are then moved past every id graph.db gave out (its ``sqlite_sequence``)
and every id a link names, so a deleted node's id is never given to a new node: a
link left dangling stays dangling. graph.db's keyword index is not copied (the
database keeps none).
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from soloqueue_mem.db.adapter import Db

if TYPE_CHECKING:
    import psycopg

    from soloqueue_mem.storage.postgres.copy_sqlite import Copy

# per table: its columns with their PostgreSQL array types, and how many lead the key
TABLES: dict[str, tuple[tuple[tuple[str, str], ...], int]] = {
    "graph_nodes": (
        (
            ("node_id", "int8"),
            ("group_id", "text"),
            ("agent_id", "text"),
            ("content", "text"),
            ("phrase", "text"),
            ("keywords_json", "text"),
            ("created_at", "text"),
            ("scan_count", "int4"),
        ),
        1,
    ),
    "graph_links": (
        (("from_id", "int8"), ("to_id", "int8"), ("strength", "float8"), ("relation", "text")),
        2,
    ),
    "graph_focus": (
        (("group_id", "text"), ("agent_id", "text"), ("node_id", "int8"), ("seq", "int8")),
        3,
    ),
    "graph_tasks": (
        (
            ("task_id", "int8"),
            ("group_id", "text"),
            ("agent_id", "text"),
            ("messages_json", "text"),
            ("enqueued_at", "text"),
            ("attempts", "int4"),
        ),
        1,
    ),
}


def source_sql(table: str) -> str:
    """The query reading ``table`` from graph.db, in key order."""
    columns, width = TABLES[table]
    names = [name for name, _ in columns]
    return f"SELECT {', '.join(names)} FROM {table} ORDER BY {', '.join(names[:width])}"  # noqa: S608


def copy_batch(
    conn: psycopg.Connection, table: str, rows: list[tuple[Any, ...]], done: Copy
) -> None:
    """Insert the rows the database lacks, read them all back and compare them."""
    columns, width = TABLES[table]
    names = ", ".join(name for name, _ in columns)
    casts = ", ".join(f"%s::{kind}[]" for _, kind in columns)
    values = [list(column) for column in zip(*rows, strict=True)]
    inserted = conn.execute(
        f"INSERT INTO {table} ({names}) SELECT * FROM unnest({casts})"  # noqa: S608
        " ON CONFLICT DO NOTHING RETURNING 1",
        values,
    ).fetchall()
    keys = ", ".join(name for name, _ in columns[:width])
    key_casts = ", ".join(f"%s::{kind}[]" for _, kind in columns[:width])
    found = conn.execute(
        f"SELECT {names} FROM {table} WHERE ({keys}) IN"  # noqa: S608 - constants
        f" (SELECT * FROM unnest({key_casts}))",
        values[:width],
    ).fetchall()
    target = {tuple(row[:width]): tuple(row) for row in found}
    report = done.tables[table]
    report.source += len(rows)
    report.copied += len(inserted)
    bad = report.compare([(tuple(row[:width]), tuple(row)) for row in rows], target)
    report.existing += len(rows) - len(inserted) - len(bad)
    done.conflict(table, bad)


def raise_sequences(source: sqlite3.Connection, conn: psycopg.Connection) -> None:
    """Move the database's node and task id sequences past every id graph.db gave out
    and every id one of its links names."""
    given = dict(source.execute("SELECT name, seq FROM sqlite_sequence").fetchall())
    named = source.execute("SELECT MAX(MAX(from_id), MAX(to_id)) FROM graph_links").fetchone()
    nodes = max(int(given.get("graph_nodes", 0)), int(named[0] or 0))
    for table, column, top in (
        ("graph_nodes", "node_id", nodes),
        ("graph_tasks", "task_id", int(given.get("graph_tasks", 0))),
    ):
        if top:
            Db(conn).claim_id(table, column, top)
