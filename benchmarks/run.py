#!/usr/bin/env python3
"""Every performance figure of the manual (docs/benchmarks.md) in one run, each beside its floor.

Prints that performance table (Markdown) on stdout and writes the raw
figures (every timing, min/median/max, peak RSS, machine, load average, versions) as
JSON under ``benchmarks/out/``. Commands are timed whole-process, round-robin with
their floors (``_common.interleaved``'s rule), and their peak RSS is read from the
kernel's rusage of each child (``os.wait4``).

``--quick`` (the default): a 100,000-turn / 10,000-memory store, 20,000 batch lines,
a few minutes on 2 cores. ``--full``: the 1,000,000-turn / 100,000-memory stores of
``bench_trace.py`` / ``bench_recall.py``, built once in the cache folder and reused,
100,000 batch lines timed and 1,000,000 streamed for memory. The other scripts keep
their detailed reports (per query, per phase); this one is the summary.

Run with the interpreter of a non-editable install (see README.md here), e.g.
``/tmp/bench-venv/bin/python benchmarks/run.py --quick``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TypedDict

import _common as c
import bench_log
import bench_recall
import bench_trace

c.import_project()

OUT = c.REPO / "benchmarks" / "out"


class Sizes(TypedDict):
    """Store sizes, batch lines timed and streamed for memory, runs of each start-up
    command, runs of each query; consolidate's store (turns, memories): at 1M turns it
    would take most of an hour on this machine."""

    turns: int
    memories: int
    batch: int
    stream: int
    runs: int
    repeats: int
    consolidate: tuple[int, int]


SIZES: dict[str, Sizes] = {
    "quick": {"turns": 100_000, "memories": 10_000, "batch": 20_000, "stream": 200_000,
              "runs": 10, "repeats": 3, "consolidate": (10_000, 1_000)},
    "full": {"turns": 1_000_000, "memories": 100_000, "batch": 100_000, "stream": 1_000_000,
             "runs": 30, "repeats": 10, "consolidate": (100_000, 10_000)},
}  # fmt: skip
SEED = 7  # bench_trace's and bench_recall's default: their cached stores are reused
BATCH_SEED = 20250101
ALL_RECENT_SPACING_S = 0.25  # 1M turns in under 3 days: every turn in recall's recent window


class Measured:
    """One command's runs: wall seconds of each, peak RSS (KiB) of those measured."""

    def __init__(self) -> None:
        self.seconds: list[float] = []
        self.rss_kib: list[int] = []

    def summary(self) -> dict[str, float | int]:
        return {
            "runs": len(self.seconds),
            "min_s": min(self.seconds),
            "median_s": c.median(self.seconds),
            "max_s": max(self.seconds),
            "peak_rss_kib": max(self.rss_kib),
        }


# A child started by vfork (Python's subprocess) inherits this process's RSS high-water
# mark at exec, so each command's peak RSS is read from GNU time, whose own small
# process is the one that forks.
GNU_TIME = "/usr/bin/time"


def run_measured(
    argv: list[str],
    env: dict[str, str],
    stdin: Path | None = None,
    capture: bool = False,
    rss: bool = True,
) -> tuple[float, int, bytes]:
    """Run ``argv`` once: (wall seconds, peak RSS in KiB or 0 when not asked,
    stdout if captured). GNU time adds about a millisecond to the wall time."""
    with (
        open(stdin or os.devnull, "rb") as source,
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.NamedTemporaryFile("r") as peak,
    ):
        wrapped = [GNU_TIME, "-f", "%M", "-o", peak.name, *argv] if rss else argv
        start = time.perf_counter()
        code = subprocess.call(
            wrapped,
            env=env,
            cwd=c.neutral_cwd(),
            stdin=source,
            stdout=out if capture else subprocess.DEVNULL,
            stderr=err,
        )
        elapsed = time.perf_counter() - start
        if code != 0:
            err.seek(0)
            raise RuntimeError(
                f"{' '.join(argv)[:200]} exited {code}: "
                f"{err.read().decode(errors='replace')[-1500:]}"
            )
        out.seek(0)
        kib = int(peak.read().split()[-1]) if rss else 0
        return elapsed, kib, out.read() if capture else b""


