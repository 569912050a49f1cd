#!/usr/bin/env python3
"""CPU time (user + sys of the child) and wall time of `log` and `log --batch` against
their floors, for a machine shared with other jobs.

Wall figures on a loaded 2-core machine mostly measure the queue for a core; the
child's own CPU time (``os.wait4``'s rusage) is far steadier, so ratios are given for
both. The floors are bench_log.py's: a ``python -c`` inserting one row into a WAL table
(`log`), and one reading the same JSONL into a table plus FTS5 in the index form, 500
rows per transaction (`log --batch`). Commands run round-robin; the load average is
printed at start and end. Several interpreters can be compared in one run
(``--python A --python B``: e.g. installs of two branches), each against the same
floor (run with the first).

    /tmp/bench-venv/bin/python benchmarks/bench_log_cpu.py [--quick] [--python PATH ...]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common as c
import bench_log


def run_child(
    argv: list[str], env: dict[str, str], stdin: Path | None = None
) -> tuple[float, float]:
    """Run ``argv`` once: (wall seconds, CPU seconds of the child, user + sys)."""
    with open(stdin or os.devnull, "rb") as source:
        start = time.perf_counter()
        proc = subprocess.Popen(
            argv,
            env=env,
            cwd=c.neutral_cwd(),
            stdin=source,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        assert proc.stderr is not None
        err = proc.stderr.read()
        proc.stderr.close()
    if status != 0:
        raise RuntimeError(f"{' '.join(argv)[:200]} failed: {err.decode(errors='replace')[-800:]}")
    return wall, usage.ru_utime + usage.ru_stime


def rounds(commands: dict[str, dict], runs: int, reset=lambda: None) -> dict[str, list]:
    """Each command ``runs`` times, round-robin; ``reset`` runs before each command."""
    found: dict[str, list] = {label: [] for label in commands}
    for _ in range(runs):
        for label, kwargs in commands.items():
            reset()
            found[label].append(run_child(**kwargs))
    return found


def report(found: dict[str, list], floor: str, per_run: int | None = None) -> str:
    walls = {label: c.median([w for w, _ in runs]) for label, runs in found.items()}
    cpus = {label: c.median([u for _, u in runs]) for label, runs in found.items()}
    lows = {label: min(u for _, u in runs) for label, runs in found.items()}
    rows = []
    for label in found:
        row = [
            label,
            c.ms(walls[label]),
            f"{walls[label] / walls[floor]:.2f}x",
            c.ms(cpus[label]),
            f"{cpus[label] / cpus[floor]:.2f}x",
            c.ms(lows[label]),
            f"{lows[label] / lows[floor]:.2f}x",
        ]
        if per_run:
            row.append(f"{per_run / cpus[label]:,.0f}")
        rows.append(row)
    headers = ["command", "wall ms (median)", "vs floor", "CPU ms (median)", "vs floor",
               "CPU ms (min)", "vs floor"]  # fmt: skip
    if per_run:
        headers.append("turns per CPU second")
    return c.table(headers, rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs, 5,000 lines")
    parser.add_argument("--python", action="append", help="interpreter(s) to time")
    parser.add_argument("-n", "--turns", type=int, help="batch lines (default 20000)")
    parser.add_argument("--runs", type=int, help="rounds (default: batch 5, one call 20)")
    args = parser.parse_args()
    pythons = args.python or [sys.executable]
    lines = args.turns or (5_000 if args.quick else 20_000)
    batch_runs = args.runs or (3 if args.quick else 5)
    single_runs = args.runs or (10 if args.quick else 20)
    env = c.timing_env()
    work = Path(tempfile.mkdtemp(prefix="bench-log-cpu-", dir=c.neutral_cwd()))
    c.out("## bench_log_cpu")
    c.out()
    c.out(c.machine_line(pythons[0]))
    c.out()
    c.out(f"Load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    c.out()
    try:
        data = work / "batch.jsonl"
        bench_log.write_jsonl(data, lines, 20250101)
        store, floor_db = work / "store", work / "floor.db"

        def fresh() -> None:
            shutil.rmtree(store, ignore_errors=True)
            for path in work.glob("floor.db*"):
                path.unlink()

        batch = {
            f"log --batch --format jsonl ({py})": {
                "argv": [*c.cli_argv(py), "--root", str(store), "log", "--batch", "--format",
                         "jsonl"],
                "env": env, "stdin": data,
            }
            for py in pythons
        }  # fmt: skip
        floor = "floor: sqlite3 + FTS5, index form"
        batch[floor] = {
            "argv": [pythons[0], "-c", bench_log.FLOOR_BATCH, str(floor_db), "spaced"],
            "env": env,
            "stdin": data,
        }
        c.note(f"batch: {lines:,} lines x {batch_runs} rounds")
        c.out(f"### `log --batch`, {lines:,} mixed zh/en lines ({batch_runs} rounds)")
        c.out()
        c.out(report(rounds(batch, batch_runs, fresh), floor, per_run=lines))
        c.out()

        one = work / "one.db"
        bench_log.floor_table(one)
        single: dict[str, dict] = {}
        for n, py in enumerate(pythons):
            root = work / f"log-store-{n}"
            cli = [*c.cli_argv(py), "--root", str(root), "log", "--session", "bench"]
            run_child([*cli, bench_log.ZH_TEXT], env)  # the store exists before timing
            single[f"log (one Chinese turn) ({py})"] = {
                "argv": [*cli, "--role", "user", bench_log.ZH_TEXT],
                "env": env,
            }
        floor = "floor: python -c sqlite3 WAL insert"
        single[floor] = {"argv": [pythons[0], "-c", bench_log.FLOOR_ONE, str(one),
                                  bench_log.ZH_TEXT], "env": env}  # fmt: skip
        c.note(f"one call: {single_runs} rounds")
        c.out(f"### one `log` call, whole process ({single_runs} rounds)")
        c.out()
        c.out(report(rounds(single, single_runs), floor))
        c.out()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    c.out(f"Load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
