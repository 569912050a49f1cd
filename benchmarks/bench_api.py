#!/usr/bin/env python3
"""Benchmark warm ``recall`` through the Python API, the MCP server and the HTTP API.

A store of 100,000 seeded mixed zh/en memories (quick: 10,000) added through the
library's ``remember`` (ages spread over 90 days) and 2,000 logged turns is built once
and cached under /tmp/soloqueue-bench/. For the same 10 Chinese and 10 English queries
as ``bench_trace.py``, each path is timed warm (after two untimed calls per query),
the four paths in turn within every round so drift and load hit all alike:

- ``Store.recall(query)`` in this process (one Store, kept open);
- the ``recall`` tool of ``soloqueue-mem mcp`` through the MCP SDK's client over stdio
  (one server process for the run; the time is the client's round trip);
- ``POST /api/v1/recall`` of ``soloqueue-mem serve`` over one kept-alive HTTP
  connection (http.client).

Floor, in the same run: the same FTS5 MATCH expression (built by the project's query
code) against the memory index through an open sqlite3 connection in this process
(bm25, top 30, joined to ``memories``). Goal: each path's median <= 30 ms.

Wall time on a loaded machine is mostly waiting for a core, so CPU time is reported
beside it: for the in-process paths their own, for a server the CPU its process (all
threads) used during the timed calls, from /proc (10 ms ticks: a mean over the calls,
not a median).

Run: ``/tmp/bench-venv/bin/python benchmarks/bench_api.py [--quick] [--repeats N]``
(the interpreter needs the ``mcp`` and ``server`` extras).
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import _common as c
import bench_trace

if TYPE_CHECKING:
    from soloqueue_mem.api.store import Store

c.import_project()

FLOOR_SQL = (
    "SELECT m.id, m.content, h.score FROM ("
    " SELECT rowid, bm25(memories_fts) AS score FROM memories_fts"
    " WHERE memories_fts MATCH ? ORDER BY score LIMIT 30) AS h"
    " JOIN memories AS m ON m.rowid = h.rowid ORDER BY h.score"
)
TYPES = ("FACT", "PREFERENCE", "RULE", "SKILL", "ERROR")
NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def build_store(memories: int, seed: int) -> Path:
    """The cached store: ``memories`` memories and 2,000 turns in 40 sessions."""
    from soloqueue_mem.api.store import Store
    from soloqueue_mem.config import Config
    from soloqueue_mem.db.connect import write_tx
    from soloqueue_mem.home import Home
    from soloqueue_mem.memory.store import Draft, remember
    from soloqueue_mem.storage.sqlite.stores import open_memory

    final = c.CACHE / f"api-store-{memories}-seed{seed}"
    if (final / "bench-build.json").exists():
        return final
    tmp = c.CACHE / f".building-api-{memories}"
    shutil.rmtree(tmp, ignore_errors=True)
    gen, rng = c.TextGen(seed), random.Random(seed)
    c.note(f"building {tmp}: {memories:,} memories and 2,000 turns")
    with Store(tmp, clock=lambda: NOW) as store:
        for session in range(40):
            turns = [
                {"role": ("user", "assistant")[i % 2], "content": gen.turn()} for i in range(50)
            ]
            store.log(turns, session=f"s{session}")
    conn = c.created(open_memory(Home(tmp), Config()))  # bulk: 5,000 remembers a transaction
    try:
        for first in range(0, memories, 5000):
            with write_tx(conn):
                for i in range(first, min(first + 5000, memories)):
                    draft = Draft(
                        content=gen.turn()[: rng.randint(30, 120)],
                        type=rng.choice(TYPES),
                        importance=round(rng.random(), 2),
                        duration="permanent",
                    )
                    written = NOW - timedelta(days=90 * (memories - i) / memories)
                    remember(conn, draft, "default", "default", written)
    finally:
        conn.close()
    (tmp / "bench-build.json").write_text(json.dumps({"memories": memories}))
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    return final


def start_server(argv: list[str], env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        argv, env=env, cwd=c.neutral_cwd(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert proc.stderr is not None  # a pipe
    line = proc.stderr.readline().decode()
    if not line.startswith("serving on "):
        raise RuntimeError(f"serve did not start: {line}{proc.stderr.read().decode()[-500:]}")
    return proc, line.split()[-1]


def http_caller(url: str) -> Callable[[str], int]:
    conn, headers = c.serve_connection(url)

    def call(query: str) -> int:
        body = json.dumps({"query": query}).encode()
        try:
            conn.request("POST", "/api/v1/recall", body, headers)
            response = conn.getresponse()
        except (ConnectionError, http.client.HTTPException):
            # the server closed the idle connection (uvicorn: after 5 s); the untimed
            # warm-up calls of each query absorb the reconnect
            conn.close()
            conn.request("POST", "/api/v1/recall", body, headers)
            response = conn.getresponse()
        data = json.loads(response.read())
        assert response.status == 200, data
        return len(data["hits"])

    return call


def process_cpu(pid: int) -> Callable[[], float]:
    """CPU seconds (user + system, every thread) process ``pid`` has used so far."""
    tick = os.sysconf("SC_CLK_TCK")

    def used() -> float:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick

    return used


def mcp_server_pid(http_pid: int) -> int:
    """The MCP server the SDK's client started: this process's other child."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == http_pid:
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError):
            continue
        if parent == os.getpid():
            return int(entry.name)
    raise RuntimeError("the MCP server process was not found")


