"""``migrate --to``, after memory.db's and graph.db's tables: the rest of a SQLite store.

Tables with the same columns on both back ends are copied row for row, keyed, read back
and compared as the other tables are: state.db's extraction state — the turns ``log``
extracted (``log_extractions``, so the database never extracts them again) and the
model's retry queue (``extraction_queue``) — and memory.db's ``remember_events`` (the
idempotency keys of ``remember --event-id``, so a retry after the move is a duplicate).

The scratchpads, working memory, attachment rows (their blobs stay in this host's
CAS, where they are), kv, session variables and embedding vectors go
through the dump's records (:mod:`soloqueue_mem.ops.import_dump`, which names a turn's
vector by its session and index, not by this store's row id): each record is
``copied``, ``existing`` (the database holds it the same) or a conflict (held
differently, left as it is). Both ways leave what is there alone, so a re-run is a no-op.
"""

from __future__ import annotations

import sqlite3
from itertools import chain
from typing import TYPE_CHECKING, Any, NamedTuple

from soloqueue_mem.config import Config
from soloqueue_mem.home import Home
from soloqueue_mem.ops.dump_format import header

if TYPE_CHECKING:
    import psycopg

    from soloqueue_mem.storage.postgres.copy_sqlite import Copy, TableReport


class Keyed(NamedTuple):
    """A table copied row for row: the same columns on both back ends."""

    source: str  # the SQLite file: "state" or "memory"
    key: tuple[str, ...]  # its unique key
    types: tuple[str, ...]  # the key columns' PostgreSQL types
    rest: tuple[str, ...] = ()


_TURN = Keyed("state", ("group_id", "agent_id", "session_id", "turn_index"),
              ("text", "text", "text", "int"))  # fmt: skip
KEYED_TABLES = {
    "log_extractions": _TURN._replace(rest=("reserved_at", "extracted_at", "memories")),
    "extraction_queue": _TURN._replace(
        rest=(
            "role",
            "content",
            "tool_calls",
            "tool_results",
            "retry_count",
            "max_retries",
            "status",
            "created_at",
            "last_attempted_at",
            "next_attempt_at",
            "error",
        )
    ),  # fmt: skip
    "remember_events": Keyed(
        "memory",
        ("group_id", "agent_id", "event_id"),
        ("text",) * 3,
        ("memory_id", "action", "created_at"),
    ),  # fmt: skip
}
RECORD_KINDS = (
    "scratchpad",
    "working",
    "attachment",
    "kv",
    "session_state",
    "embedding",
    "embedded_item",
)


def copy_keyed_tables(
    sources: dict[str, sqlite3.Connection | None],
    target: psycopg.Connection,
    done: Copy,
    batch_rows: int,
) -> None:
    """Copy :data:`KEYED_TABLES` from the SQLite files given (reported under ``tables``)."""
    from soloqueue_mem.storage.postgres.copy_sqlite import TableReport, batches

    for table, keyed in KEYED_TABLES.items():
        source = sources.get(keyed.source)
        if source is None:
            continue
        report = done.tables[table] = TableReport()
        listed = ", ".join((*keyed.key, *keyed.rest))
        sql = f"SELECT {listed} FROM {table} ORDER BY {', '.join(keyed.key)}"  # noqa: S608
        for rows in batches(source, sql, batch_rows):
            with target.transaction():
                done.conflict(table, _copy_rows(target, table, keyed, rows, report))


def _copy_rows(
    conn: psycopg.Connection, table: str, keyed: Keyed, rows: list[tuple[Any, ...]],
    report: TableReport,
) -> list[Any]:  # fmt: skip
    """Insert the rows the database lacks; the keys it holds differently."""
    listed = ", ".join((*keyed.key, *keyed.rest))
    marks = ", ".join(["%s"] * len(rows[0]))
    with conn.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {table} ({listed}) VALUES ({marks})"  # noqa: S608
            f" ON CONFLICT ({', '.join(keyed.key)}) DO NOTHING",
            rows,
        )
        copied = cursor.rowcount
    report.source += len(rows)
    report.copied += copied
    report.existing += len(rows) - copied
    width = len(keyed.key)
    arrays = ", ".join(f"%s::{kind}[]" for kind in keyed.types)
    names = [f"k{n}" for n in range(width)]
    joined = " AND ".join(f"t.{column} = k.{name}" for column, name in zip(keyed.key, names,
                                                                          strict=True))  # fmt: skip
    found = conn.execute(
        f"SELECT {', '.join('t.' + c for c in (*keyed.key, *keyed.rest))} FROM {table} t"  # noqa: S608
        f" JOIN unnest({arrays}) AS k({', '.join(names)}) ON {joined}",
        [list(column) for column in zip(*(row[:width] for row in rows), strict=True)],
    ).fetchall()
    held = {tuple(row[:width]): tuple(row) for row in found}
    return report.compare([(tuple(row[:width]), tuple(row)) for row in rows], held)


def copy_records(
    home: Home, config: Config, memory: sqlite3.Connection, state: sqlite3.Connection | None,
    target: psycopg.Connection, done: Copy,
) -> dict[str, dict[str, int]]:  # fmt: skip
    """Put the records of :data:`RECORD_KINDS` back into the database; per kind, how
    many the store has, were copied, were there already, and conflict."""
    from soloqueue_mem.ops.dump_file import dump_text
    from soloqueue_mem.ops.export import Sources, local_records
    from soloqueue_mem.ops.import_dump import Targets, import_dump

    sources = Sources(memory, None, state)

    def lines() -> Any:
        records = chain([header(None, None, False)], local_records(sources, RECORD_KINDS))
        return (line.encode("utf-8") for line in dump_text(records))

    targets = Targets(home, config, None, None, None, database=target)  # type: ignore[arg-type]
    imported = import_dump(lines, lambda with_graph: targets)
    counts: dict[str, dict[str, int]] = {}
    for kind in RECORD_KINDS:
        copied = imported["added"].get(kind, 0)
        existing = imported["existing"].get(kind, 0)
        conflicts = [c for c in imported["conflicts"] if c["kind"] == kind]
        counts[kind] = {
            "source": copied + existing + len(conflicts) + imported["skipped"].get(kind, 0),
            "copied": copied,
            "existing": existing,
            "conflicts": len(conflicts),
        }
        done.conflict(kind, [c["key"] for c in conflicts])
    return counts