def interleaved(commands: dict[str, dict], runs: int) -> dict[str, Measured]:
    """Each command ``runs`` times, round-robin, after one untimed round that reads
    their peak RSS (timed runs go without GNU time, to the millisecond)."""
    found = {label: Measured() for label in commands}
    for label, kwargs in commands.items():
        found[label].rss_kib.append(run_measured(**kwargs)[1])
    for _ in range(runs):
        for label, kwargs in commands.items():
            found[label].seconds.append(run_measured(**kwargs, rss=False)[0])
    return found


# --- the figures ---------------------------------------------------------------------


def bench_startup(python: str, work: Path, runs: int) -> dict[str, Measured]:
    """One Chinese `log` into an existing store, `--version`, `--help`, their floors."""
    env = c.timing_env()
    cli = c.cli_argv(python)
    store = work / "log-store"
    for i in range(3):
        run_measured([*cli, "--root", str(store), "log", "-s", "bench", f"{bench_log.ZH_TEXT}{i}"],
                     env)  # fmt: skip
    floor_db = bench_log.floor_table(work / "floor.db")
    log = [*cli, "--root", str(store), "log", "--session", "bench", "--role", "user"]
    commands = {
        "python -c pass": [python, "-c", "pass"],
        "floor: python + sqlite3 WAL insert": [
            python, "-c", bench_log.FLOOR_ONE, str(floor_db), bench_log.ZH_TEXT
        ],
        "log (one Chinese turn)": [*log, bench_log.ZH_TEXT],
        "--version": [*cli, "--version"],
        "--help": [*cli, "--help"],
    }  # fmt: skip
    c.note(f"start-up: {len(commands)} commands x {runs} runs, interleaved")
    return interleaved({k: {"argv": v, "env": env} for k, v in commands.items()}, runs)


