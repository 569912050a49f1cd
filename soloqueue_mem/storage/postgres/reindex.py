"""The ``search`` columns rewritten in batches, each committed with its progress.

Every table with a ``search`` tsvector is read by key, ``BATCH`` rows at a time; each
row's tsvector is computed again from its text (:mod:`soloqueue_mem.storage.postgres.text`) and
written only where it differs. Two users:

- the schema's bigram step (the bigram lexemes; the stemming step likewise): the step itself only
  *schedules* the job (a ``reindex_progress`` row per non-empty table, up to the key
  that was last when it ran: later rows are written in the new form). :func:`resume`
  then does the batches, each one transaction that rewrites its rows and moves the
  table's marker, under a session advisory lock (one worker at a time; a killed
  worker's lock goes with its connection). Killed mid-way, the batch in flight rolls
  back and the next open continues after the last committed marker: no row is skipped
  and none is done twice. When every table is done the progress table is dropped, so
  a database with nothing pending pays nothing.
  While it runs, readers see each row in one form or the other: rows up to the marker
  in the bigram form, the rest as they were. Words in other scripts are the same in
  both forms; a CJK word is found only in rows already re-indexed.
- ``verify`` (:func:`stale`) and ``verify --repair`` (:func:`rewrite`): rows whose
  stored tsvector is not the one their text gives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from soloqueue_mem import faults
from soloqueue_mem.memory.attachments import COLUMNS as ATTACHMENT_COLUMNS
from soloqueue_mem.memory.episodes import _episode as episode_from_row
from soloqueue_mem.memory.store import _memory as memory_from_row
from soloqueue_mem.sessions.turns import stored_body
from soloqueue_mem.storage.postgres.attachments import attachment_from_row
from soloqueue_mem.storage.postgres.attachments import search_text as attachment_search_text
from soloqueue_mem.storage.postgres.episodes import COLUMNS as EPISODE_COLUMNS
from soloqueue_mem.storage.postgres.episodes import search_text as episode_search_text
from soloqueue_mem.storage.postgres.memories import _COLUMNS as MEMORY_COLUMNS
from soloqueue_mem.storage.postgres.memories import _search_text as memory_search_text
from soloqueue_mem.storage.postgres.text import document

if TYPE_CHECKING:
    import psycopg

BATCH = 5_000
PROGRESS = "reindex_progress"
_LOCK = 0x5251_4958  # the re-index worker's session advisory lock


class Indexed(NamedTuple):
    """A table with a ``search`` column: its key, the columns its text is made of, and
    the text ``to_tsvector('simple', …)`` is given for such a row."""

    name: str
    key: str
    columns: str
    document: Callable[[tuple[Any, ...]], str]


TABLES = {
    table.name: table
    for table in (
        Indexed(
            "quarantine_logs",
            "id",
            "role, content, tool_calls, tool_results",
            lambda row: document(stored_body(*row)),
        ),
        Indexed(
            "memories", "seq", MEMORY_COLUMNS, lambda r: memory_search_text(memory_from_row(r))
        ),
        Indexed(
            "episodes", "seq", EPISODE_COLUMNS, lambda r: episode_search_text(episode_from_row(r))
        ),
        Indexed(
            "attachments",
            "seq",
            ATTACHMENT_COLUMNS,
            lambda r: attachment_search_text(attachment_from_row(r)),
        ),
    )
}
BIGRAM_TABLES = ("quarantine_logs", "memories")  # the tables schema step 3 re-indexes


# --- the scheduled job -------------------------------------------------------------


def schedule(conn: psycopg.Connection, tables: tuple[str, ...] = BIGRAM_TABLES) -> None:
    """Note a re-index of ``tables`` up to their current last key (inside the caller's
    transaction); empty tables need none, and nothing at all creates no table."""
    ends = {}
    for name in tables:
        table = TABLES[name]
        row = conn.execute(f"SELECT max({table.key}) FROM {name}").fetchone()  # noqa: S608
        if row is not None and row[0] is not None:
            ends[name] = int(row[0])
    if not ends:
        return
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {PROGRESS} (table_name TEXT PRIMARY KEY,"
        " last_key BIGINT NOT NULL DEFAULT 0, end_key BIGINT NOT NULL,"
        " checked BIGINT NOT NULL DEFAULT 0, rewritten BIGINT NOT NULL DEFAULT 0)"
    )
    for name, end in ends.items():
        conn.execute(
            f"INSERT INTO {PROGRESS} (table_name, end_key) VALUES (%s, %s)"  # noqa: S608
            " ON CONFLICT (table_name) DO UPDATE SET end_key = GREATEST("
            f"{PROGRESS}.end_key, EXCLUDED.end_key)",
            (name, end),
        )


def pending(conn: psycopg.Connection) -> dict[str, dict[str, int]]:
    """The scheduled job's progress per table (empty: nothing pending, or the job
    finished and dropped its table meanwhile)."""
    from psycopg.errors import UndefinedTable

    row = conn.execute("SELECT to_regclass(%s)", (PROGRESS,)).fetchone()
    if row is None or row[0] is None:
        return {}
    try:
        rows = conn.execute(
            f"SELECT table_name, last_key, end_key, checked, rewritten FROM {PROGRESS}"  # noqa: S608
            " ORDER BY table_name"
        ).fetchall()
    except UndefinedTable:
        return {}
    return {
        name: {"last_key": last, "end_key": end, "checked": checked, "rewritten": rewritten}
        for name, last, end, checked, rewritten in rows
    }


def resume(conn: psycopg.Connection) -> dict[str, dict[str, int]] | None:
    """Do what is left of the scheduled job (``conn`` in autocommit); the rows checked
    and rewritten by this call per table, or None when another process holds the job."""
    row = conn.execute("SELECT pg_try_advisory_lock(%s)", (_LOCK,)).fetchone()
    if row is None or not row[0]:
        return None
    try:
        done: dict[str, dict[str, int]] = {}
        for name, progress in pending(conn).items():
            done[name] = _continue(conn, TABLES[name], progress["last_key"], progress["end_key"])
        if done:
            conn.execute(f"DROP TABLE IF EXISTS {PROGRESS}")
        return done
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK,))


def _continue(conn: psycopg.Connection, table: Indexed, last: int, end: int) -> dict[str, int]:
    checked = rewritten = 0
    while last < end:
        with conn.transaction():
            keys, docs = _batch(conn, table, last, end)
            last = keys[-1] if keys else end
            changed = _rewrite(conn, table, keys, docs) if keys else 0
            faults.fault("reindex.mid_batch")
            conn.execute(
                f"UPDATE {PROGRESS} SET last_key = %s, checked = checked + %s,"  # noqa: S608
                " rewritten = rewritten + %s WHERE table_name = %s",
                (last, len(keys), changed, table.name),
            )
        faults.fault("reindex.after_batch")
        checked += len(keys)
        rewritten += changed
    return {"checked": checked, "rewritten": rewritten}


# --- verify ------------------------------------------------------------------------


def batches(conn: psycopg.Connection, table: Indexed) -> Iterator[tuple[list[int], list[str]]]:
    """Every row's key and document, ``BATCH`` rows at a time, in key order."""
    last = 0
    while True:
        keys, docs = _batch(conn, table, last, None)
        if not keys:
            return
        yield keys, docs
        last = keys[-1]


