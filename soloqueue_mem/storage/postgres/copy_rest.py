"""``migrate --to``, after memory.db's own tables: the rest of a SQLite store.

Tables with the same columns on both back ends (:data:`KEYED_TABLES`) are copied row
for row by one routine, keyed, in batches, resumably (rows the database lacks are
inserted, ``ON CONFLICT DO NOTHING``) and read back and compared as the other tables
are (:mod:`soloqueue_mem.storage.postgres.copy_sqlite`): graph.db's nodes, links, focus
lists and queued tasks with their ids, state.db's extraction state — the turns ``log``
extracted (``log_extractions``, so the database never extracts them again) and the
model's retry queue (``extraction_queue``) — and memory.db's ``remember_events`` (the
idempotency keys of ``remember --event-id``, so a retry after the move is a duplicate).
The graph's id sequences are then moved past every id graph.db gave out (its
``sqlite_sequence``) and every id a link names, so a deleted node's id is never given
to a new node: a link left dangling stays dangling. graph.db's keyword index is not
copied (the database keeps none).

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
from soloqueue_mem.db.adapter import Db
from soloqueue_mem.home import Home
from soloqueue_mem.ops.dump_format import header

if TYPE_CHECKING:
    import psycopg

    from soloqueue_mem.storage.postgres.copy_sqlite import Copy


class Keyed(NamedTuple):
    """A table copied row for row: the same columns on both back ends."""

    source: str  # the SQLite file: "graph", "state" or "memory"
    columns: tuple[tuple[str, str], ...]  # (name, PostgreSQL type), the key's first
    width: int  # how many columns lead the key

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.columns]

    def source_sql(self, table: str) -> str:
        """The query reading ``table`` from its SQLite file, in key order."""
        names = self.names
        return f"SELECT {', '.join(names)} FROM {table} ORDER BY {', '.join(names[: self.width])}"  # noqa: S608


_TEXT = "text"
_TURN = (("group_id", _TEXT), ("agent_id", _TEXT), ("session_id", _TEXT), ("turn_index", "int4"))
# in the report's order: graph.db's tables, then state.db's, then memory.db's
KEYED_TABLES = {
    "graph_nodes": Keyed("graph", (
        ("node_id", "int8"), ("group_id", _TEXT), ("agent_id", _TEXT), ("content", _TEXT),
        ("phrase", _TEXT), ("keywords_json", _TEXT), ("created_at", _TEXT), ("scan_count", "int4"),
    ), 1),
    "graph_links": Keyed("graph", (
        ("from_id", "int8"), ("to_id", "int8"), ("strength", "float8"), ("relation", _TEXT),
    ), 2),
    "graph_focus": Keyed("graph", (
        ("group_id", _TEXT), ("agent_id", _TEXT), ("node_id", "int8"), ("seq", "int8"),
    ), 3),
    "graph_tasks": Keyed("graph", (
        ("task_id", "int8"), ("group_id", _TEXT), ("agent_id", _TEXT), ("messages_json", _TEXT),
        ("enqueued_at", _TEXT), ("attempts", "int4"),
    ), 1),
    "log_extractions": Keyed("state", (
        *_TURN, ("reserved_at", _TEXT), ("extracted_at", _TEXT), ("memories", "int4"),
    ), 4),
    "extraction_queue": Keyed("state", (
        *_TURN, ("role", _TEXT), ("content", _TEXT), ("tool_calls", _TEXT),
        ("tool_results", _TEXT), ("retry_count", "int4"), ("max_retries", "int4"),
        ("status", _TEXT), ("created_at", _TEXT), ("last_attempted_at", _TEXT),
        ("next_attempt_at", _TEXT), ("error", _TEXT),
    ), 4),
    "remember_events": Keyed("memory", (
        ("group_id", _TEXT), ("agent_id", _TEXT), ("event_id", _TEXT), ("memory_id", _TEXT),
        ("action", _TEXT), ("created_at", _TEXT),
    ), 3),
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


def copy_keyed(
    conn: psycopg.Connection, table: str, rows: list[tuple[Any, ...]], done: Copy
) -> None:
    """Insert the rows of ``table`` (one of :data:`KEYED_TABLES`) the database lacks,
    read them all back and compare them."""
    keyed = KEYED_TABLES[table]
    names, width = ", ".join(keyed.names), keyed.width
    casts = [f"%s::{kind}[]" for _, kind in keyed.columns]
    values = [list(column) for column in zip(*rows, strict=True)]
    inserted = conn.execute(
        f"INSERT INTO {table} ({names}) SELECT * FROM unnest({', '.join(casts)})"  # noqa: S608
        " ON CONFLICT DO NOTHING RETURNING 1",
        values,
    ).fetchall()
    keys = ", ".join(keyed.names[:width])
    found = conn.execute(
        f"SELECT {names} FROM {table} WHERE ({keys}) IN"  # noqa: S608 - constants
        f" (SELECT * FROM unnest({', '.join(casts[:width])}))",
        values[:width],
    ).fetchall()
    target = {tuple(row[:width]): tuple(row) for row in found}
    done.tally(table, len(inserted), [(tuple(row[:width]), tuple(row)) for row in rows], target)


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
            "source": copied + existing + len(conflicts),
            "copied": copied,
            "existing": existing,
            "conflicts": len(conflicts),
        }
        done.conflict(kind, [c["key"] for c in conflicts])
    return counts