def bench_batch(python: str, work: Path, lines: int, stream: int, runs: int) -> dict:
    """`log --batch` against the index-form floor (fresh stores each run), and the peak
    RSS of `log --batch` at ``stream`` lines against ``lines``."""
    env = c.timing_env()
    cli = c.cli_argv(python)
    data = work / "batch.jsonl"
    c.note(f"batch: generating {lines:,} lines")
    bench_log.write_jsonl(data, lines, BATCH_SEED)
    found = {"log --batch": Measured(), "floor: sqlite3 + FTS5, index form": Measured()}
    for round_ in range(runs):
        c.note(f"batch: round {round_ + 1}/{runs}")
        store, floor_db = work / "batch-store", work / "batch-floor.db"
        for argv, label in (
            ([*cli, "--root", str(store), "log", "--batch", "--format", "jsonl"], "log --batch"),
            ([python, "-c", bench_log.FLOOR_BATCH, str(floor_db), "spaced"],
             "floor: sqlite3 + FTS5, index form"),
        ):  # fmt: skip
            shutil.rmtree(store, ignore_errors=True)
            for path in work.glob("batch-floor.db*"):
                path.unlink()
            seconds, rss, _ = run_measured(argv, env, stdin=data)
            found[label].seconds.append(seconds)
            found[label].rss_kib.append(rss)
    shutil.rmtree(work / "batch-store", ignore_errors=True)
    big = work / "stream.jsonl"
    c.note(f"batch: streaming {stream:,} lines for memory")
    with open(data, "rb") as source, open(big, "wb") as target:
        chunk = source.read()
        for _ in range(-(-stream // lines)):
            target.write(chunk)
    seconds, rss, _ = run_measured(
        [*cli, "--root", str(work / "stream-store"), "log", "--batch", "--format", "text"],
        env,
        stdin=big,
    )
    big.unlink()
    shutil.rmtree(work / "stream-store", ignore_errors=True)
    streamed = Measured()
    streamed.seconds.append(seconds)
    streamed.rss_kib.append(rss)
    return {"runs": found, "streamed": streamed, "stream_lines": -(-stream // lines) * lines}


def query_commands(python: str, store: Path, command: str, floor: str, env: dict) -> list:
    """(lang, query, commands) for bench_trace's 20 queries."""
    from soloqueue_mem.text.fts import match_expression, query_terms
    from soloqueue_mem.text.lexicon import open_lexicon

    lexicon = open_lexicon(c.CACHE / "lexicon")
    cli = c.cli_argv(python)
    found = []
    for lang, query in bench_trace.queries():
        match = match_expression(query_terms(query, lambda: lexicon)) or '""'
        found.append((lang, query, {
            command: {"argv": [*cli, "--root", str(store), command, query, "--format", "json"],
                      "env": env},
            "floor": {"argv": [python, "-c", floor, str(store / "memory.db"), match], "env": env},
        }))  # fmt: skip
    return found


def bench_queries(
    python: str, store: Path, command: str, floor: str, env: dict, repeats: int
) -> dict[str, dict[str, Measured]]:
    """Whole-process ``command QUERY --format json`` for the 20 queries, each beside
    its floor (bench_trace's for trace, bench_recall's for recall)."""
    cli = c.cli_argv(python)
    # The first Han query of a store builds its lexicon (once per store): untimed.
    run_measured([*cli, "--root", str(store), command, "中国", "--format", "json"], env)
    found = {}
    for lang, query, commands in query_commands(python, store, command, floor, env):
        c.note(f"{command} {store.name}: {lang} {query!r}")
        found[query] = interleaved(commands, repeats)
    return found


def copy_store(source: Path, target: Path) -> None:
    """A consistent copy of a store that a recall may be writing to (access counts):
    memory.db through SQLite's backup, the rest as files."""
    shutil.copytree(source, target, symlinks=True, ignore=shutil.ignore_patterns("memory.db*"))
    origin = sqlite3.connect(f"file:{source / 'memory.db'}?mode=ro", uri=True)
    copy = sqlite3.connect(target / "memory.db")
    with copy:
        origin.backup(copy)
    origin.close()
    copy.close()


def all_recent_store(source: Path, now: str) -> Path:
    """A copy of the recall store whose turns all fall within the last three days
    before ``now`` (timestamps rewritten in the index, newest unchanged): recall's
    recent channel then searches every turn, its worst case. Cached beside ``source``.
    The JSONL logs keep the old times: a benchmark fixture, not a store to verify."""
    target = source.with_name(source.name + "-allrecent")
    if (target / "bench-build.json").exists():
        return target
    tmp = source.with_name(".building-" + target.name)
    shutil.rmtree(tmp, ignore_errors=True)
    c.note(f"copying {source} to {tmp} and moving every turn into the recent window")
    copy_store(source, tmp)
    conn = sqlite3.connect(tmp / "memory.db")
    newest = conn.execute("SELECT MAX(id) FROM conversation_turns").fetchone()[0]
    with conn:
        conn.execute(
            "UPDATE conversation_turns SET timestamp = strftime('%Y-%m-%dT%H:%M:%fZ', ?,"
            " printf('-%.3f seconds', (? - id) * ?) , '-1 hour')",
            (now, newest, ALL_RECENT_SPACING_S),
        )
        conn.execute(
            "UPDATE sessions SET started_at = (SELECT MIN(timestamp) FROM conversation_turns t"
            " WHERE t.session_id = sessions.session_id), last_turn_at = (SELECT MAX(timestamp)"
            " FROM conversation_turns t WHERE t.session_id = sessions.session_id)"
        )
    conn.close()
    info = json.loads((source / "bench-build.json").read_text())
    info["all_recent_spacing_s"] = ALL_RECENT_SPACING_S
    (tmp / "bench-build.json").write_text(json.dumps(info))
    tmp.rename(target)
    return target


def bench_consolidate(python: str, source: Path, now: str, work: Path) -> Measured:
    """One ``consolidate`` on a copy of the recall store (its memories and idle
    sessions): time and peak RSS."""
    store = work / "consolidate-store"
    c.note(f"consolidate: copying {source}")
    copy_store(source, store)
    subprocess.run(["sync"], check=False)
    cli = c.cli_argv(python)
    seconds, rss, _ = run_measured(
        [*cli, "--root", str(store), "consolidate", "--format", "json"],
        c.timing_env(SOLOQUEUE_NOW=now),
    )
    shutil.rmtree(store, ignore_errors=True)
    found = Measured()
    found.seconds.append(seconds)
    found.rss_kib.append(rss)
    return found


# --- the table ---------------------------------------------------------------------


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds >= 0.1 else f"{seconds * 1000:.1f} ms"


def mib(kib: int) -> str:
    return f"{kib / 1024:.0f} MiB"


def spread(m: Measured) -> str:
    return f"{ms(c.median(m.seconds))} ({ms(min(m.seconds))}–{ms(max(m.seconds))})"


def query_rows(label: str, results: dict[str, dict[str, Measured]], command: str) -> list[list]:
    ours = [c.median(r[command].seconds) for r in results.values()]
    floors = [c.median(r["floor"].seconds) for r in results.values()]
    worst = max(results, key=lambda q: c.median(results[q][command].seconds))
    rss = max(max(r[command].rss_kib) for r in results.values())
    med, top = c.median(ours), max(ours)
    return [[
        label,
        f"median {ms(med)}, worst {ms(top)} (`{worst}`)",
        f"median {ms(c.median(floors))}, worst {ms(max(floors))}",
        f"{med / c.median(floors):.1f}x",
        "median <= 150 ms, worst <= 300 ms",
        c.verdict(med <= 0.150 and top <= 0.300),
        mib(rss),
    ]]  # fmt: skip


def report(found: dict, sizes: Sizes) -> str:
    start = found["startup"]
    floor = c.median(start["floor: python + sqlite3 WAL insert"].seconds)
    log = c.median(start["log (one Chinese turn)"].seconds)
    rows = []
    for label in ("log (one Chinese turn)", "--version", "--help"):
        m = start[label]
        goal, ok = {
            "log (one Chinese turn)": ("<= 2x floor", log <= 2 * floor),
            "--version": ("<= the `log` call", c.median(m.seconds) <= log),
            "--help": ("— (report)", None),
        }[label]
        rows.append([
            f"`{label}`", spread(m), spread(start["floor: python + sqlite3 WAL insert"]),
            f"{c.median(m.seconds) / floor:.2f}x", goal,
            "—" if ok is None else c.verdict(ok), mib(max(m.rss_kib)),
        ])  # fmt: skip
    batch = found["batch"]
    ours, base = batch["runs"]["log --batch"], batch["runs"]["floor: sqlite3 + FTS5, index form"]
    n = sizes["batch"]
    rate, floor_rate = n / c.median(ours.seconds), n / c.median(base.seconds)
    rows.append([
        f"`log --batch`, {n:,} zh/en lines", f"{rate:,.0f} turns/s ({spread(ours)})",
        f"{floor_rate:,.0f} turns/s ({spread(base)})", f"{rate / floor_rate:.2f}x",
        ">= 0.5x floor", c.verdict(rate >= 0.5 * floor_rate), mib(max(ours.rss_kib)),
    ])  # fmt: skip
    streamed = batch["streamed"]
    bounded = max(streamed.rss_kib) <= 1.25 * max(ours.rss_kib)
    rows.append([
        f"`log --batch`, {batch['stream_lines']:,} lines (memory)",
        f"{batch['stream_lines'] / streamed.seconds[0]:,.0f} turns/s", "—", "—",
        f"peak RSS as at {n:,} lines", c.verdict(bounded), mib(max(streamed.rss_kib)),
    ])  # fmt: skip
    turns, memories = sizes["turns"], sizes["memories"]
    rows += query_rows(f"`trace`, {turns:,} turns, 20 queries", found["trace"], "trace")
    rows += query_rows(
        f"`recall`, {turns:,} turns + {memories:,} memories", found["recall"], "recall"
    )
    rows += query_rows(
        "`recall`, the same, every turn in the recent window",
        found["recall_all_recent"],
        "recall",
    )
    if "consolidate" in found:
        m = found["consolidate"]
        rows.append([
            "`consolidate`, {:,} turns + {:,} memories".format(*sizes["consolidate"]),
            ms(m.seconds[0]), "—",
            "—", "— (report)", "—", mib(max(m.rss_kib)),
        ])  # fmt: skip
    headers = ["command", "ours: median (min–max)", "floor, same run", "ratio", "goal",
               "verdict", "peak RSS"]  # fmt: skip
    return c.table(headers, rows)


def floors_note(sizes: Sizes) -> str:
    return (
        "Floors: `log` — `python -c` opening SQLite in WAL mode and inserting one row; "
        "`--version`/`--help` — the `log` call; `log --batch` — one `python -c` reading "
        "the same JSONL into a table plus FTS5 with CJK runs as bigrams, 500 rows per "
        "transaction; `trace` — the same MATCH with bm25 top 10 through sqlite3; "
        "`recall` — the same MATCH on the memory index, bm25 top 30. Query figures are "
        f"medians over each query's {sizes['repeats']} runs; peak RSS is the largest "
        "of any run."
    )


def versions(python: str) -> dict[str, str]:
    return {
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "project": c.project_version(python),
        "timed_interpreter": python,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="small stores (default)")
    mode.add_argument("--full", action="store_true", help="1M turns, 100k memories")
    parser.add_argument("--python", default=sys.executable, help="interpreter to time")
    parser.add_argument("--no-consolidate", action="store_true", help="skip consolidate")
    args = parser.parse_args()
    name = "full" if args.full else "quick"
    sizes = SIZES[name]
    started = datetime.now(UTC)
    load_start = os.getloadavg()
    c.note(c.machine_line(args.python))
    work = Path(tempfile.mkdtemp(prefix="bench-run-", dir=c.neutral_cwd()))
    found: dict = {}
    try:
        found["startup"] = bench_startup(args.python, work, sizes["runs"])
        found["batch"] = bench_batch(
            args.python, work, sizes["batch"], sizes["stream"], 3 if name == "quick" else 5
        )
        trace_store, _ = bench_trace.build_store(sizes["turns"], SEED, 1000)
        found["trace"] = bench_queries(
            args.python, trace_store, "trace", bench_trace.FLOOR, c.timing_env(),
            sizes["repeats"],
        )  # fmt: skip
        recall_store, info = bench_recall.build_store(sizes["turns"], sizes["memories"], SEED)
        env = c.timing_env(SOLOQUEUE_NOW=info["now"])
        found["recall"] = bench_queries(
            args.python, recall_store, "recall", bench_recall.FLOOR, env, sizes["repeats"]
        )
        recent = all_recent_store(recall_store, info["now"])
        found["recall_all_recent"] = bench_queries(
            args.python, recent, "recall", bench_recall.FLOOR, env, sizes["repeats"]
        )
        if not args.no_consolidate:
            turns, memories = sizes["consolidate"]
            source, small = bench_recall.build_store(turns, memories, SEED)
            found["consolidate"] = bench_consolidate(args.python, source, small["now"], work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load_end = os.getloadavg()
    title = (
        f"Measured {started:%Y-%m-%d} with `benchmarks/run.py --{name}` on "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"SQLite {sqlite3.sqlite_version}; load average {load_start[0]:.2f} at start, "
        f"{load_end[0]:.2f} at end."
    )
    c.out(title)
    c.out()
    c.out(report(found, sizes))
    c.out()
    c.out(floors_note(sizes))
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"run-{name}-{started:%Y%m%dT%H%M%SZ}.json"
    raw = {
        "mode": name,
        "sizes": sizes,
        "started": started.isoformat(),
        "machine": {
            "platform": platform.platform(),
            "machine": platform.machine(),
            "cores": os.cpu_count(),
        },
        "load_average": {"start": load_start, "end": load_end},
        "versions": versions(args.python),
        "figures": _raw(found),
    }
    path.write_text(json.dumps(raw, indent=1, ensure_ascii=False), encoding="utf-8")
    c.note(f"raw figures: {path}")
    return 0


def _raw(value):
    """The measurements as JSON: every run's seconds and RSS, and their summary."""
    if isinstance(value, Measured):
        return {**value.summary(), "seconds": value.seconds, "rss_kib": value.rss_kib}
    if isinstance(value, dict):
        return {key: _raw(item) for key, item in value.items()}
    return value


if __name__ == "__main__":
    sys.exit(main())
