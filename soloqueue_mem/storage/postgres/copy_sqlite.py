"""``migrate --to``: copy a SQLite store (memory.db) into PostgreSQL, resumably.

Sessions, turns (with their extraction state), memories (every version: superseded,
archived and expired ones too) and episodes are copied in batches, each batch one
transaction that inserts what the database lacks (``ON CONFLICT DO NOTHING``), so a
copy cut short is continued by running it again, and a finished one is a no-op. A
turn's session row is locked and its counters advanced in the batch's transaction, as
``log`` does, so hosts may keep writing.

Every batch is then read back from the database and compared with the source, column
by column: a row the database holds differently (another host wrote a different turn
at that index, a memory id taken) is a conflict, left as it is. The report gives per
table the source count, what was copied, what was there already, the conflicts, and a
SHA-256 over the source rows and one over the rows read back: equal when the copy is
whole. Turn ids are the database's own; ``token_estimate`` is copied, not compared.
Then the tables both back ends hold alike follow, graph.db's (ids kept) and state.db's
extraction state among them, and the store's other records
(:mod:`soloqueue_mem.storage.postgres.copy_rest`).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from soloqueue_mem import jsonio
from soloqueue_mem.errors import NotFound
from soloqueue_mem.faults import fault
from soloqueue_mem.memory.store import _COLUMNS as MEMORY_COLUMNS
from soloqueue_mem.memory.store import DERIVED
from soloqueue_mem.memory.store import _memory as memory_from_row
from soloqueue_mem.sessions.events import SessionKey
from soloqueue_mem.sessions.turns import stored_body
from soloqueue_mem.storage.postgres import copy_rest, episodes
from soloqueue_mem.storage.postgres.dump import insert_turns
from soloqueue_mem.storage.postgres.memories import _search_text as memory_search_text
from soloqueue_mem.storage.postgres.text import document
from soloqueue_mem.storage.postgres.turns import advance_session

if TYPE_CHECKING:
    import psycopg

    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home

BATCH_ROWS = 2000
MAX_LISTED_CONFLICTS = 100
_TABLES = ("sessions", "turns", "memories", "episodes")
_SESSION_KEY = ("group_id", "agent_id", "session_id")
# compared between source and database (and hashed), in this order
_TURN_COLUMNS = (
    *_SESSION_KEY,
    "turn_index",
    "role",
    "content",
    "tool_calls",
    "tool_results",
    "timestamp",
    "event_id",
    "metadata_json",
)
_MEMORY_COLUMNS = MEMORY_COLUMNS.split(", ")
_MEMORY_TYPES = ["text"] * 11 + ["float8", "float8", "int4", "float8"] + ["text"] * 6 + ["bool"]


@dataclass
class TableReport:
    source: int = 0
    copied: int = 0
    existing: int = 0
    conflicts: int = 0
    _source_hash: Any = field(default_factory=hashlib.sha256)
    _target_hash: Any = field(default_factory=hashlib.sha256)

    def compare(
        self, source: list[tuple[Any, ...]], target: dict[Any, tuple[Any, ...]]
    ) -> list[Any]:
        """Hash and compare a batch of (key, row) pairs; the keys
        the database holds differently or not at all."""
        bad = []
        for key, row in source:
            found = target.get(key)
            self._source_hash.update(_canonical(row))
            self._target_hash.update(_canonical(found))
            if found != row:
                bad.append(key)
        self.conflicts += len(bad)
        return bad

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "copied": self.copied,
            "existing": self.existing,
            "conflicts": self.conflicts,
            "source_sha256": self._source_hash.hexdigest(),
            "target_sha256": self._target_hash.hexdigest(),
        }


def _canonical(row: tuple[Any, ...] | None) -> bytes:
    return (jsonio.dumps_compact(row) + "\n").encode()


@dataclass
class Copy:
    """The copy's progress: per-table reports and the first conflicts found."""

    tables: dict[str, TableReport] = field(
        default_factory=lambda: {name: TableReport() for name in _TABLES}
    )
    conflicts: list[dict[str, Any]] = field(default_factory=list)

    def conflict(self, table: str, keys: list[Any]) -> None:
        for key in keys[: MAX_LISTED_CONFLICTS - len(self.conflicts)]:
            self.conflicts.append(
                {"table": table, "key": list(key) if isinstance(key, tuple) else key}
            )

    def tally(
        self,
        table: str,
        copied: int,
        source: list[tuple[Any, tuple[Any, ...]]],
        target: dict[Any, tuple[Any, ...]],
    ) -> None:
        """Count a batch of ``source`` (key, row) pairs, ``copied`` of them inserted,
        each compared with the row the database holds (``target``, by key)."""
        report = self.tables[table]
        report.source += len(source)
        report.copied += copied
        bad = report.compare(source, target)
        report.existing += len(source) - copied - len(bad)
        self.conflict(table, bad)

    def report(self) -> dict[str, Any]:
        tables = {name: table.as_dict() for name, table in self.tables.items()}
        verified = not self.conflicts and all(
            t["conflicts"] == 0 and t["source_sha256"] == t["target_sha256"]
            for t in tables.values()
        )
        return {"tables": tables, "verified": verified, "conflicts": self.conflicts}


