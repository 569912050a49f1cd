#!/usr/bin/env python3
"""Benchmark ``soloqueue-mem log``: one hook call, and a large ``--batch`` import.

(a) One ``log`` call with Chinese text, whole process, into an existing store, against
    the floor: a bare ``python -c`` that opens SQLite in WAL mode and inserts one row
    into an existing table. Goal: median <= 4x the floor and <= 100 ms.
(b) ``log --batch --format jsonl`` of N seeded mixed zh/en turns (~200 characters) in
    one process, against the floor: one plain Python process inserting the same JSONL
    texts with sqlite3 into a table plus an FTS5 index, 500 rows per transaction.
    Goal: >= 5000 turns/s. Afterwards the store must hold N turns and ``trace`` must
    find a known turn.

Exit status 1 only if the batch verification fails; goals are reported, not enforced.
Run with the interpreter of a non-editable install (so .pyc files exist), e.g.
``/tmp/bench-venv/bin/python benchmarks/bench_log.py [--quick]``.
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

# Opt-in settings measured beside the default (label -> config.toml).
CONFIGS = {
    "": "",
    "redact = true": "redact = true\n",
    "extract_on_log = true": "extract_on_log = true\n",
}
SECRET = "sk-proj-" + "x" * 40
ZH_TEXT = "今天和产品团队开会，决定把搜索索引改成按字切分，下周一之前完成迁移并补上基准测试。"

FLOOR_ONE = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA journal_mode = WAL")
conn.execute("PRAGMA synchronous = NORMAL")
conn.execute("INSERT INTO t (body) VALUES (?)", (sys.argv[2],))
conn.close()
"""

# The batch floor: same JSONL on stdin, json.loads per line, a content table plus a
# contentless FTS5 index with the product's tokenizer, 500 rows per transaction.
FLOOR_BATCH = r"""
import json, re, sqlite3, sys
spaced = sys.argv[2] == "spaced"
cjk = re.compile("(?:[\u3040-\u30ff]|[\u3400-\u9fff]|[\uac00-\ud7af]|[\uf900-\ufaff])+")
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA journal_mode = WAL")
conn.execute("PRAGMA synchronous = NORMAL")
conn.executescript('''
CREATE TABLE turns (id INTEGER PRIMARY KEY, session TEXT, role TEXT, content TEXT, ts TEXT);
CREATE VIRTUAL TABLE turns_fts USING fts5(body, content='',
    tokenize='porter unicode61 remove_diacritics 2');
''')
def flush(rows):
    conn.execute("BEGIN IMMEDIATE")
    for obj in rows:
        text = obj["content"]
        rowid = conn.execute(
            "INSERT INTO turns (session, role, content, ts) VALUES (?, ?, ?, ?)",
            (obj["session"], obj["role"], text, obj["timestamp"])).lastrowid
        if spaced and not text.isascii():
            # the index form: each CJK run as its bigrams and its last character
            text = cjk.sub(lambda m: " " + " ".join(m[0][i:i + 2] for i in range(len(m[0])))
                           + " ", text)
        conn.execute("INSERT INTO turns_fts (rowid, body) VALUES (?, ?)", (rowid, text))
    conn.execute("COMMIT")
rows = []
for line in sys.stdin.buffer:
    rows.append(json.loads(line))
    if len(rows) == 500:
        flush(rows)
        rows = []
flush(rows)
conn.close()
"""


