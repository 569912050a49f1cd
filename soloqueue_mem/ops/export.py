"""``export``: everything in the store that is not derived, as dump records.

What is exported: artifact rows (with their blobs inline, base64, under
``with_blobs``), each session's JSONL records as logged (with whether each turn was
extracted and into which episode, and when the session ended), memories with their
whole history (superseded, archived and expired ones), episodes, scratchpads,
working-memory entries, attachments, kv entries, session variables, and the authored
identity files (``SOUL.md``, ``AGENT.md``) of a whole-store export, the vectors of the
dense channel and which item has which (costly to rebuild: they need the model and
minutes), and the graph memory (nodes with their out-links, focus lists, queued
tasks). What is not: anything rebuilt cheaply from those (the turn index and every FTS
index, token caches, the graph's keyword index, ``identity/MEMORY.md`` and
``USER.md``, the extraction queue).

The order is fixed (by table, then by insertion or key), so exporting a store, importing
the dump into an empty one and exporting that gives the same bytes.

On the PostgreSQL back end (``Sources.database``) the sessions, turns and memories
come from the database (:mod:`soloqueue_mem.storage.postgres.dump`), and so does the graph memory
(:mod:`soloqueue_mem.storage.postgres.graph`); the artifacts and the identity files from this
host's disk, where they live there too.
"""

from __future__ import annotations

import base64
import sqlite3
from collections.abc import Callable, Collection, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from soloqueue_mem.artifacts import cas, catalog
from soloqueue_mem.context import identity
from soloqueue_mem.graph import dump as graph_dump
from soloqueue_mem.home import Home
from soloqueue_mem.ops.dump_format import header, record, session_records
from soloqueue_mem.ops.table_records import table_records, vector_records
from soloqueue_mem.sessions import turns
from soloqueue_mem.sessions.logfile import read_lines
from soloqueue_mem.sessions.reader import session_files
from soloqueue_mem.state import values

if TYPE_CHECKING:
    from soloqueue_mem.graph.db import GraphDb

GRAPH_KINDS = {
    graph_dump.NodeRecord: "graph_node",
    graph_dump.FocusRecord: "graph_focus",
    graph_dump.TaskRecord: "graph_task",
}


class Scope(NamedTuple):
    group: str | None = None
    agent: str | None = None

    def holds(self, group: str | None, agent: str | None = None) -> bool:
        """Whether a row of ``group``/``agent`` (None: not scoped that way) is in scope."""
        return (self.group is None or group == self.group) and (
            self.agent is None or agent is None or agent == self.agent
        )


class Sources(NamedTuple):
    """The open databases to export from (None when the file does not exist)."""

    memory: sqlite3.Connection | None
    artifacts: sqlite3.Connection | None
    state: sqlite3.Connection | None
    graph: GraphDb | None = None  # graph.db, or the database's graph tables
    database: Any = None  # a psycopg connection: the PostgreSQL back end's tables


def export(
    home: Home, sources: Sources, scope: Scope, with_blobs: bool
) -> Iterator[dict[str, Any]]:
    """The dump's records, header first, streamed."""
    yield header(scope.group, scope.agent, with_blobs)
    if sources.artifacts is not None:
        yield from _artifacts(home, sources.artifacts, scope, with_blobs)
    if sources.database is not None:
        from soloqueue_mem.storage.postgres import dump as pg_dump

        yield from pg_dump.records(home, sources.database, scope)
    elif sources.memory is not None:
        yield from _sessions(home, sources.memory, scope)
        yield from _memory_rows(sources.memory, scope)
        yield from vector_records(sources.memory, scope)
    if scope == Scope():  # the identity is the whole store's, not a group's
        for name, text in identity.authored(home.root):
            yield record("identity", {"name": name, "content": text})
    yield from _value_records(sources, scope)
    if sources.graph is not None:
        for row in graph_dump.every(sources.graph):
            if scope.holds(row.group, row.agent):
                yield record(GRAPH_KINDS[type(row)], row)


def local_records(sources: Sources, kinds: Collection[str]) -> Iterator[dict[str, Any]]:
    """The whole SQLite store's records of ``kinds``, among those of memory.db and
    state.db other than sessions and turns (``migrate --to`` copies them this way)."""
    streams: list[Iterator[dict[str, Any]]] = []
    if sources.memory is not None:
        streams += [_memory_rows(sources.memory, Scope()), vector_records(sources.memory, Scope())]
    streams.append(_value_records(sources, Scope()))
    for stream in streams:
        yield from (fields for fields in stream if fields["kind"] in kinds)


def _value_records(sources: Sources, scope: Scope) -> Iterator[dict[str, Any]]:
    every = _values_of(sources)
    if every is None:
        return
    for kind, table in (("kv", "kv_store"), ("session_state", "session_state")):
        for entry in every(table):
            if scope.holds(entry.scope[0], entry.scope[1]):
                names = ("group", "agent", "session")[: len(entry.scope)]
                fields = dict(zip(names, entry.scope, strict=True))
                yield record(
                    kind,
                    {**fields, "key": entry.key, "value": entry.value,
                     "updated_at": entry.updated_at},
                )  # fmt: skip


def _values_of(sources: Sources) -> Callable[[str], list[values.Entry]] | None:
    """Every entry of a table of values: state.db's, or the database's."""
    conn = sources.database if sources.database is not None else sources.state
    if conn is None:
        return None
    return lambda table: values.every(conn, table)


def _artifacts(
    home: Home, conn: sqlite3.Connection, scope: Scope, with_blobs: bool
) -> Iterator[dict[str, Any]]:
    sent: set[str] = set()
    for artifact in catalog.all_artifacts(conn):
        if not scope.holds(artifact.group):
            continue
        if with_blobs and artifact.content_hash not in sent:
            data = b"".join(cas.read_verified(home, artifact.path, artifact.content_hash))
            sent.add(artifact.content_hash)
            yield record(
                "blob",
                {
                    "sha256": artifact.content_hash,
                    "size": len(data),
                    "data": base64.b64encode(data).decode("ascii"),
                },
            )
        yield record("artifact", artifact)


def _sessions(home: Home, conn: sqlite3.Connection, scope: Scope) -> Iterator[dict[str, Any]]:
    for key, path in sorted(session_files(home, scope.group, scope.agent)):
        row = turns.get_session(conn, key)
        states = turns.turn_states(conn, key)
        yield from session_records(key, row.ended_at if row else None, _logged(path, states))


def _logged(
    path: str, states: dict[int, tuple[bool, str | None]]
) -> Iterator[tuple[dict[str, Any], tuple[bool, str | None]]]:
    """The session log's records, each with its turn's extraction state."""
    for line in read_lines(path):
        if line.record is None:
            continue  # a torn or damaged line: `verify` reports it; it is not data
        index = line.record.get("turn_index")
        state = states.get(index, (False, None)) if isinstance(index, int) else (False, None)
        yield line.record, state


def _memory_rows(conn: sqlite3.Connection, scope: Scope) -> Iterator[dict[str, Any]]:
    return table_records(conn, scope)
