#!/usr/bin/env python3
"""Benchmark the resumable bigram re-index on PostgreSQL (``storage/postgres/reindex.py``,
issue 14).

Builds a database as the previous version left it (schema version before the bigram
step; seeded mixed zh/en turns, default 100,000, ``--quick`` 20,000, and a tenth as
many memories, their CJK indexed a character a lexeme, the GIN indexes in place), and
two copies of it (``CREATE DATABASE … TEMPLATE``). On one it times the floor, the
previous step's algorithm: one transaction that drops the GIN indexes, rewrites every
row 5,000 at a time and builds the indexes again in bulk (fastest, but every other
process waits, and a kill restarts it from zero). On the other it times what opening
the database now does: the step schedules the job, then batches each committed with
their progress marker, only rows whose ``tsvector`` changes written, GIN indexes kept.
It also times a ``trace``-style query against the half-done database (what readers get
meanwhile), a second open (nothing pending: the cost left on every open), and
``verify`` of the database, its default and ``--full``.

Run: ``.venv/bin/python benchmarks/bench_pg_reindex.py [--quick] [--turns N]`` (the
venv needs ``soloqueue-mem[postgres]``).
"""

from __future__ import annotations

import argparse
import time

import _common as c

c.import_project()

OLD_FORM = """
    UPDATE {table} SET search = to_tsvector('simple', u.doc)
    FROM unnest(%s::bigint[], %s::text[]) AS u(k, doc) WHERE {table}.{key} = u.k
"""


def build(url: str, turns: int, memories: int) -> None:
    """The old database: every migration before the bigram step, rows in the old form."""
    import psycopg

    from soloqueue_mem.storage.postgres.schema import MIGRATIONS
    from soloqueue_mem.text.cjk import spaced_form

    before = next(n for n, step in enumerate(MIGRATIONS) if callable(step))
    gen = c.TextGen(seed=7)
    with psycopg.connect(url, autocommit=True) as conn:
        for step in MIGRATIONS[:before]:
            assert isinstance(step, str)  # every step before the first callable is SQL
            conn.execute(step)
        conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        conn.execute("INSERT INTO schema_version VALUES (%s)", (before,))
        texts = [gen.turn() for _ in range(turns)]
        for at in range(0, turns, 5_000):
            part = texts[at : at + 5_000]
            conn.execute(
                "INSERT INTO quarantine_logs (group_id, agent_id, session_id, turn_index, role,"
                " content, timestamp, search) SELECT 'default', 'default', 's' || (n / 1000),"
                " n %% 1000, 'user', t, '2026-01-01T00:00:00.000Z', to_tsvector('simple', d)"
                " FROM unnest(%s::int[], %s::text[], %s::text[]) AS u(n, t, d)",
                (list(range(at, at + len(part))), part, [spaced_form(t.lower()) for t in part]),
            )
        conn.execute(
            "INSERT INTO sessions (group_id, agent_id, session_id, started_at, last_turn_at,"
            " turn_count, next_turn_index) SELECT group_id, agent_id, session_id,"
            " min(timestamp), max(timestamp), count(*), max(turn_index) + 1"
            " FROM quarantine_logs GROUP BY group_id, agent_id, session_id"
        )
        notes = [gen.turn()[:160] for _ in range(memories)]
        conn.execute(
            "INSERT INTO memories (id, group_id, agent_id, type, priority, content, source,"
            " importance_score, confidence, decay_rate, created_at, updated_at, content_key,"
            " search) SELECT lpad(to_hex(n), 32, '0'), 'default', 'default', 'FACT',"
            " 'LONG_TERM', t, 'user', 0.5, 0.8, 0.01, '2026-01-01T00:00:00.000Z',"
            " '2026-01-01T00:00:00.000Z', 'k' || n, to_tsvector('simple', d)"
            " FROM unnest(%s::int[], %s::text[], %s::text[]) AS u(n, t, d)",
            (list(range(memories)), notes, [spaced_form(t.lower()) for t in notes]),
        )
        conn.execute("VACUUM ANALYZE")


def floor(url: str) -> float:
    """The previous step: one transaction, indexes dropped, every row rewritten."""
    import psycopg

    from soloqueue_mem.storage.postgres import reindex

    began = time.perf_counter()
    with psycopg.connect(url) as conn:  # one transaction, committed on exit
        conn.execute("SET LOCAL maintenance_work_mem = '256MB'")
        for name in reindex.BIGRAM_TABLES:
            conn.execute(f"DROP INDEX {name}_search")
        for name in reindex.BIGRAM_TABLES:
            table = reindex.TABLES[name]
            for keys, docs in reindex.batches(conn, table):
                conn.execute(OLD_FORM.format(table=name, key=table.key), (keys, docs))
        for name in reindex.BIGRAM_TABLES:
            conn.execute(f"CREATE INDEX {name}_search ON {name} USING GIN (search)")
    return time.perf_counter() - began