def copy_tables(
    source: sqlite3.Connection,
    target: psycopg.Connection,
    batch_rows: int = BATCH_ROWS,
    progress: Callable[[str, int], None] | None = None,
    graph: sqlite3.Connection | None = None,
    state: sqlite3.Connection | None = None,
) -> Copy:
    """Copy ``source`` (memory.db), and ``graph`` (graph.db) and ``state`` (state.db)
    when given, into ``target`` (migrated); its ``report()`` is the report (module doc)."""
    done = Copy()
    steps: list[tuple[sqlite3.Connection, str, str, Callable[..., None]]] = [
        (source, name, _SOURCE_SQL[name], copy_batch)
        for name, copy_batch in (
            ("sessions", _copy_sessions),
            ("turns", _copy_turns),
            ("memories", _copy_memories),
            ("episodes", _copy_episodes),
        )
    ]
    files = {"memory": source, "graph": graph, "state": state}
    for name, keyed in copy_rest.KEYED_TABLES.items():
        conn = files[keyed.source]
        if conn is not None:
            done.tables[name] = TableReport()
            steps.append(
                (conn, name, keyed.source_sql(name), partial(copy_rest.copy_keyed, table=name))
            )
    for conn, name, sql, copy_batch in steps:
        for rows in batches(conn, sql, batch_rows):
            with target.transaction():
                copy_batch(target, rows=rows, done=done)
            fault("migrate.after_batch")
            if progress is not None:
                progress(name, len(rows))
    if graph is not None:
        copy_rest.raise_sequences(graph, target)
    return done


def migrate_store(home: Home, config: Config, url: str) -> dict[str, Any]:
    """``migrate --to URL``: copy this SQLite store's tables, then its other records
    (:mod:`soloqueue_mem.storage.postgres.copy_rest`); the report (see the README).
    NotFound when there is no SQLite store."""
    from soloqueue_mem.storage.postgres.connect import connect
    from soloqueue_mem.storage.sqlite.stores import open_graph, open_memory, open_state

    with ExitStack() as stack:
        source = open_memory(home, config, create=False)
        if source is None:
            raise NotFound(f"no SQLite store to migrate in {home.root}")
        stack.callback(source.close)
        graph, state = (opener(home, config, create=False) for opener in (open_graph, open_state))
        for conn in (graph, state):
            if conn is not None:
                stack.callback(conn.close)
        target = connect(url)
        stack.callback(target.close)
        done = copy_tables(source, target, graph=graph, state=state)
        records = copy_rest.copy_records(home, config, source, state, target, done)
        return {**done.report(), "records": records}


_SOURCE_SQL = {
    "sessions": "SELECT group_id, agent_id, session_id, started_at, last_turn_at, ended_at"
    " FROM sessions ORDER BY group_id, agent_id, session_id",
    "turns": f"SELECT {', '.join(_TURN_COLUMNS)}, token_estimate, extracted, episode_id"  # noqa: S608
    " FROM conversation_turns"
    " ORDER BY group_id, agent_id, session_id, turn_index",
    "memories": f"SELECT {', '.join(_MEMORY_COLUMNS)}, {DERIVED} FROM memories"  # noqa: S608
    " ORDER BY rowid",
    "episodes": f"SELECT {episodes.COLUMNS} FROM episodes ORDER BY rowid",  # noqa: S608
}


def batches(source: sqlite3.Connection, sql: str, size: int) -> Iterator[list[tuple[Any, ...]]]:
    cursor = source.execute(sql)
    while rows := cursor.fetchmany(size):
        yield rows


