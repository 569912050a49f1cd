#!/usr/bin/env python3
"""Benchmark the viewer ``serve`` shows at ``/``: time to first render of each page and
the memory-search round trip, in headless Chromium (Debian's ``chromium`` and
``chromedriver``, driven by Selenium), on a cached store: by default ``bench_api.py``'s
(seeded memories plus 2,000 turns in 40 sessions; ``--scale N`` memories, default
10,000); with ``--turns N`` ``bench_recall.py``'s (``bench_trace.py``'s N turns in
1,000 sessions plus ``--scale`` memories: ``--turns 1000000 --scale 100000`` is the
issue's store), which the other benchmarks also use.

- page render: ``driver.get(/#PAGE)`` until the page marks itself rendered
  (``body[data-ready=PAGE]``: every API call it makes answered and drawn), wall time
  seen by this process; the sessions page then also opens one session's first page of
  turns (``open session``).
- memory search: in the page, ``searchMemories`` for a query (``POST /api/v1/recall``
  with ``explain``, the cards and bars drawn), ``performance.now()`` around it.

``--reads``: no browser; the ``Store`` reads those pages' API calls make, timed in this
process (wall and CPU time), so a slow page can be told from a slow query.

Floors, in the same run and the same browser: ``driver.get(/health)`` (a static answer
from the same server) for the pages, a ``fetch('/health')`` from the page for the
search. Goals (issue 33): page median <= 1 s, search median <= 200 ms.

Run: ``.venv/bin/python benchmarks/bench_viewer.py [--scale N] [--turns N] [--runs N]
[--reads]`` (needs the ``server`` extra, ``selenium`` and the two Debian packages).
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
from typing import TYPE_CHECKING

import _common as c
import bench_api
import bench_recall
import bench_trace

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

c.import_project()
sys.path.insert(0, str(c.REPO))  # the tests' way of starting Chromium: tests/browser/chromium.py

PAGES = ("overview", "sessions", "memories", "graph")
SEARCH_JS = """
const done = arguments[arguments.length - 1];
document.getElementById("memory-query").value = arguments[0];
const t0 = performance.now();
searchMemories(document.getElementById("results")).then(() => done(performance.now() - t0));
"""
FLOOR_JS = """
const done = arguments[arguments.length - 1];
const t0 = performance.now();
fetch("/health").then((r) => r.json()).then(() => done(performance.now() - t0));
"""
OPEN_SESSION_JS = """
const done = arguments[arguments.length - 1];
const t0 = performance.now();
document.querySelector("#page tbody button").click();
const check = () => document.querySelector("#timeline .turn")
  ? done(performance.now() - t0) : setTimeout(check, 1);
