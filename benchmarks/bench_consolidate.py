#!/usr/bin/env python3
"""Benchmark ``consolidate``: a full run, dedup growth, and RELIABILITY B7.

(1) Whole-process ``soloqueue-mem consolidate --format json`` on a copy of
``bench_trace.py``'s 100,000-turn store (1,000 sessions, all idle) given 10,000
memories (quick: 10,000 turns, 1,000 memories), with the report's per-step figures.
Floor, in the same run: a bare ``python -c`` that reads every session's JSONL and
parses each line (the least work that sees every turn once).

(2) Dedup growth: ``lifecycle.dedup.clusters`` in process on 10,000 and 100,000 seeded
memories (short mixed zh/en statements, 5% of them near-duplicates of another), with
the number of exact comparisons; O(n log n) means the 10x larger set costs about
10-13x, O(n^2) would cost 100x.

(3) B7: consolidation of a store with 100,000 memories (quick: 10,000) and 100 idle
sessions while 16 writer processes log 100 turns each (open, log, close per call, as a
hook does). Reports the writers' p50/p99/max latency and failures, and the longest
write transaction consolidation held (every ``write_tx`` timed in its process). Goal:
writer p99 < 1 s, 0 failures, longest consolidation transaction < 200 ms.

Run: ``/tmp/bench-venv/bin/python benchmarks/bench_consolidate.py [--quick] [--only run|dedup|b7]``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import _common as c
import bench_trace

if TYPE_CHECKING:
    from multiprocessing.queues import Queue
    from multiprocessing.synchronize import Barrier

c.import_project()

FLOOR = """
import json, os, sys
n = 0
for folder, _, files in os.walk(sys.argv[1]):
    for name in files:
        if name.endswith(".jsonl"):
            with open(os.path.join(folder, name), "rb") as lines:
                for line in lines:
                    json.loads(line)
                    n += 1
