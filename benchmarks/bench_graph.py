#!/usr/bin/env python3
"""Benchmark seed 002's graph memory (``soloqueue-mem graph``), whole processes.

(a) ``graph remember`` of a two-message task against one ``log`` call, both into
    existing stores, interleaved (25 rounds); floor: ``python -c`` inserting a row with
    sqlite3. The bench holds ``.graph.lock``, so the worker each remember starts exits
    at once and only the enqueue (and the spawn) is timed. Goal: remember <= log, as
    the median of the 25 pairs' ratios (each round's remember over its log).
(b) Worker throughput offline: ``graph work`` on N queued two-message tasks (rules:
    segmentation, jieba TF-IDF keywords, nodes, links, focus, a compression slice per
    task); messages/s. Floor: ``python -c`` inserting the same messages as rows, one
    transaction per task.
(c) ``graph recall --depth 2`` on a graph of 100,000 nodes and 1,000,000 links (10
    random out-links per node), 20 keywords; median and worst of the per-keyword
    medians. Floor: ``python -c`` running the same two hops from the focus in SQL.
    Goal: median <= 150 ms. ``--baseline PYTHON`` times another install's CLI (say,
    the main branch's) in the same rounds, for a before/after under the same load.
(d) One compression slice over those 100,000 nodes with its default budget
    (``graph_time_slice``, 30 s): the time it took against the budget.
(e) With ``--locomo N``: LoCoMo hit@10 of ``recall`` (default channels, categories
    1-4) with and without the ``graph`` channel, on the first N conversations; each
    LoCoMo session is one ``graph remember`` task (offline rules), and a graph hit
    counts as the turn its text came from. Measured, no goal.

Goals are reported, not enforced. Run with a non-editable install's interpreter, e.g.
``/tmp/bench-venv/bin/python benchmarks/bench_graph.py [--quick] [--only-remember]``.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import _common as c
from bench_log import FLOOR_ONE, ZH_TEXT

MESSAGES = [
    {
        "role": "user",
        "content": "我们决定用 PostgreSQL 做用户系统的数据库。它支持 JSONB，查询也快。",
    },
    {"role": "assistant", "content": "Good choice. We should deploy it on Kubernetes next week."},
]
FLOOR_WORK = """
import json, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA journal_mode = WAL")
conn.execute("PRAGMA synchronous = NORMAL")
conn.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, body TEXT)")
messages = json.loads(sys.argv[2])
for _ in range(int(sys.argv[3])):
    conn.execute("BEGIN IMMEDIATE")
    for m in messages:
        conn.execute("INSERT INTO t (body) VALUES (?)", (m["content"],))
    conn.execute("COMMIT")
"""
FLOOR_RECALL = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
word = sys.argv[2]
focus = [r[0] for r in conn.execute("SELECT node_id FROM graph_focus ORDER BY seq DESC")]
seen, frontier = set(focus), list(focus)
for _ in range(2):
    nxt = []
    for node in frontier:
        for (to,) in conn.execute(
            "SELECT to_id FROM graph_links WHERE from_id = ? AND strength >= 0.01", (node,)
        ):
            if to not in seen:
                seen.add(to)
                nxt.append(to)
    frontier = nxt
hits = [r for r in conn.execute(
    "SELECT node_id FROM graph_nodes WHERE node_id IN (%s) AND content LIKE ?"
    % ",".join(map(str, seen)), ("%" + word + "%",))]
print(len(hits))
"""
WORDS = [f"word{n}" for n in range(2000)]
PAIRS = 25  # (a)'s rounds: the goal is judged on the median of these pairs' ratios


