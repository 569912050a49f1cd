#!/usr/bin/env python3
"""Benchmark ``soloqueue-mem hook claude``: one hook call, whole process, beside a
``log`` call and the python+sqlite floor, all in one interleaved run.

Hook calls: ``PostToolUse`` (logs the call and its result: two turns) and
``UserPromptSubmit`` (logs the prompt), each with its payload on stdin, as Claude Code
runs them; ``SessionStart`` (reads the brief) is shown too. The floor is bench_log's: a
bare ``python -c`` that opens SQLite in WAL mode and inserts one row into an existing
table. Goal: a hook call's median <= 4x the floor (issue 13: no more than a ``log``
call). Goals are reported, not enforced.

Run with the interpreter of a non-editable install (so .pyc files exist), e.g.
``/tmp/bench-venv/bin/python benchmarks/bench_hook.py [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

import _common as c
from bench_log import FLOOR_ONE, ZH_TEXT

SESSION = "7f3c2a9e-1b4d-4c8e-9a51-2d6f0e8b4c17"
PAYLOADS: dict[str, dict[str, object]] = {
    "UserPromptSubmit": {"prompt": ZH_TEXT},
    "PostToolUse": {
        "tool_name": "Bash",
        "tool_input": {"command": "pytest tests/test_checkout.py -x -q"},
        "tool_response": {"stdout": "1 failed in 31.02s\n" + ZH_TEXT, "stderr": ""},
        "tool_use_id": "toolu_bench",
    },
    "SessionStart": {"source": "startup"},
}


def payload(event: str) -> bytes:
    data: dict[str, object] = {
        "session_id": SESSION,
        "cwd": "/tmp",
        "hook_event_name": event,
        **PAYLOADS[event],
    }
    return json.dumps(data, ensure_ascii=False).encode()


def bench(python: str, work: Path, runs: int) -> tuple[str, bool]:
    env = c.timing_env()
    cli = c.cli_argv(python)
    store = work / "store"
    store.mkdir(mode=0o700)
    root = ["--root", str(store)]
    for i in range(3):  # an existing store with a scratchpad and a few turns
        c.run_timed([*cli, *root, "log", "--session", "bench", f"{ZH_TEXT} {i}"], env)
    c.run_timed([*cli, *root, "scratchpad", "set", "## 当前项目\n- checkout 超时\n"], env)
    floor_db = work / "floor.db"
    conn = sqlite3.connect(floor_db)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)")
    conn.commit()
    conn.close()
    commands: dict[str, c.Timed] = {
        "floor: python -c sqlite3 WAL insert": {
            "argv": [python, "-c", FLOOR_ONE, str(floor_db), ZH_TEXT],
            "env": env,
        },
        "soloqueue-mem log (zh)": {
            "argv": [*cli, *root, "log", "--session", "bench", ZH_TEXT],
            "env": env,
        },
    }
    for event in PAYLOADS:
        commands[f"soloqueue-mem hook claude ({event})"] = {
            "argv": [*cli, *root, "hook", "claude"],
            "env": env,
            "stdin": payload(event),
        }
    c.note(f"timing {len(commands)} commands x {runs} runs, interleaved")
    times = c.interleaved(commands, runs)
    floor = c.median(times["floor: python -c sqlite3 WAL insert"])
    log = c.median(times["soloqueue-mem log (zh)"])
    rows = [
        [
            label,
            c.ms(c.median(values)),
            c.ms(c.p90(values)),
            f"{c.median(values) / floor:.2f}x",
            f"{c.median(values) / log:.2f}x",
        ]
        for label, values in times.items()
    ]
    hooks = {label: c.median(v) for label, v in times.items() if "hook" in label}
    worst = max(hooks.values())
    ok = worst <= 4 * floor
    errors = store / "logs" / "hook-errors.jsonl"
    text = [
        f"### one `hook claude` call, whole process ({runs} runs each, interleaved)",
        "",
        c.table(["command", "median ms", "p90 ms", "vs floor", "vs log"], rows),
        "",
        f"Hook errors logged during the run: "
        f"{len(errors.read_text().splitlines()) if errors.exists() else 0} (expected 0).",
        "",
        f"Goal: every hook call's median <= 4x floor: slowest {c.ms(worst)} ms = "
        f"{worst / floor:.2f}x floor -> {c.verdict(ok)}",
    ]
    return "\n".join(text), ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small fast run")
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="interpreter whose soloqueue-mem is timed (default: this one)",
    )
    parser.add_argument("--runs", type=int, help="runs per command (default 30, quick 10)")
    args = parser.parse_args()
    runs = args.runs or (10 if args.quick else 30)
    c.out(f"## bench_hook{' (quick)' if args.quick else ''}")
    c.out()
    c.out(c.machine_line(args.python))
    c.out()
    work = Path(tempfile.mkdtemp(prefix="bench-hook-", dir=c.CACHE if c.CACHE.exists() else None))
    try:
        text, _ok = bench(args.python, work, runs)
        c.out(text)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