print(n)
"""
TYPES = ("FACT", "PREFERENCE", "RULE", "SKILL", "ERROR")


def add_memories(root: Path, count: int, seed: int, now: datetime) -> None:
    from soloqueue_mem.config import Config
    from soloqueue_mem.db.connect import write_tx
    from soloqueue_mem.home import Home
    from soloqueue_mem.memory.store import Draft, remember
    from soloqueue_mem.storage.sqlite.stores import open_memory

    conn = c.created(open_memory(Home(root), Config()))
    gen, rng = c.TextGen(seed), random.Random(seed)
    for first in range(0, count, 5000):
        with write_tx(conn):
            for _ in range(first, min(first + 5000, count)):
                draft = Draft(
                    content=gen.turn()[: rng.randint(30, 100)],
                    type=rng.choice(TYPES),
                    importance=round(rng.random(), 2),
                    duration=rng.choice(("permanent", "30d", "7d")),
                )
                remember(conn, draft, "bench", "agent", now - timedelta(days=rng.uniform(0, 60)))
    conn.close()


def statements(n: int, seed: int) -> list[str]:
    gen, rng = c.TextGen(seed), random.Random(seed)
    texts = [gen.turn()[: rng.randint(30, 100)] for _ in range(n)]
    for i in rng.sample(range(n), n // 20):  # near-duplicates: one word or mark changed
        source = texts[rng.randrange(n)]
        texts[i] = source.replace(" ", "  ", 1) + rng.choice("。.!！")
    return texts


def part_run(args: argparse.Namespace) -> None:
    turns, memories = (100_000, 10_000) if not args.quick else (10_000, 1_000)
    source, _ = bench_trace.build_store(turns, args.seed, 1000 if not args.quick else 100)
    work = Path(tempfile.mkdtemp(prefix="bench-consolidate-", dir=c.CACHE))
    store = work / "store"
    c.note(f"copying {source}")
    subprocess.run(["cp", "-a", str(source), str(store)], check=True)
    import sqlite3

    from soloqueue_mem.clock import parse_timestamp

    newest = (
        sqlite3.connect(store / "memory.db")
        .execute("SELECT MAX(timestamp) FROM conversation_turns")
        .fetchone()[0]
    )
    now = parse_timestamp(newest) + timedelta(hours=3)
    c.note(f"adding {memories:,} memories")
    add_memories(store, memories, args.seed, now)
    env = c.timing_env(SOLOQUEUE_NOW=now.isoformat())
    floor = [
        c.run_timed([args.python, "-c", FLOOR, str(store / "groups")], env)[0] for _ in range(3)
    ]
    seconds, raw = c.run_timed(
        [*c.cli_argv(args.python), "--root", str(store), "consolidate", "--format", "json"],
        env,
        capture=True,
    )
    report = json.loads(raw)
    again, raw2 = c.run_timed(
        [*c.cli_argv(args.python), "--root", str(store), "consolidate", "--format", "json"],
        env,
        capture=True,
    )
    second = json.loads(raw2)
    c.out(f"\n## consolidate: {turns:,} turns in 1,000 sessions, {memories:,} memories\n")
    rows = [
        ["consolidate (first run)", c.ms(seconds)],
        ["consolidate (second run, nothing new)", c.ms(again)],
        ["floor: read and parse every JSONL line (median of 3)", c.ms(c.median(floor))],
    ]
    c.out(c.table(["what", "ms"], rows))
    c.out(f"\nRatio to the floor: {seconds / c.median(floor):.1f}x.\n")
    for step in ("sessions", "dedup", "decay", "expire", "identity"):
        c.out(f"- {step}: {json.dumps(report[step], ensure_ascii=False)}")
    changed = {k: second[k] for k in ("sessions", "dedup", "decay", "expire")}
    c.out(f"- second run: {json.dumps(changed)}")
    shutil.rmtree(work, ignore_errors=True)


def part_dedup(args: argparse.Namespace) -> None:
    from soloqueue_mem.lifecycle import dedup

    sizes = (10_000, 100_000) if not args.quick else (2_000, 20_000)
    rows, times = [], []
    original = dedup.jaccard
    for n in sizes:
        texts = statements(n, args.seed)
        items = [
            dedup.Item(str(i), ("g", "a", "FACT"), t, (0.5, 0.5, 0, ""))
            for i, t in enumerate(texts)
        ]
        calls = [0]

        def counting(a, b, calls=calls):
            calls[0] += 1
            return original(a, b)

        dedup.jaccard = counting
        start = time.perf_counter()
        found = dedup.clusters(items)
        elapsed = time.perf_counter() - start
        dedup.jaccard = original
        times.append(elapsed)
        merged = sum(len(g) - 1 for g in found)
        rows.append([f"{n:,}", c.ms(elapsed), f"{calls[0]:,}", f"{len(found):,}", f"{merged:,}"])
    c.out("\n## dedup growth\n")
    c.out(c.table(["memories", "ms", "comparisons", "clusters", "superseded"], rows))
    growth = times[1] / times[0]
    c.out(f"\nGrowth for 10x the memories: {growth:.1f}x time (n log n ≈ 12-13x; n² = 100x).")


def _writer(
    root: str, worker: int, calls: int, barrier: Barrier, out: Queue[tuple[Any, ...]]
) -> None:
    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.sessions.events import parse_event
    from soloqueue_mem.sessions.writer import log_events
    from soloqueue_mem.storage.sqlite.stores import open_memory

    home, config = Home(Path(root)), Config()
    latencies, failures = [], []
    barrier.wait(timeout=120)
    for call in range(calls):
        start = time.perf_counter()
        try:
            conn = c.created(open_memory(home, config))
            try:
                event = parse_event(
                    {"role": "user", "content": f"writer {worker} call {call} 并发写入"}
                )
                list(
                    log_events(
                        home,
                        conn,
                        [(None, event)],
                        ("live", "w", f"w{worker}"),
                        config,
                        datetime.now(UTC),
                    )
                )
            finally:
                conn.close()
        except Exception as exc:  # noqa: BLE001 - counted and reported
            failures.append(repr(exc))
        latencies.append(time.perf_counter() - start)
    out.put((latencies, failures))


def _consolidator(root: str, now: str, out: Queue[tuple[Any, ...]]) -> None:
    from soloqueue_mem.clock import parse_timestamp
    from soloqueue_mem.config import Config
    from soloqueue_mem.db import connect
    from soloqueue_mem.home import Home
    from soloqueue_mem.lifecycle import consolidate
    from soloqueue_mem.storage import open_backend

    backend = open_backend(Home(Path(root)), Config())  # its modules loaded before the patch
    durations: list[float] = []
    original = connect.write_tx

    @contextmanager
    def timed(conn):
        """Held time: from BEGIN IMMEDIATE succeeding to COMMIT returning."""
        with original(conn) as inner:
            start = time.perf_counter()
            yield inner
            finished = time.perf_counter
        durations.append(finished() - start)

    for name, module in list(sys.modules.items()):  # every importer of write_tx
        if name.startswith("soloqueue_mem") and getattr(module, "write_tx", None) is original:
            module.write_tx = timed  # type: ignore[attr-defined]  # a patch of any importer
    start = time.perf_counter()
    report = backend.consolidate(parse_timestamp(now), consolidate.Options())
    backend.close()
    out.put(
        (time.perf_counter() - start, sorted(durations)[-5:], len(durations), report["sessions"])
    )


def part_b7(args: argparse.Namespace) -> None:
    memories = 10_000 if args.quick else 100_000
    work = Path(tempfile.mkdtemp(prefix="bench-b7-", dir=c.CACHE))
    root = work / "store"
    now = datetime(2026, 11, 26, 12, tzinfo=UTC)
    c.note(f"B7: {memories:,} memories, 100 idle sessions")
    add_memories(root, memories, args.seed, now)
    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.sessions.events import Event
    from soloqueue_mem.sessions.writer import log_events
    from soloqueue_mem.storage.sqlite.stores import open_memory

    gen = c.TextGen(args.seed)
    conn = c.created(open_memory(Home(root), Config()))
    events = [
        (
            None,
            Event(
                "user" if i % 2 == 0 else "assistant",
                gen.turn(),
                [],
                [],
                now - timedelta(hours=5),
                session=f"idle{i // 20}",
            ),
        )
        for i in range(2000)
    ]
    list(log_events(Home(root), conn, events, ("bench", "agent", None), Config(), now))
    conn.close()
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    barrier = ctx.Barrier(17)
    writers = [
        ctx.Process(target=_writer, args=(str(root), w, 100, barrier, out)) for w in range(16)
    ]
    for p in writers:
        p.start()
    consolidator = ctx.Process(target=_consolidator, args=(str(root), now.isoformat(), out))
    barrier.wait(timeout=120)
    consolidator.start()
    results = [out.get(timeout=600) for _ in range(17)]
    for p in [*writers, consolidator]:
        p.join(timeout=60)
    latencies = sorted(x for r in results if len(r) == 2 for x in r[0])
    failures = [f for r in results if len(r) == 2 for f in r[1]]
    run_seconds, longest, transactions, sessions = next(r for r in results if len(r) == 4)
    p99 = latencies[int(len(latencies) * 0.99) - 1]
    c.out(f"\n## B7: consolidate beside 16 writers ({memories:,} memories, 100 idle sessions)\n")
    rows: list[list[object]] = [
        ["writer calls", f"{len(latencies):,}"],
        ["writer failures", len(failures)],
        [
            "writer p50 / p99 / max",
            f"{c.ms(latencies[len(latencies) // 2])} / {c.ms(p99)} / {c.ms(latencies[-1])}",
        ],
        ["consolidate run", c.ms(run_seconds)],
        ["consolidate write transactions", f"{transactions:,}"],
        ["longest five transactions", ", ".join(c.ms(d) for d in longest)],
        ["sessions step", json.dumps(sessions)],
    ]
    c.out(c.table(["what", "value"], rows))
    ok = not failures and p99 < 1.0 and longest[-1] < 0.2
    verdict = "met" if ok else "**not met**"
    c.out(f"\nGoal (p99 < 1 s, 0 failures, longest transaction < 200 ms): {verdict}.")
    shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--only", choices=("run", "dedup", "b7"))
    args = parser.parse_args()
    c.out(c.machine_line(args.python))
    for name, part in (("run", part_run), ("dedup", part_dedup), ("b7", part_b7)):
        if args.only in (None, name):
            part(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