def _copy_sessions(conn: psycopg.Connection, rows: list[tuple[Any, ...]], done: Copy) -> None:
    """Sessions' rows; their counters are advanced as their turns arrive."""
    columns = list(zip(*rows, strict=True))
    inserted = conn.execute(
        "INSERT INTO sessions (group_id, agent_id, session_id, started_at, last_turn_at,"
        " ended_at) SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[],"
        " %s::text[], %s::text[])"
        " ON CONFLICT (group_id, agent_id, session_id)"
        " DO UPDATE SET ended_at = COALESCE(sessions.ended_at, EXCLUDED.ended_at)"
        " RETURNING (xmax = 0)",
        [list(c) for c in columns],
    ).fetchall()
    found = conn.execute(
        "SELECT s.group_id, s.agent_id, s.session_id FROM sessions s"
        " JOIN unnest(%s::text[], %s::text[], %s::text[]) AS k(g, a, s2)"
        " ON s.group_id = k.g AND s.agent_id = k.a AND s.session_id = k.s2",
        [list(c) for c in columns[:3]],
    ).fetchall()
    target = {tuple(row): tuple(row) for row in found}
    keys = [tuple(row[:3]) for row in rows]
    done.tally("sessions", sum(1 for (new,) in inserted if new), [(k, k) for k in keys], target)


def _copy_turns(conn: psycopg.Connection, rows: list[tuple[Any, ...]], done: Copy) -> None:
    """Insert the turns the database lacks, advance their sessions, compare them all."""
    width = len(_TURN_COLUMNS)
    keys = sorted({tuple(row[:3]) for row in rows})
    for key in keys:  # sorted, like log: writers never deadlock
        conn.execute(
            "SELECT 1 FROM sessions WHERE group_id = %s AND agent_id = %s AND session_id = %s"
            " FOR UPDATE",
            key,
        )
    inserted = insert_turns(conn, rows, [document(stored_body(*row[4:8])) for row in rows])
    columns = [list(c) for c in zip(*rows, strict=True)]
    _advance_sessions(conn, inserted)
    found = conn.execute(
        f"SELECT {', '.join('q.' + c for c in _TURN_COLUMNS)} FROM quarantine_logs q"  # noqa: S608
        " JOIN unnest(%s::text[], %s::text[], %s::text[], %s::int4[]) AS k(g, a, s, i)"
        " ON q.group_id = k.g AND q.agent_id = k.a AND q.session_id = k.s AND q.turn_index = k.i",
        columns[:4],
    ).fetchall()
    target = {tuple(row[:4]): tuple(row) for row in found}
    source = [(tuple(row[:4]), tuple(row[:width])) for row in rows]
    done.tally("turns", len(inserted), source, target)


def _advance_sessions(conn: psycopg.Connection, inserted: list[tuple[Any, ...]]) -> None:
    counts: dict[tuple[str, str, str], list[Any]] = {}
    for group, agent, session, index, stamp in inserted:
        seen = counts.setdefault((group, agent, session), [0, index, stamp, stamp])
        seen[0] += 1
        seen[1] = max(seen[1], index)
        seen[2] = min(seen[2], stamp)
        seen[3] = max(seen[3], stamp)
    for key, (count, top, first, last) in sorted(counts.items()):
        advance_session(conn, SessionKey(*key), count, top, first, last)


def _copy_memories(conn: psycopg.Connection, rows: list[tuple[Any, ...]], done: Copy) -> None:
    """Insert the memories the database lacks (by id), compare them all."""
    width = len(_MEMORY_COLUMNS)
    derived = len(DERIVED.split(", "))
    normal = [(*row[: width - 1], bool(row[width - 1]), *row[width:]) for row in rows]
    searches = [memory_search_text(memory_from_row(row[:width])) for row in normal]
    columns = [list(c) for c in zip(*normal, strict=True)]
    names = ", ".join(_MEMORY_COLUMNS)
    casts = ", ".join(f"%s::{kind}[]" for kind in [*_MEMORY_TYPES, *["text"] * (derived + 1)])
    aliases = ", ".join(f"c{n}" for n in range(width + derived + 1))
    inserted = conn.execute(
        f"INSERT INTO memories ({names}, {DERIVED}, search)"  # noqa: S608 - constants
        f" SELECT {', '.join(f'c{n}' for n in range(width + derived))},"
        f" to_tsvector('simple', c{width + derived}) FROM unnest({casts}) AS u({aliases})"
        " ON CONFLICT (id) DO NOTHING RETURNING id",
        [*columns, searches],
    ).fetchall()
    found = conn.execute(
        f"SELECT {names} FROM memories WHERE id = ANY(%s)",  # noqa: S608 - constants
        (columns[0],),
    ).fetchall()
    target = {row[0]: tuple(row) for row in found}
    done.tally("memories", len(inserted), [(row[0], tuple(row[:width])) for row in normal], target)


def _copy_episodes(conn: psycopg.Connection, rows: list[tuple[Any, ...]], done: Copy) -> None:
    """Insert the episodes the database lacks (by id), compare them all."""
    copied = sum(episodes.copy_in(conn, row) for row in rows)
    target = episodes.read_back(conn, [row[0] for row in rows])
    done.tally("episodes", copied, [(row[0], tuple(row)) for row in rows], target)