check();
"""


def page_seconds(driver: WebDriver, base: str, page: str) -> float:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get("about:blank")
    start = time.perf_counter()
    driver.get(f"{base}/#{page}")
    WebDriverWait(driver, 60, poll_frequency=0.005).until(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == page
    )
    return time.perf_counter() - start


def floor_seconds(driver: WebDriver, base: str) -> float:
    driver.get("about:blank")
    start = time.perf_counter()
    driver.get(f"{base}/health")
    return time.perf_counter() - start


def store_reads(store_dir: Path, now: str) -> None:
    """The server's part of each page: the ``Store`` reads its API calls make, timed in
    this process (median of 5 after one untimed call), wall and CPU time; and recall
    over memories for the 20 queries (each once, after one untimed call)."""
    from soloqueue_mem.api.store import Store
    from soloqueue_mem.clock import parse_timestamp

    with Store(store_dir, clock=lambda: parse_timestamp(now)) as store:
        first = store.sessions(limit=1)[0]
        reads = {
            "stats (overview)": store.stats,
            "sessions(limit=1000) (overview)": lambda: store.sessions(limit=1000),
            "sessions(limit=200) (sessions)": lambda: store.sessions(limit=200),
            "memories(limit=50) (memories)": lambda: store.memories(limit=50),
            "working, scratchpad, episodes (memories)": lambda: (
                store.working(limit=50),
                store.scratchpad(),
                store.episodes(),
            ),
            "turns: first page (open session)": lambda: store.turns(
                first.session, group=first.group, agent=first.agent
            ),
        }
        rows = []
        for name, read in reads.items():
            rows.append([name, *_timed([read] * 6)])
        queries = [query for _, query in bench_trace.queries()]
        recalls = [lambda q=q: store.recall(q, channels=["memories"], limit=20) for q in queries]
        rows.append([f"recall over memories, {len(queries)} queries", *_timed(recalls, pairs=True)])
    c.out(c.table(["Store read (a page's)", "wall median ms", "CPU median ms", "CPU max ms"], rows))


def _timed(calls: list, pairs: bool = False) -> list[str]:
    """Wall and CPU medians (and CPU max) of ``calls``, the first untimed (``pairs``:
    each call once untimed, then timed)."""
    wall, cpu = [], []
    for i, call in enumerate(calls):
        if pairs or i == 0:
            call()
            if not pairs:
                continue
        w, p = time.perf_counter(), time.process_time()
        call()
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - p)
    return [c.ms(c.median(wall)), c.ms(c.median(cpu)), c.ms(max(cpu))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=int, default=10_000, help="memories (default 10,000)")
    parser.add_argument("--turns", type=int, help="turns (default: bench_api's 2,000)")
    parser.add_argument("--runs", type=int, default=10, help="timed loads per page")
    parser.add_argument("--python", default=sys.executable, help="interpreter of serve")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--reads", action="store_true", help="only the Store reads, no browser")
    args = parser.parse_args()

    from soloqueue_mem.clock import iso

    if args.turns is None:
        store_dir, turns = bench_api.build_store(args.scale, args.seed), 2000
        now = iso(bench_api.NOW)
    else:
        store_dir, info = bench_recall.build_store(args.turns, args.scale, args.seed)
        now, turns = info["now"], args.turns
    if args.reads:
        c.out(f"load average at start {os.getloadavg()[0]:.2f}; {turns:,} turns\n")
        store_reads(store_dir, now)
        c.out(f"\nload average at end {os.getloadavg()[0]:.2f}")
        return 0
    load_start = os.getloadavg()
    env = c.timing_env(SOLOQUEUE_NOW=now, SOLOQUEUE_HOME=str(store_dir))
    server, url = bench_api.start_server([*c.cli_argv(args.python), "serve", "--port", "0"], env)
    base = url.split("/?")[0]
    profile = Path(tempfile.mkdtemp(prefix="bench-viewer-"))
    from tests.browser.chromium import open_browser

    driver = open_browser(profile)
    times: dict[str, list[float]] = {name: [] for name in ("floor", *PAGES, "open session")}
    search: dict[str, list[float]] = {"floor": [], "search": []}
    queries = [query for _, query in bench_trace.queries()]
    try:
        driver.get(url)  # logs in: the cookie
        driver.set_script_timeout(60)
        for page in PAGES:  # untimed: warm the server's caches and the browser's
            page_seconds(driver, base, page)
        for _ in range(args.runs):
            times["floor"].append(floor_seconds(driver, base))
            for page in PAGES:
                times[page].append(page_seconds(driver, base, page))
            page_seconds(driver, base, "sessions")
            times["open session"].append(driver.execute_async_script(OPEN_SESSION_JS) / 1000)
        page_seconds(driver, base, "memories")
        for query in queries:
            driver.execute_async_script(SEARCH_JS, query)  # warm-up
            for _ in range(max(1, args.runs // 2)):
                search["floor"].append(driver.execute_async_script(FLOOR_JS) / 1000)
                search["search"].append(driver.execute_async_script(SEARCH_JS, query) / 1000)
    finally:
        driver.quit()
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(profile, ignore_errors=True)
    version = subprocess.run(["/usr/bin/chromium", "--version"], capture_output=True, text=True)
    c.out(c.machine_line(args.python))
    load = ", ".join(f"{a:.2f}/{b:.2f}" for a, b in zip(load_start, os.getloadavg(), strict=True))
    c.out(f"load average (1/5/15 min) at start/end of the timed part: {load}")
    c.out(f"\n## viewer at {args.scale:,} memories, {turns:,} turns; {version.stdout.strip()}\n")
    floor = c.median(times["floor"])
    rows = [["floor: GET /health in the browser", c.ms(floor), c.ms(c.p90(times["floor"])), "", ""]]
    for name in (*PAGES, "open session"):
        value = c.median(times[name])
        rows.append(
            [
                name,
                c.ms(value),
                c.ms(c.p90(times[name])),
                f"{value / floor:.1f}x",
                c.verdict(value <= 1.0),
            ]
        )
    c.out(c.table(["page (first render)", "median ms", "p90 ms", "vs floor", "<= 1 s"], rows))
    c.out("")
    sfloor, value = c.median(search["floor"]), c.median(search["search"])
    c.out(
        c.table(
            ["memory search round trip", "median ms", "p90 ms", "vs floor", "<= 200 ms"],
            [
                [
                    "floor: fetch /health from the page",
                    c.ms(sfloor),
                    c.ms(c.p90(search["floor"])),
                    "",
                    "",
                ],
                [
                    f"recall + explain, {len(queries)} queries",
                    c.ms(value),
                    c.ms(c.p90(search["search"])),
                    f"{value / sfloor:.1f}x",
                    c.verdict(value <= 0.200),
                ],
            ],
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
