#!/usr/bin/env python3
"""Benchmark ``soloqueue-mem trace`` on a large store.

Builds (once; cached under /tmp/soloqueue-bench/, reused when present) a store of
1,000,000 seeded mixed zh/en turns (--quick: 100,000) across ~1,000 sessions through
the library's ``log_events``, then times whole-process ``soloqueue-mem trace QUERY
--format json`` for Chinese and English queries, from rare words to common ones that
match most of the store. Goal: median <= 250 ms per query.

Floor, in the same run: a bare ``python -c`` that runs the same FTS5 MATCH expression
(built by the project's query code) with ``bm25 ORDER BY ... LIMIT 10`` through sqlite3
on the same memory.db and fetches those 10 turns.

Run: ``/tmp/bench-venv/bin/python benchmarks/bench_trace.py [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import _common as c

c.import_project()

FLOOR = """
import json, sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
rows = conn.execute(
    "SELECT t.id, t.session_id, t.turn_index, t.content, h.score FROM ("
    " SELECT rowid, bm25(conversation_turns_fts) AS score FROM conversation_turns_fts"
    " WHERE conversation_turns_fts MATCH ? ORDER BY score LIMIT 10) AS h"
    " JOIN conversation_turns AS t ON t.id = h.rowid ORDER BY h.score",
    (sys.argv[2],),
).fetchall()
print(json.dumps(rows, ensure_ascii=False))
"""


def build_store(n: int, seed: int, sessions: int) -> tuple[Path, dict]:
    """The cached store of ``n`` turns; built through ``log_events`` if missing."""
    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.sessions.events import Event
    from soloqueue_mem.sessions.writer import Rejected, log_events
    from soloqueue_mem.storage.sqlite.schema_memory import MIGRATIONS
    from soloqueue_mem.storage.sqlite.stores import open_memory

    final = c.CACHE / f"trace-store-{n}-seed{seed}"
    info_file = final / "bench-build.json"
    if info_file.exists():
        probe = sqlite3.connect(f"file:{final / 'memory.db'}?mode=ro", uri=True)
        version = probe.execute("PRAGMA user_version").fetchone()[0]
        probe.close()
        if version <= len(MIGRATIONS):  # an older schema is migrated by the untimed warm-up
            return final, {
                **json.loads(info_file.read_text()),
                "reused": True,
                "schema": f"{version} (code: {len(MIGRATIONS)})",
            }
        c.note(
            f"cached store has schema {version}, newer than this code's "
            f"{len(MIGRATIONS)}: rebuilding"
        )
    c.CACHE.mkdir(parents=True, exist_ok=True)
    tmp = c.CACHE / f".building-{n}-seed{seed}"
    shutil.rmtree(tmp, ignore_errors=True)
    home = Home(tmp)
    config = Config()
    conn = open_memory(home, config)
    assert conn is not None
    gen = c.TextGen(seed)
    per_session = -(-n // sessions)
    base = datetime(2024, 1, 1, tzinfo=UTC)

    def events():
        for i in range(n):
            yield (
                None,
                Event(
                    role="user" if i % 2 == 0 else "assistant",
                    content=gen.turn(),
                    tool_calls=[],
                    tool_results=[],
                    timestamp=base + timedelta(seconds=30 * i),
                    session=f"s{i // per_session:05d}",
                ),
            )

    c.note(f"building a {n:,}-turn store in {tmp} (log_events, chunks of 20,000)")
    start = time.perf_counter()
    done = 0
    for result in log_events(
        home, conn, events(), ("bench", "agent", None), config, datetime.now(UTC), chunk_size=20_000
    ):
        if isinstance(result, Rejected):
            raise RuntimeError(f"rejected: {result}")
        done += 1
        if done % 100_000 == 0:
            elapsed = time.perf_counter() - start
            c.note(f"  {done:,} turns, {elapsed:.0f} s, {done / elapsed:,.0f} turns/s")
    elapsed = time.perf_counter() - start
    conn.close()
    info = {
        "turns": done,
        "sessions": -(-n // per_session),
        "seed": seed,
        "build_seconds": round(elapsed, 1),
        "build_turns_per_s": round(done / elapsed),
        "method": "soloqueue_mem.sessions.writer.log_events, chunk_size=20000, "
        "text generation included",
    }
    (tmp / "bench-build.json").write_text(json.dumps(info))
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    return final, {**info, "reused": False, "schema": str(len(MIGRATIONS))}


def queries() -> list[tuple[str, str]]:
    zh = c.chinese_words()
    return [
        ("zh", zh[0]),
        ("zh", zh[1]),
        ("zh", zh[5]),
        ("zh", zh[30]),
        ("zh", zh[200]),
        ("zh", zh[2500]),
        ("zh", zh[0] + zh[3] + zh[10]),
        ("zh", "我们国家的经济发展有什么问题"),
        ("zh", "北京的公司最近在研究什么技术"),
        ("zh", "樱花和松鼠"),
        ("en", "time"),
        ("en", "meeting"),
        ("en", "project deadline"),
        ("en", "coffee"),
        ("en", "database server error"),
        ("en", "what did my sister say about the flight"),
        ("en", "dance"),
        ("en", "painting museum gallery"),
        ("en", "xylophone"),
        ("en", "Tell me about the weather in the mountain village"),
    ]


def summary(values: list[float]) -> list[str]:
    return [c.ms(c.median(values)), c.ms(max(values))] if values else ["-", "-"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="100,000-turn store, fewer repeats")
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="interpreter whose soloqueue-mem is timed (default: this one)",
    )
    parser.add_argument(
        "-n", "--turns", type=int, help="store size (default 1000000, quick 100000)"
    )
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--repeats", type=int, help="runs per query (default 10, quick 5)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--build-only", action="store_true", help="build the store and stop")
    args = parser.parse_args()
    n = args.turns or (100_000 if args.quick else 1_000_000)
    repeats = args.repeats or (5 if args.quick else 10)

    from soloqueue_mem.text.fts import match_expression, query_terms
    from soloqueue_mem.text.lexicon import open_lexicon

    store, info = build_store(n, args.seed, args.sessions)
    if args.build_only:
        c.out(json.dumps(info))
        return 0
    db = store / "memory.db"
    lexicon = open_lexicon(c.CACHE / "lexicon")
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    total = conn.execute("SELECT COUNT(*) FROM conversation_turns").fetchone()[0]
    db_bytes = sum(p.stat().st_size for p in store.glob("memory.db*"))

    env = c.timing_env()
    cli = c.cli_argv(args.python)
    # The first Han query of a store builds its lexicon (~1 s, once): do it untimed.
    c.run_timed([*cli, "--root", str(store), "trace", "中国", "--format", "json"], env)

    rows: list[list[object]] = []
    per_lang: dict[str, list[float]] = {"zh": [], "en": []}
    floors: list[float] = []
    problems: list[str] = []
    for lang, query in queries():
        match = match_expression(query_terms(query, lambda: lexicon))
        hits = (
            conn.execute(
                "SELECT COUNT(*) FROM conversation_turns_fts WHERE conversation_turns_fts MATCH ?",
                (match,),
            ).fetchone()[0]
            if match
            else 0
        )
        commands: dict[str, c.Timed] = {
            "trace": {
                "argv": [*cli, "--root", str(store), "trace", query, "--format", "json"],
                "env": env,
            },
            "floor": {"argv": [args.python, "-c", FLOOR, str(db), match or '""'], "env": env},
        }
        c.note(f"{lang} {query!r}: {hits:,} matching turns")
        code, _, error = c.probe(commands["trace"]["argv"], env)
        if code != 0:
            problems.append(f"`{query}` ({hits:,} matching turns): trace exited {code}: {error}")
            rows.append(
                [
                    lang,
                    query,
                    match,
                    f"{hits:,}",
                    f"**exit {code}**",
                    "-",
                    "-",
                    "-",
                    "-",
                    "-",
                    "-",
                    "**error**",
                ]
            )
            continue
        times = c.interleaved(commands, repeats, warmup=1)
        _, raw = c.run_timed(**commands["trace"], capture=True)
        traced = [int(h["id"]) for h in json.loads(raw) if h.get("id")]
        returned = len(json.loads(raw))
        _, raw = c.run_timed(**commands["floor"], capture=True)
        exact = [row[0] for row in json.loads(raw)]
        overlap = f"{len(set(traced) & set(exact))}/{len(exact)}" if exact else "-"
        if hits and not returned:
            problems.append(f"`{query}`: {hits:,} turns match {match} but trace returned nothing")
        t_med, f_med = c.median(times["trace"]), c.median(times["floor"])
        per_lang[lang].append(t_med)
        floors.append(f_med)
        rows.append(
            [
                lang,
                query,
                match,
                f"{hits:,}",
                returned,
                overlap,
                c.ms(t_med),
                c.ms(c.p90(times["trace"])),
                c.ms(f_med),
                c.ms(c.p90(times["floor"])),
                f"{t_med / f_med:.1f}x",
                "yes" if t_med <= 0.250 else "**no**",
            ]
        )
    conn.close()

    all_medians = per_lang["zh"] + per_lang["en"]
    met = sum(1 for t in all_medians if t <= 0.250)
    failed = len(queries()) - len(all_medians)
    c.out(f"## bench_trace{' (quick)' if args.quick else ''}")
    c.out()
    c.out(c.machine_line(args.python))
    c.out()
    c.out(
        f"Store: {total:,} turns, {info['sessions']:,} sessions, memory.db (+wal) "
        f"{db_bytes / 1e6:,.0f} MB, {store}. "
        + ("Reused from an earlier run" if info["reused"] else "Built in this run")
        + f" (schema version {info['schema']}); "
        + f"build: {info['build_seconds']} s = {info['build_turns_per_s']:,} turns/s "
        f"({info['method']}). Page cache warm. {repeats} runs per command, interleaved."
    )
    c.out()
    c.out(
        c.table(
            [
                "lang",
                "query",
                "MATCH expression",
                "matching turns",
                "returned",
                "same as exact BM25 top 10",
                "trace median ms",
                "trace p90 ms",
                "floor median ms",
                "floor p90 ms",
                "trace/floor",
                "<= 250 ms",
            ],
            rows,
        )
    )
    c.out()
    c.out(
        c.table(
            ["summary", "median of per-query medians, ms", "worst query median, ms"],
            [
                [label, *summary(values)]
                for label, values in (
                    ("trace, zh queries", per_lang["zh"]),
                    ("trace, en queries", per_lang["en"]),
                    ("trace, all", all_medians),
                    ("floor, all", floors),
                )
            ],
        )
    )
    c.out()
    c.out(
        f"Goal: median <= 250 ms per query: {met}/{len(queries())} queries "
        f"({failed} failed) -> {c.verdict(met == len(queries()))}"
    )
    c.out()
    c.out(
        "'same as exact BM25 top 10': how many of the floor's 10 turns (exact bm25 over "
        "every match) trace also returned."
    )
    if problems:
        c.out()
        c.out("Problems:")
        c.out()
        for problem in problems:
            c.out(f"- {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
