"""``migrate --to``, after memory.db's and graph.db's tables: the rest of a SQLite store.

state.db's extraction state — the turns ``log`` extracted (``log_extractions``) and the
model's retry queue (``extraction_queue``) — has the same columns on both back ends: its
rows are copied keyed by their turn, and read back and compared as the other tables
are, so a session extracted on log is not extracted again from the database.

The scratchpads, working memory, attachment rows (their blobs stay in this host's
CAS, where they are), kv, session variables and embedding vectors go
through the dump's records (:mod:`soloqueue_mem.ops.import_dump`, which names a turn's
vector by its session and index, not by this store's row id): each record is
``copied``, ``existing`` (the database holds it the same) or a conflict (held
differently, left as it is). Both ways leave what is there alone, so a re-run is a no-op.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from soloqueue_mem import jsonio
from soloqueue_mem.config import Config
from soloqueue_mem.home import Home
from soloqueue_mem.ops.dump_format import header

if TYPE_CHECKING:
    import psycopg

    from soloqueue_mem.pg.copy_sqlite import Copy, TableReport

_TURN = ("group_id", "agent_id", "session_id", "turn_index")  # both tables' unique key
EXTRACTION_TABLES = {
    "log_extractions": (*_TURN, "reserved_at", "extracted_at", "memories"),
    "extraction_queue": (
        *_TURN, "role", "content", "tool_calls", "tool_results", "retry_count",
        "max_retries", "status", "created_at", "last_attempted_at", "next_attempt_at", "error",
    ),
}  # fmt: skip
RECORD_KINDS = (
    "scratchpad",
    "working",
    "attachment",
    "kv",
    "session_state",
    "embedding",
    "embedded_item",
)


def copy_extraction_state(
    state: sqlite3.Connection, target: psycopg.Connection, done: Copy, batch_rows: int
) -> None:
    """Copy state.db's two extraction tables (reported under ``tables``)."""
    from soloqueue_mem.pg.copy_sqlite import TableReport, batches

    for table, columns in EXTRACTION_TABLES.items():
        report = done.tables[table] = TableReport()
        listed = ", ".join(columns)
        sql = f"SELECT {listed} FROM {table} ORDER BY {', '.join(_TURN)}"  # noqa: S608
        for rows in batches(state, sql, batch_rows):
            with target.transaction():
                done.conflict(table, _copy_rows(target, table, listed, rows, report))


def _pairs(rows: list[tuple[Any, ...]]) -> list[tuple[tuple[Any, ...], tuple[Any, ...]]]:
    return [(tuple(row[: len(_TURN)]), tuple(row)) for row in rows]


def _copy_rows(
    conn: psycopg.Connection, table: str, listed: str, rows: list[tuple[Any, ...]],
    report: TableReport,
) -> list[Any]:  # fmt: skip
    """Insert the rows the database lacks; the keys it holds differently."""
    marks = ", ".join(["%s"] * len(rows[0]))
    with conn.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {table} ({listed}) VALUES ({marks})"  # noqa: S608
            f" ON CONFLICT ({', '.join(_TURN)}) DO NOTHING",
            rows,
        )
        copied = cursor.rowcount
    report.source += len(rows)
    report.copied += copied
    report.existing += len(rows) - copied
    keys = list(zip(*(row[: len(_TURN)] for row in rows), strict=True))
    found = conn.execute(
        f"SELECT {listed} FROM {table} t"  # noqa: S608
        " JOIN unnest(%s::text[], %s::text[], %s::text[], %s::int[]) AS k(g, a, s, i)"
        " ON t.group_id = k.g AND t.agent_id = k.a AND t.session_id = k.s"
        " AND t.turn_index = k.i",
        [list(column) for column in keys],
    ).fetchall()
    held = {tuple(row[: len(_TURN)]): tuple(row) for row in found}
    return report.compare(_pairs(rows), held)


def copy_records(
    home: Home, config: Config, memory: sqlite3.Connection, state: sqlite3.Connection | None,
    target: psycopg.Connection, done: Copy,
) -> dict[str, dict[str, int]]:  # fmt: skip
    """Put the records of :data:`RECORD_KINDS` back into the database; per kind, how
    many the store has, were copied, were there already, and conflict."""
    from soloqueue_mem.ops.export import Sources, local_records
    from soloqueue_mem.ops.import_dump import Targets, import_dump

    sources = Sources(memory, None, state)

    def lines() -> Any:
        yield jsonio.dumps_compact(header(None, None, False)).encode()
        for fields in local_records(sources, RECORD_KINDS):
            yield jsonio.dumps_compact(fields).encode()

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
