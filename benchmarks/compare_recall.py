#!/usr/bin/env python3
"""Whole-process ``recall`` of two source trees, interleaved with the floor: CPU and wall.

On a shared machine a run of one install after the other measures the load as much as
the change. This script times, on ``bench_recall.py``'s store and clock, each of
``bench_trace.py``'s 20 queries as ``python -m soloqueue_mem recall QUERY --format json``
with each tree on ``PYTHONPATH`` (a checkout of main beside a branch's), and
``bench_recall.py``'s floor, the three in a rotating order within each round, so drift
hits all alike. Each run's CPU time (user + sys of the process, from ``wait4``) is
reported beside its wall time: CPU time is what the load inflates least.

Run: ``python benchmarks/compare_recall.py --tree main=../main --tree change=. [--rounds 15]``
(~20 s a round at 1M; the store must exist: ``bench_recall.py`` builds it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import _common as c
import bench_recall
import bench_trace

c.import_project()


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of ``argv``."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, cwd=c.neutral_cwd())
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"exit status {status}: {argv}")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def timed_recall(base: list[str], env: dict[str, str]) -> Callable[[str], tuple[float, float]]:
    """One timed ``recall QUERY --format json`` through ``base`` (a tree's command)."""
    return lambda query: timed([*base, query, "--format", "json"], env)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", action="append", required=True, help="NAME=DIR (twice)")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--python", default=sys.executable, help="interpreter of every run")
    parser.add_argument("--store", type=Path, default=c.CACHE / "recall-store-1000000-100000-seed7")
    args = parser.parse_args()

    from soloqueue_mem.text.fts import match_expression, query_terms
    from soloqueue_mem.text.lexicon import open_lexicon

    now = json.loads((args.store / "bench-build.json").read_text())["now"]
    lexicon = open_lexicon(c.CACHE / "lexicon")
    queries = bench_trace.queries()
    runs: dict[str, Callable[[str], tuple[float, float]]] = {}
    for spec in args.tree:
        name, _, tree = spec.partition("=")
        env = c.timing_env(SOLOQUEUE_NOW=now, PYTHONPATH=str(Path(tree).resolve()))
        base = [args.python, "-m", "soloqueue_mem", "--root", str(args.store), "recall"]
        runs[name] = timed_recall(base, env)
    floor_env = c.timing_env(SOLOQUEUE_NOW=now)
    db = str(args.store / "memory.db")
    match = {q: match_expression(query_terms(q, lambda: lexicon)) or '""' for _, q in queries}
    runs["floor"] = lambda q: timed(
        [args.python, "-c", bench_recall.FLOOR, db, match[q]], floor_env
    )

    c.out(c.machine_line(args.python))
    c.out("trees on PYTHONPATH: " + ", ".join(args.tree))
    for run in runs.values():
        run("中国")  # bytecode written, pages cached
    names = list(runs)
    times: dict[str, dict[str, list[tuple[float, float]]]] = {n: {} for n in names}
    load = os.getloadavg()[0]
    for round_ in range(args.rounds):
        c.note(f"round {round_ + 1}/{args.rounds}")
        for number, (_, query) in enumerate(queries):
            first = (round_ + number) % len(names)
            for name in names[first:] + names[:first]:
                times[name].setdefault(query, []).append(runs[name](query))

    def median_of_medians(name: str, which: int, lang: str | None = None) -> float:
        per_query = [
            statistics.median(run[which] for run in times[name][q])
            for lang_of, q in queries
            if lang in (None, lang_of)
        ]
        return statistics.median(per_query)

    c.out(f"{args.rounds} rounds, load average {load:.2f} -> {os.getloadavg()[0]:.2f}")
    floor_cpu, floor_wall = median_of_medians("floor", 1), median_of_medians("floor", 0)
    rows = []
    for name in names:
        cpu, wall = median_of_medians(name, 1), median_of_medians(name, 0)
        zh, en = median_of_medians(name, 1, "zh"), median_of_medians(name, 1, "en")
        rows.append(
            [
                name,
                f"{c.ms(cpu)} ms ({cpu / floor_cpu:.2f}x)",
                f"{c.ms(zh)} / {c.ms(en)} ms",
                f"{c.ms(wall)} ms ({wall / floor_wall:.2f}x)",
            ]
        )
    headers = ["tree", "CPU, median of per-query medians", "CPU zh / en", "wall, the same"]
    c.out(c.table(headers, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