def floor_table(path: Path) -> Path:
    """The existing WAL database and table that :data:`FLOOR_ONE` inserts into."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)")
    conn.commit()
    conn.close()
    return path


def bench_single(python: str, work: Path, runs: int) -> tuple[str, bool]:
    env = c.timing_env()
    cli = c.cli_argv(python)
    # Existing stores, created by a first call with a few turns in them: the default
    # settings, and each opt-in setting that runs on log's path.
    stores = {label: work / f"store-{n}" for n, label in enumerate(CONFIGS)}
    for label, store in stores.items():
        store.mkdir(mode=0o700)
        (store / "config.toml").write_text(CONFIGS[label], encoding="utf-8")
        for i in range(3):
            c.run_timed(
                [*cli, "--root", str(store), "log", "--session", "bench", f"{ZH_TEXT} {i}"], env
            )
    store = stores[""]
    floor_db = floor_table(work / "floor.db")
    log_args = ["--root", str(store), "log", "--session", "bench", "--role", "user", ZH_TEXT]
    commands: dict[str, c.Timed] = {
        "python -c pass": {"argv": [python, "-c", "pass"], "env": env},
        'python -c "import typer"': {"argv": [python, "-c", "import typer"], "env": env},
        "floor: python -c sqlite3 WAL insert": {
            "argv": [python, "-c", FLOOR_ONE, str(floor_db), ZH_TEXT],
            "env": env,
        },
        "soloqueue-mem log (zh)": {"argv": [*cli, *log_args], "env": env},
        "python -m soloqueue_mem log (zh)": {
            "argv": [python, "-m", "soloqueue_mem", *log_args],
            "env": env,
        },
    }
    for label, other in stores.items():
        if label:
            argv = [*cli, "--root", str(other), "log", "--session", "bench", "--role", "user"]
            commands[f"soloqueue-mem log (zh), {label}"] = {"argv": [*argv, ZH_TEXT], "env": env}
            if label.startswith("redact"):
                commands[f"soloqueue-mem log (zh + a secret), {label}"] = {
                    "argv": [*argv, f"{ZH_TEXT} password={SECRET}"],
                    "env": env,
                }
    c.note(f"(a) timing {len(commands)} commands x {runs} runs, interleaved")
    times = c.interleaved(commands, runs)
    floor = c.median(times["floor: python -c sqlite3 WAL insert"])
    rows = []
    for label, values in times.items():
        rows.append(
            [label, c.ms(c.median(values)), c.ms(c.p90(values)), f"{c.median(values) / floor:.2f}x"]
        )
    log_median = c.median(times["soloqueue-mem log (zh)"])
    ratio = log_median / floor
    ok = ratio <= 4 and log_median <= 0.100
    text = [
        f"### (a) one `log` call, whole process ({runs} runs each, interleaved)",
        "",
        c.table(["command", "median ms", "p90 ms", "vs floor (median)"], rows),
        "",
        f"Goal: `soloqueue-mem log` median <= 4x floor and <= 100 ms: "
        f"{c.ms(log_median)} ms = {ratio:.2f}x floor -> {c.verdict(ok)}",
    ]
    return "\n".join(text), ok


def write_jsonl(path: Path, n: int, seed: int) -> list[dict]:
    """N seeded turns, 1000 consecutive turns per session; returns a few for checks."""
    gen = c.TextGen(seed)
    kept = []
    with open(path, "w", encoding="utf-8") as out:
        for i in range(n):
            obj = {
                "session": f"s{i // 1000:04d}",
                "role": "user" if i % 2 == 0 else "assistant",
                "content": gen.turn(),
                "timestamp": f"2025-01-{1 + (i // 86400) % 28:02d}T{(i // 3600) % 24:02d}:"
                f"{(i // 60) % 60:02d}:{i % 60:02d}Z",
            }
            if i in (0, n // 2, n - 1):
                kept.append(obj)
            out.write(json.dumps(obj, ensure_ascii=False) + "\n")
    return kept


def bench_batch(python: str, work: Path, n: int, seed: int) -> tuple[str, bool]:
    env = c.timing_env()
    cli = c.cli_argv(python)
    data = work / "batch.jsonl"
    c.note(f"(b) generating {n} turns (seed {seed})")
    samples = write_jsonl(data, n, seed)
    size = data.stat().st_size
    chars = 0
    with open(data, encoding="utf-8") as lines:
        for line in lines:
            chars += len(json.loads(line)["content"])

    store = work / "batch-store"
    c.note("(b) soloqueue-mem log --batch")
    product_s, _ = c.run_timed(
        [*cli, "--root", str(store), "log", "--batch", "--format", "jsonl"], env, stdin=data
    )

    floors = {}
    for variant in ("raw", "spaced"):
        db = work / f"floor-{variant}.db"
        c.note(f"(b) floor ({variant})")
        floors[variant], _ = c.run_timed(
            [python, "-c", FLOOR_BATCH, str(db), variant], env, stdin=data
        )

    # Verification: N turns stored, and trace finds known turns.
    conn = sqlite3.connect(f"file:{store / 'memory.db'}?mode=ro", uri=True)
    stored = conn.execute("SELECT COUNT(*) FROM conversation_turns").fetchone()[0]
    fts_rows = conn.execute("SELECT COUNT(*) FROM conversation_turns_fts_docsize").fetchone()[0]
    conn.close()
    checks = []
    for sample in samples:
        had_lexicon = any((store / "cache").glob("lexicon-*"))
        out_s, raw = c.run_timed(
            [
                *cli,
                "--root",
                str(store),
                "trace",
                sample["content"][:120],
                "--session",
                sample["session"],
                "--limit",
                "5",
                "--format",
                "json",
            ],
            env,
            capture=True,
        )
        hits = json.loads(raw)
        found = any(h["content"] == sample["content"] for h in hits)
        top = bool(hits) and hits[0]["content"] == sample["content"]
        built = not had_lexicon and any((store / "cache").glob("lexicon-*"))
        checks.append((sample["session"], found, top, out_s, built))

    rate = n / product_s
    ok = stored == n and all(check[1] for check in checks)  # correctness; goals are reported
    rows = [
        [
            "soloqueue-mem log --batch --format jsonl",
            f"{product_s:.2f}",
            f"{rate:,.0f}",
            f"{product_s / floors['raw']:.2f}x",
            f"{product_s / floors['spaced']:.2f}x",
        ],
        [
            "floor: sqlite3 + FTS5, raw text",
            f"{floors['raw']:.2f}",
            f"{n / floors['raw']:,.0f}",
            "1.00x",
            f"{floors['raw'] / floors['spaced']:.2f}x",
        ],
        [
            "floor: sqlite3 + FTS5, CJK runs as bigrams (index form)",
            f"{floors['spaced']:.2f}",
            f"{n / floors['spaced']:,.0f}",
            f"{floors['spaced'] / floors['raw']:.2f}x",
            "1.00x",
        ],
    ]
    text = [
        f"### (b) `log --batch`: {n:,} mixed zh/en turns, one process",
        "",
        f"Input: {size / 1e6:.1f} MB JSONL, {chars / n:.0f} characters per turn on average, "
        f"{(n + 999) // 1000} sessions of 1,000 turns, seed {seed}. "
        "Floors: one `python -c` process reading the same JSONL, 500 rows per transaction, "
        "WAL, synchronous=NORMAL, tokenizer `porter unicode61 remove_diacritics 2`.",
        "",
        c.table(["process", "seconds", "turns/s", "vs raw floor", "vs index-form floor"], rows),
        "",
        f"Verification: store holds {stored:,} turns ({fts_rows:,} FTS rows), expected {n:,}: "
        f"{'ok' if stored == n else '**MISMATCH**'}.",
        "",
        c.table(
            [
                "trace check (first 120 chars of a turn, --session)",
                "found in top 5",
                "ranked first",
                "trace ms (whole process)",
                "note",
            ],
            [
                [
                    s,
                    "yes" if f else "**no**",
                    "yes" if t else "no",
                    c.ms(sec),
                    "first Han query: built the store's lexicon" if b else "",
                ]
                for s, f, t, sec, b in checks
            ],
        ),
        "",
        f"Goal: >= 5,000 turns/s: {rate:,.0f} turns/s -> {c.verdict(rate >= 5000)}",
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
    parser.add_argument(
        "--runs", type=int, help="runs per single-call command (default 30, quick 10)"
    )
    parser.add_argument("-n", "--turns", type=int, help="batch size (default 100000, quick 10000)")
    parser.add_argument("--seed", type=int, default=20250101)
    parser.add_argument("--only", choices=["single", "batch"])
    args = parser.parse_args()
    runs = args.runs or (10 if args.quick else 30)
    n = args.turns or (10_000 if args.quick else 100_000)

    c.out(f"## bench_log{' (quick)' if args.quick else ''}")
    c.out()
    c.out(c.machine_line(args.python))
    c.out()
    work = Path(tempfile.mkdtemp(prefix="bench-log-", dir=c.CACHE if c.CACHE.exists() else None))
    ok = True
    try:
        if args.only in (None, "single"):
            text, _goal_met = bench_single(args.python, work, runs)
            c.out(text)
            c.out()
        if args.only in (None, "batch"):
            text, good = bench_batch(args.python, work, n, args.seed)
            c.out(text)
            ok &= good
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