def bench_remember(cli: list[str], python: str, work: Path) -> None:
    env = c.timing_env()
    store = work / "remember-store"
    store.mkdir(mode=0o700)
    (store / "config.toml").write_text("graph_max_queue_size = 1000000\n")
    c.run_timed([*cli, "--root", str(store), "log", "--session", "bench", ZH_TEXT], env)
    body = json.dumps(MESSAGES, ensure_ascii=False).encode()
    c.run_timed([*cli, "--root", str(store), "graph", "remember"], env, stdin=body)
    floor_db = work / "floor.db"
    with sqlite3.connect(floor_db) as conn:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)")
    fd = os.open(store / ".graph.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)  # the spawned workers leave at once: enqueue only
    load = os.getloadavg()[0]
    try:
        times = c.interleaved(
            {
                "floor: python -c sqlite3 WAL insert": {
                    "argv": [python, "-c", FLOOR_ONE, str(floor_db), ZH_TEXT],
                    "env": env,
                },
                "soloqueue-mem log (zh)": {
                    "argv": [
                        *cli,
                        "--root",
                        str(store),
                        "log",
                        "-s",
                        "bench",
                        "--role",
                        "user",
                        ZH_TEXT,
                    ],
                    "env": env,
                },
                "soloqueue-mem graph remember (2 messages)": {
                    "argv": [*cli, "--root", str(store), "graph", "remember"],
                    "env": env,
                    "stdin": body,
                },
            },
            PAIRS,
        )
    finally:
        os.close(fd)
    floor = c.median(times["floor: python -c sqlite3 WAL insert"])
    logs = times["soloqueue-mem log (zh)"]
    remembers = times["soloqueue-mem graph remember (2 messages)"]
    ratio = c.median([r / g for r, g in zip(remembers, logs, strict=True)])
    rows = [
        (label, c.ms(c.median(v)), c.ms(c.p90(v)), f"{c.median(v) / floor:.2f}×")
        for label, v in times.items()
    ]
    c.out(f"### (a) graph remember vs one log call, {PAIRS} interleaved rounds\n")
    c.out(c.table(["command", "median ms", "p90 ms", "× floor"], rows))
    c.out(f"\nload average {load:.2f} → {os.getloadavg()[0]:.2f} over these rounds")
    c.out(
        f"\ngoal graph remember ≤ log: {c.verdict(ratio <= 1.0)} (remember / log, median "
        f"of {PAIRS} pairs: {ratio:.2f}; medians {c.ms(c.median(remembers))} vs "
        f"{c.ms(c.median(logs))} ms)\n"
    )


def bench_worker(cli: list[str], python: str, work: Path, tasks: int) -> None:
    env = c.timing_env()
    store = work / "worker-store"
    store.mkdir(mode=0o700)
    (store / "config.toml").write_text("graph_max_queue_size = 1000000\n")
    fd = os.open(store / ".graph.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        for n in range(tasks):
            body = [{**m, "content": f"{m['content']} ({n})"} for m in MESSAGES]
            c.run_timed(
                [*cli, "--root", str(store), "graph", "remember"],
                env,
                stdin=json.dumps(body, ensure_ascii=False).encode(),
            )
    finally:
        os.close(fd)
    seconds, _ = c.run_timed([*cli, "--root", str(store), "graph", "work", "--wait"], env)
    floor, _ = c.run_timed(
        [
            python,
            "-c",
            FLOOR_WORK,
            str(work / "worker-floor.db"),
            json.dumps(MESSAGES, ensure_ascii=False),
            str(tasks),
        ],
        env,
    )
    messages = tasks * len(MESSAGES)
    c.out("### (b) worker throughput, offline rules\n")
    c.out(
        c.table(
            ["what", "seconds", "messages/s"],
            [
                (
                    f"graph work: {tasks} tasks, {messages} messages",
                    f"{seconds:.2f}",
                    f"{messages / seconds:.0f}",
                ),
                (
                    "floor: python -c inserting the messages",
                    f"{floor:.2f}",
                    f"{messages / floor:.0f}",
                ),
            ],
        )
    )
    c.out()


def build_big_graph(root: Path, nodes: int, links_per_node: int) -> None:
    """A graph.db of ``nodes`` nodes and ``nodes × links_per_node`` links, migrated by
    the project itself, filled with sqlite3 directly (seeded, deterministic)."""
    c.import_project()
    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.storage.sqlite.stores import open_graph

    c.created(open_graph(Home(root), Config())).close()
    rng = random.Random(2)
    conn = sqlite3.connect(root / "graph.db", isolation_level=None)
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("BEGIN")
    for n in range(1, nodes + 1):
        words = rng.sample(WORDS, 4)
        content = f"memory {n} about " + " ".join(words) + " and some more context here."
        conn.execute(
            "INSERT INTO graph_nodes (node_id, group_id, agent_id, content, phrase,"
            " keywords_json, created_at) VALUES (?, 'default', 'default', ?, ?, ?, ?)",
            (n, content, content[:20], json.dumps(words), "2026-11-26T00:00:00.000Z"),
        )
        conn.executemany(
            "INSERT OR IGNORE INTO graph_keywords (keyword, node_id) VALUES (?, ?)",
            [(w, n) for w in words],
        )
        targets = {rng.randint(1, nodes) for _ in range(links_per_node)} - {n}
        conn.executemany(
            "INSERT OR IGNORE INTO graph_links (from_id, to_id, strength, relation)"
            " VALUES (?, ?, ?, NULL)",
            [(n, t, round(rng.uniform(0.05, 1.0), 3)) for t in targets],
        )
    for seq, node in enumerate(range(nodes - 4, nodes + 1), start=1):
        conn.execute(
            "INSERT INTO graph_focus (group_id, agent_id, node_id, seq)"
            " VALUES ('default', 'default', ?, ?)",
            (node, seq),
        )
    conn.execute("COMMIT")
    conn.close()


def bench_recall(
    cli: list[str], python: str, work: Path, nodes: int, runs: int, baseline: str | None
) -> Path:
    env = c.timing_env()
    store = work / "big-store"
    store.mkdir(mode=0o700)
    started = time.perf_counter()
    build_big_graph(store, nodes, 10)
    with sqlite3.connect(store / "graph.db") as conn:
        links = conn.execute("SELECT COUNT(*) FROM graph_links").fetchone()[0]
    c.note(f"built {nodes} nodes, {links} links in {time.perf_counter() - started:.1f} s")
    words = random.Random(3).sample(WORDS, 20)
    clis = {"recall": cli, **({"baseline": c.cli_argv(baseline)} if baseline else {})}
    medians: dict[str, list[float]] = {label: [] for label in [*clis, "floor"]}
    load = os.getloadavg()[0]
    for word in words:
        recall = ["--root", str(store), "--format", "json", "graph", "recall", "--keywords"]
        commands: dict[str, c.Timed] = {
            label: {"argv": [*argv, *recall, word, "--depth", "2"], "env": env}
            for label, argv in clis.items()
        }
        commands["floor"] = {
            "argv": [python, "-c", FLOOR_RECALL, str(store / "graph.db"), word],
            "env": env,
        }
        times = c.interleaved(commands, runs, warmup=1)
        for label, values in times.items():
            medians[label].append(c.median(values))
    median = c.median(medians["recall"])
    c.out(f"### (c) graph recall --depth 2, {nodes:,} nodes and {links:,} links, whole process\n")
    names = {
        "recall": "graph recall (20 keywords, median of each)",
        "baseline": f"baseline: {c.project_version(baseline or python)}",
        "floor": "floor: python -c, the two hops in SQL",
    }
    c.out(
        c.table(
            ["what", "median ms", "worst ms", "× floor"],
            [
                (
                    names[label],
                    c.ms(c.median(values)),
                    c.ms(max(values)),
                    f"{c.median(values) / c.median(medians['floor']):.2f}×",
                )
                for label, values in medians.items()
            ],
        )
    )
    c.out(f"\nload average {load:.2f} → {os.getloadavg()[0]:.2f} over these rounds")
    c.out(f"\ngoal median ≤ 150 ms: {c.verdict(median <= 0.150)}\n")
    return store


def bench_compress(cli: list[str], store: Path) -> None:
    env = c.timing_env()
    seconds, stdout = c.run_timed(
        [*cli, "--root", str(store), "--format", "json", "graph", "compress"], env, capture=True
    )
    report = json.loads(stdout)
    c.out("### (d) one compression slice (graph_time_slice = 30 s)\n")
    c.out(
        c.table(
            ["what", "seconds", "visited", "compressed", "deleted", "kept", "stopped"],
            [
                (
                    "graph compress, whole process",
                    f"{seconds:.1f}",
                    report["visited"],
                    report["compressed"],
                    report["deleted"],
                    report["kept"],
                    report["stopped"],
                )
            ],
        )
    )
    c.out(f"\ngoal within its budget (30 s + start-up): {c.verdict(seconds <= 31)}\n")


def bench_locomo(conversations: int) -> None:
    c.import_project()
    import bench_locomo as lb

    from soloqueue_mem.cli.graph_worker import lexicon_for
    from soloqueue_mem.config import Config
    from soloqueue_mem.graph.params import Params
    from soloqueue_mem.graph.steps import Steps
    from soloqueue_mem.graph.store import Scope
    from soloqueue_mem.graph.worker import drain
    from soloqueue_mem.memory.recall import Hit, Request, default_channels
    from soloqueue_mem.storage.graph import open_graph_db

    data = json.loads((c.BENCH_DATA / "locomo10.json").read_text(encoding="utf-8"))
    config = Config()
    without = tuple(name for name in default_channels() if name != "graph")
    scores: dict[str, list[bool]] = {"recall": [], "recall + graph": []}
    nodes = 0
    with tempfile.TemporaryDirectory(prefix="bench-graph-locomo-") as folder:
        for index, sample in enumerate(data[:conversations]):
            conv = sample["conversation"]
            home, conn, docs, now = lb.ingest(Path(folder) / f"conv-{index}", conv)
            lexicon = lexicon_for(home)
            graph = open_graph_db(home, config)  # graph.db: the default config has no database
            assert graph is not None  # created
            scope = Scope("locomo", "agent")
            for _, _, turns in lb.sessions_of(conv):
                messages = [{"role": "user", "content": lb.turn_text(t)} for t in turns]
                graph.enqueue(scope, messages, "2023-01-01T00:00:00.000Z", 10**6)
            nodes += drain(graph, Steps(lexicon), Params())["nodes"]
            graph.close()
            known = {dia for dia, _ in docs}

            def dia_of(hit: Hit, docs: list[tuple[str, str]] = docs) -> str | None:
                if hit.candidate.turn is not None:
                    return c.logged(hit.candidate.turn, "dia_id")
                text = hit.candidate.content
                return next((dia for dia, body in docs if text in body), None)

            for qa in sample["qa"]:
                evidence, _ = lb.clean_evidence(qa.get("evidence", []), known)
                if not evidence or qa["category"] == 5:
                    continue
                for name, channels in (("recall", without), ("recall + graph", None)):
                    request = Request(qa["question"], channels=channels, limit=10)
                    found = c.recall_in(home, request, config, now, lexicon)
                    ids = {dia_of(h) for h in found.hits}
                    scores[name].append(bool(ids & set(evidence)))
            conn.close()
    c.out(f"### (e) LoCoMo hit@10, {conversations} conversation(s), categories 1-4\n")
    c.out(
        c.table(
            ["recall", "questions", "hit@10"],
            [(name, len(v), c.pct(sum(v) / max(1, len(v)))) for name, v in scores.items()],
        )
    )
    c.out(f"\n({nodes:,} graph nodes built by the offline rules)\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="10k nodes, fewer runs")
    parser.add_argument("--locomo", type=int, default=0, help="(e) on N LoCoMo conversations")
    parser.add_argument("--only-locomo", action="store_true", help="skip (a)-(d)")
    parser.add_argument("--only-remember", action="store_true", help="(a) alone")
    parser.add_argument("--python", default=os.environ.get("BENCH_PYTHON", sys.executable))
    parser.add_argument("--baseline", help="(c) also times this interpreter's install")
    args = parser.parse_args()
    python = args.python
    cli = c.cli_argv(python)
    c.out(c.machine_line(python) + "\n")
    if args.locomo:
        bench_locomo(args.locomo)
    if args.only_locomo:
        return
    with tempfile.TemporaryDirectory(prefix="bench-graph-") as folder:
        work = Path(folder)
        bench_remember(cli, python, work)
        if args.only_remember:
            return
        bench_worker(cli, python, work, 20 if args.quick else 100)
        store = bench_recall(
            cli,
            python,
            work,
            10_000 if args.quick else 100_000,
            2 if args.quick else 3,
            args.baseline,
        )
        bench_compress(cli, store)


if __name__ == "__main__":
    main()