def stale(conn: psycopg.Connection, table: Indexed, keys: list[int], docs: list[str]) -> list[int]:
    """Which of these rows hold a tsvector other than their text's."""
    rows = conn.execute(
        f"SELECT u.k FROM unnest(%s::bigint[], %s::text[]) AS u(k, doc)"  # noqa: S608
        f" JOIN {table.name} AS t ON t.{table.key} = u.k"
        " WHERE t.search IS DISTINCT FROM to_tsvector('simple', u.doc) ORDER BY u.k",
        (keys, docs),
    ).fetchall()
    return [row[0] for row in rows]


def rewrite(conn: psycopg.Connection, table: Indexed) -> dict[str, int]:
    """Rewrite every stale tsvector of ``table``, a committed transaction per batch."""
    checked = rewritten = 0
    for keys, docs in batches(conn, table):
        with conn.transaction():
            rewritten += _rewrite(conn, table, keys, docs)
        checked += len(keys)
    return {"checked": checked, "rewritten": rewritten}


# --- shared ------------------------------------------------------------------------


def _batch(
    conn: psycopg.Connection, table: Indexed, after: int, upto: int | None
) -> tuple[list[int], list[str]]:
    bound = "" if upto is None else f" AND {table.key} <= %(upto)s"
    rows = conn.execute(
        f"SELECT {table.key}, {table.columns} FROM {table.name}"  # noqa: S608 - constants
        f" WHERE {table.key} > %(after)s{bound} ORDER BY {table.key} LIMIT %(limit)s",
        {"after": after, "upto": upto, "limit": BATCH},
    ).fetchall()
    return [row[0] for row in rows], [table.document(row[1:]) for row in rows]


def _rewrite(conn: psycopg.Connection, table: Indexed, keys: list[int], docs: list[str]) -> int:
    """Write the rows whose tsvector differs from their document's; how many."""
    cursor = conn.execute(
        f"UPDATE {table.name} SET search = to_tsvector('simple', u.doc)"  # noqa: S608
        f" FROM unnest(%s::bigint[], %s::text[]) AS u(k, doc)"
        f" WHERE {table.name}.{table.key} = u.k"
        f" AND {table.name}.search IS DISTINCT FROM to_tsvector('simple', u.doc)",
        (keys, docs),
    )
    return cursor.rowcount
