#!/usr/bin/env python3
"""Benchmark ``soloqueue-mem recall`` on a store of 1,000,000 turns and 100,000 memories.

The store is ``bench_trace.py``'s turn store (built if missing) copied once and given
100,000 seeded mixed zh/en memories through the library's ``remember`` (types and
ages spread over 90 days; 1 in 10 with a subject/predicate, so supersede chains
exist), cached under /tmp/soloqueue-bench/. Whole-process ``soloqueue-mem recall QUERY
--format json`` is timed for 10 Chinese and 10 English queries with ``SOLOQUEUE_NOW``
one hour after the newest turn, so the recent (3 days) and hot (24 h) channels have
turns to search. Goal: median <= 250 ms.

Floor, in the same run: a bare ``python -c`` running the same FTS5 MATCH expression
(built by the project's query code) against the memory index through sqlite3 (bm25,
top 30, joined to the memories table).

Run: ``/tmp/bench-venv/bin/python benchmarks/bench_recall.py [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import _common as c
import bench_trace

c.import_project()

FLOOR = """
import json, sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
rows = conn.execute(
    "SELECT m.id, m.content, h.score FROM ("
    " SELECT rowid, bm25(memories_fts) AS score FROM memories_fts"
    " WHERE memories_fts MATCH ? ORDER BY score LIMIT 30) AS h"
    " JOIN memories AS m ON m.rowid = h.rowid ORDER BY h.score",
    (sys.argv[2],),
).fetchall()
print(json.dumps(rows, ensure_ascii=False))
"""
TYPES = ("FACT", "PREFERENCE", "RULE", "SKILL", "ERROR")


def build_store(turns: int, memories: int, seed: int) -> tuple[Path, dict]:
    """The cached store: the trace store plus ``memories`` memories."""
    from soloqueue_mem.config import Config
    from soloqueue_mem.db.connect import write_tx
    from soloqueue_mem.home import Home
    from soloqueue_mem.memory.store import Draft, remember
    from soloqueue_mem.storage.sqlite.stores import open_memory

    final = c.CACHE / f"recall-store-{turns}-{memories}-seed{seed}"
    info_file = final / "bench-build.json"
    if info_file.exists():
        return final, {**json.loads(info_file.read_text()), "reused": True}
    source, _ = bench_trace.build_store(turns, seed, 1000)
    tmp = c.CACHE / f".building-recall-{turns}-{memories}"
    shutil.rmtree(tmp, ignore_errors=True)
    c.note(f"copying {source} to {tmp}")
    subprocess.run(["cp", "-a", str(source), str(tmp)], check=True)
    home = Home(tmp)
    conn = open_memory(home, Config())
    assert conn is not None
    newest = conn.execute("SELECT MAX(timestamp) FROM conversation_turns").fetchone()[0]
    now = datetime.fromisoformat(newest.replace("Z", "+00:00")) + timedelta(hours=1)
    gen = c.TextGen(seed + 1)
    rng = random.Random(seed)
    c.note(f"adding {memories:,} memories (remember, 5,000 per transaction)")
    start = time.perf_counter()
    for first in range(0, memories, 5000):
        with write_tx(conn):
            for i in range(first, min(first + 5000, memories)):
                chained = rng.random() < 0.1
                draft = Draft(
                    content=gen.turn()[: rng.randint(30, 120)],
                    type=rng.choice(TYPES),
                    subject=f"subject{rng.randrange(2000)}" if chained else "",
                    predicate=f"attr{rng.randrange(5)}" if chained else "",
                    importance=round(rng.random(), 2),
                    duration="permanent" if rng.random() < 0.7 else "30d",
                )
                written = now - timedelta(days=90 * (memories - i) / memories)
                remember(conn, draft, "bench", "agent", written)
    elapsed = time.perf_counter() - start
    count = conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
    conn.close()
    info = {
        "turns": turns,
        "memories": count,
        "now": now.isoformat().replace("+00:00", "Z"),
        "memory_build_seconds": round(elapsed, 1),
        "memories_per_s": round(count / elapsed),
    }
    (tmp / "bench-build.json").write_text(json.dumps(info))
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    return final, {**info, "reused": False}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="100k turns, 10k memories")
    parser.add_argument("--python", default=sys.executable, help="interpreter to time")
    parser.add_argument("--repeats", type=int, help="runs per query (default 10, quick 5)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    turns, memories = (100_000, 10_000) if args.quick else (1_000_000, 100_000)
    repeats = args.repeats or (5 if args.quick else 10)

    from soloqueue_mem.text.fts import match_expression, query_terms
    from soloqueue_mem.text.lexicon import open_lexicon

    store, info = build_store(turns, memories, args.seed)
    db = store / "memory.db"
    lexicon = open_lexicon(c.CACHE / "lexicon")
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    env = c.timing_env(SOLOQUEUE_NOW=info["now"])
    cli = c.cli_argv(args.python)
    c.run_timed([*cli, "--root", str(store), "recall", "中国", "--format", "json"], env)

    rows, ours, floors, problems = [], [], [], []
    for lang, query in bench_trace.queries():
        match = match_expression(query_terms(query, lambda: lexicon)) or '""'
        matching = conn.execute(
            "SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH ?", (match,)
        ).fetchone()[0]
        commands: dict[str, c.Timed] = {
            "recall": {
                "argv": [*cli, "--root", str(store), "recall", query, "--format", "json"],
                "env": env,
            },
            "floor": {"argv": [args.python, "-c", FLOOR, str(db), match], "env": env},
        }
        c.note(f"{lang} {query!r}: {matching:,} matching memories")
        code, raw, error = c.probe(commands["recall"]["argv"], env)
        if code != 0:
            problems.append(f"`{query}`: recall exited {code}: {error}")
            continue
        hits = json.loads(raw)
        in_memory = sum(h["kind"] == "memory" for h in hits)
        kinds = f"{in_memory}/{len(hits) - in_memory}"
        times = c.interleaved(commands, repeats, warmup=1)
        r_med, f_med = c.median(times["recall"]), c.median(times["floor"])
        ours.append(r_med)
        floors.append(f_med)
        rows.append(
            [
                lang,
                query,
                f"{matching:,}",
                kinds,
                c.ms(r_med),
                c.ms(c.p90(times["recall"])),
                c.ms(f_med),
                f"{r_med / f_med:.1f}x",
                "yes" if r_med <= 0.250 else "**no**",
            ]
        )
    c.out(c.machine_line(args.python))
    c.out(f"\n## recall on {turns:,} turns and {info['memories']:,} memories\n")
    c.out(f"Store: {store} ({json.dumps(info)}); {repeats} runs per query, interleaved.\n")
    headers = ["lang", "query", "matching memories", "hits mem/turn", "recall median"]
    headers += ["recall p90", "floor median", "ratio", "<= 250 ms"]
    c.out(c.table(headers, rows))
    if ours:
        c.out(
            f"\nMedian of per-query medians: recall {c.ms(c.median(ours))}, floor "
            f"{c.ms(c.median(floors))}; {sum(t <= 0.25 for t in ours)}/{len(ours)} queries "
            f"<= 250 ms; worst {c.ms(max(ours))}."
        )
    for problem in problems:
        c.out(f"- problem: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