def resumable(url: str) -> tuple[float, float, float, dict]:
    """Opening the database now: seconds; a reader's query half-way; a second open."""
    import psycopg

    from soloqueue_mem.storage.postgres import reindex
    from soloqueue_mem.storage.postgres.connect import connect

    began = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        with conn.transaction():  # the schema step and the version, as migrate() does
            reindex.schedule(conn)
            conn.execute("UPDATE schema_version SET version = version + 1")
        progress = reindex.pending(conn)["quarantine_logs"]
        half = progress["end_key"] // 2
        reindex._continue(conn, reindex.TABLES["quarantine_logs"], 0, half)  # then a pause
        paused = time.perf_counter()
        reader = time.perf_counter()
        conn.execute(
            "SELECT id FROM quarantine_logs WHERE search @@ to_tsquery('simple', %s)"
            " ORDER BY id DESC LIMIT 10",
            ("'项目' <-> '目进' <-> '进度' | 'meeting'",),
        ).fetchall()
        reader = time.perf_counter() - reader
        resumed = time.perf_counter()
        done = reindex.resume(conn) or {}
        total = (paused - began) + (time.perf_counter() - resumed)
    again = time.perf_counter()
    connect(url).close()
    return total, reader, time.perf_counter() - again, done


def time_verify(url: str) -> tuple[float, float]:
    """``verify`` of the database alone (no local files): its default (the newest rows'
    tsvectors), and ``--full`` (every row's)."""
    import tempfile
    from pathlib import Path

    from soloqueue_mem.home import Home
    from soloqueue_mem.ops.verify import VerifyOptions
    from soloqueue_mem.storage.postgres.connect import connect
    from soloqueue_mem.storage.postgres.verify import verify_store

    home = Home(Path(tempfile.gettempdir()) / "bench-pg-reindex-no-home")
    conn = connect(url)
    try:
        seconds = []
        for full in (False, True):
            began = time.perf_counter()
            report = verify_store(home, conn, VerifyOptions(full=full), time.time())
            seconds.append(time.perf_counter() - began)
            assert report["exit_code"] == 0, report
    finally:
        conn.close()
    return seconds[0], seconds[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--turns", type=int)
    args = parser.parse_args()
    turns = args.turns or (20_000 if args.quick else 100_000)
    memories = turns // 10

    import psycopg

    from soloqueue_mem.storage.postgres.embedded import EmbeddedServer

    server = EmbeddedServer()
    admin = server.start()
    try:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute("CREATE DATABASE old")
        old = admin.replace("/postgres?", "/old?")
        began = time.perf_counter()
        build(old, turns, memories)
        c.note(
            f"built {turns:,} turns + {memories:,} memories in {time.perf_counter() - began:.0f} s"
        )
        with psycopg.connect(admin, autocommit=True) as conn:
            for name in ("a", "b"):
                conn.execute(f"CREATE DATABASE {name} TEMPLATE old")
        rows = turns + memories
        floor_s = floor(admin.replace("/postgres?", "/a?"))
        new_s, reader_s, open_s, done = resumable(admin.replace("/postgres?", "/b?"))
        quick_s, full_s = time_verify(admin.replace("/postgres?", "/b?"))
    finally:
        server.stop()
    c.out(f"\nResumable bigram re-index, {turns:,} turns + {memories:,} memories\n")
    c.out(
        c.table(
            ["what", "seconds", "rows/s", "floor (same run)", "ratio"],
            [
                [
                    "previous step: one transaction, indexes rebuilt",
                    f"{floor_s:.1f}",
                    f"{rows / floor_s:,.0f}",
                    "-",
                    "-",
                ],
                [
                    "resumable: committed batches, indexes kept",
                    f"{new_s:.1f}",
                    f"{rows / new_s:,.0f}",
                    f"{floor_s:.1f}",
                    f"{new_s / floor_s:.2f}x",
                ],
                ["a reader's query half-way, ms", c.ms(reader_s), "-", "-", "-"],
                ["next open, nothing pending, ms", c.ms(open_s), "-", "-", "-"],
                ["verify (the newest 1,000 rows' tsvectors)", f"{quick_s:.1f}", "-", "-", "-"],
                [
                    "verify --full (every row's tsvector)",
                    f"{full_s:.1f}",
                    f"{rows / full_s:,.0f}",
                    "-",
                    "-",
                ],
            ],
        )  # fmt: skip
    )
    c.out(f"\nrows rewritten after the pause: {done}\n")


if __name__ == "__main__":
    main()