class Times(NamedTuple):
    wall: dict[str, dict[str, list[float]]]  # path -> query -> seconds per timed call
    cpu: dict[str, dict[str, list[float]]]  # the same, CPU seconds (see the docstring)


async def interleaved_times(
    paths: dict[str, Callable[[str], Awaitable[object]]],
    clocks: dict[str, Callable[[], float]],
    queries: list[str],
    repeats: int,
) -> Times:
    """Per query: two untimed calls of every path, then ``repeats`` rounds of each path
    in turn, so drift and the other jobs' load hit all paths alike. ``clocks`` gives
    each path's CPU clock."""
    times = Times({label: {} for label in paths}, {label: {} for label in paths})
    for query in queries:
        for round_ in range(repeats + 2):
            for label, call in paths.items():
                cpu = clocks[label]()
                start = time.perf_counter()
                await call(query)
                if round_ >= 2:
                    times.wall[label].setdefault(query, []).append(time.perf_counter() - start)
                    times.cpu[label].setdefault(query, []).append(clocks[label]() - cpu)
    return times


async def measure(
    store: Store,
    floor: Callable[[str], object],
    http_call: Callable[[str], int],
    http_pid: int,
    mcp_argv: list[str],
    env: dict[str, str],
    queries: list[str],
    repeats: int,
    more: dict[str, Callable[[str], object]] | None = None,
) -> Times:
    """``more``: further in-process paths, timed in the same rounds."""
    from mcp import Client, StdioServerParameters
    from mcp.types import TextContent

    params = StdioServerParameters(
        command=mcp_argv[0], args=mcp_argv[1:], env=env, cwd=c.neutral_cwd()
    )
    async with Client(params, read_timeout_seconds=120) as client:

        async def mcp_call(query: str) -> None:
            result = await client.call_tool("recall", {"query": query})
            if result.is_error:
                first = result.content[0]
                raise RuntimeError(first.text if isinstance(first, TextContent) else repr(first))

        async def sync(call: Callable[[str], object], query: str) -> None:
            call(query)

        paths: dict[str, Callable[[str], Awaitable[object]]] = {
            "floor": partial(sync, floor),
            "store": partial(sync, store.recall),
            "mcp": mcp_call,
            "http": partial(sync, http_call),
        }
        clocks = {
            "floor": time.process_time,
            "store": time.process_time,
            "mcp": process_cpu(mcp_server_pid(http_pid)),
            "http": process_cpu(http_pid),
        }
        for label, call in (more or {}).items():
            paths[label] = partial(sync, call)
            clocks[label] = time.process_time
        return await interleaved_times(paths, clocks, queries, repeats)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="10,000 memories")
    parser.add_argument("--python", default=sys.executable, help="interpreter of the servers")
    parser.add_argument("--repeats", type=int, help="timed calls per query (default 20)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    memories = 10_000 if args.quick else 100_000
    repeats = args.repeats or 20

    from soloqueue_mem.api.store import Store
    from soloqueue_mem.clock import iso
    from soloqueue_mem.text.fts import match_expression, query_terms
    from soloqueue_mem.text.lexicon import open_lexicon

    store_dir = build_store(memories, args.seed)
    env = c.timing_env(SOLOQUEUE_NOW=iso(NOW), SOLOQUEUE_HOME=str(store_dir))
    cli = c.cli_argv(args.python)
    lexicon = open_lexicon(c.CACHE / "lexicon")
    floor_conn = sqlite3.connect(f"file:{store_dir / 'memory.db'}?mode=ro", uri=True)
    queries = [query for _, query in bench_trace.queries()]

    matches = {q: match_expression(query_terms(q, lambda: lexicon)) or '""' for q in queries}

    def floor(query: str) -> object:
        return floor_conn.execute(FLOOR_SQL, (matches[query],)).fetchall()

    server, url = start_server([*cli, "serve", "--port", "0"], env)
    try:
        with Store(store_dir, clock=lambda: NOW) as store:
            c.note("timing the four paths, interleaved")
            times = asyncio.run(
                measure(
                    store, floor, http_caller(url), server.pid, [*cli, "mcp"], env, queries, repeats
                )
            )
            rows: list[list[object]] = []
            medians: dict[str, list[float]] = {label: [] for label in times.wall}
            for lang, query in bench_trace.queries():
                row = [lang, query, len(store.recall(query).hits)]
                for label in ("floor", "store", "mcp", "http"):
                    medians[label].append(c.median(times.wall[label][query]))
                    row.append(c.ms(medians[label][-1]))
                rows.append(row)
    finally:
        server.terminate()
        server.wait(timeout=30)
    c.out(c.machine_line(args.python))
    c.out(f"\n## warm recall at {memories:,} memories (+2,000 turns)\n")
    c.out(f"Store: {store_dir}; {repeats} timed calls per query and path, after 2 warm-ups.\n")
    headers = ["lang", "query", "hits", "floor ms", "Store.recall ms", "MCP ms", "HTTP ms"]
    c.out(c.table(headers, rows))
    floor_median = c.median(medians["floor"])
    c.out("")
    summary = []
    for label, name in (("store", "Store.recall"), ("mcp", "MCP recall"), ("http", "HTTP recall")):
        value = c.median(medians[label])
        summary.append(
            [
                name,
                c.ms(value),
                c.ms(max(medians[label])),
                f"{value / floor_median:.1f}x",
                c.verdict(value <= 0.030),
                *cpu_figures(times.cpu[label], server=label != "store"),
            ]
        )
    summary.append(
        [
            "floor (FTS5 query)",
            c.ms(floor_median),
            c.ms(max(medians["floor"])),
            "1.0x",
            "",
            *cpu_figures(times.cpu["floor"]),
        ]
    )
    headers = ["path", "median of medians ms", "worst query ms", "vs floor", "<= 30 ms"]
    c.out(c.table([*headers, "CPU median of medians ms", "CPU mean ms"], summary))
    c.out(f"\nload average at the end {os.getloadavg()[0]:.2f}")
    return 0


def cpu_figures(by_query: dict[str, list[float]], server: bool = False) -> list[str]:
    """The median of the per-query median CPU times (not for a server: its clock ticks
    every 10 ms) and the mean CPU time over every timed call."""
    calls = [value for values in by_query.values() for value in values]
    medians = c.median([c.median(values) for values in by_query.values()])
    return ["-" if server else c.ms(medians), c.ms(sum(calls) / len(calls))]


if __name__ == "__main__":
    sys.exit(main())
