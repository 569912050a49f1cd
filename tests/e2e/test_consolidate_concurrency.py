"""RELIABILITY B7 (correctness part): consolidation beside live writers loses nothing.

Writers in their own processes log turns one call at a time (open, log, close, as a
hook does) while another process consolidates a store with idle sessions and
memories. No writer sees an error, every acknowledged turn is there exactly once, and
the consolidation finishes its work. The latency figures (writer p99, longest
consolidation transaction) are measured by benchmarks/bench_consolidate.py.
"""

from __future__ import annotations

import multiprocessing
import sqlite3
import traceback
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

WRITERS, CALLS = 6, 25
NOW = datetime(2026, 11, 26, 12, tzinfo=UTC)


def _writer(root: str, worker: int, barrier: Any, out: Any) -> None:
    errors: list[str] = []
    acked = 0
    try:
        from soloqueue_mem.config import Config
        from soloqueue_mem.home import Home
        from soloqueue_mem.sessions.events import parse_event
        from soloqueue_mem.sessions.writer import LoggedTurn, log_events
        from soloqueue_mem.storage.sqlite.stores import open_memory

        home, config = Home(Path(root)), Config()
        barrier.wait(timeout=60)
        for call in range(CALLS):
            try:
                conn = open_memory(home, config)
                try:
                    event = parse_event({"role": "user", "content": f"w{worker} c{call} 写入"})
                    key = ("live", "w", f"w{worker}")
                    (turn,) = list(log_events(home, conn, [(None, event)], key, config, NOW))
                finally:
                    conn.close()
                assert isinstance(turn, LoggedTurn), turn
                acked += 1
            except BaseException:  # noqa: BLE001 - reported to the parent
                errors.append(traceback.format_exc())
    except BaseException:  # noqa: BLE001
        errors.append(traceback.format_exc())
    out.put(("writer", worker, acked, errors))


def _consolidator(root: str, barrier: Any, out: Any) -> None:
    try:
        from soloqueue_mem.config import Config
        from soloqueue_mem.home import Home
        from soloqueue_mem.lifecycle.consolidate import Options
        from soloqueue_mem.storage.sqlite.backend import SqliteBackend

        home = Home(Path(root))
        barrier.wait(timeout=60)
        with closing(SqliteBackend(home, Config())) as backend:
            report = backend.consolidate(NOW, Options())
        out.put(("consolidate", report["sessions"], report["decay"], None))
    except BaseException:  # noqa: BLE001
        out.put(("consolidate", None, None, traceback.format_exc()))


def _seed(root: Path) -> None:
    """Ten idle sessions and 300 memories, some of them old enough to decay."""
    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.memory.store import Draft, remember
    from soloqueue_mem.sessions.events import Event
    from soloqueue_mem.sessions.writer import log_events
    from soloqueue_mem.storage.sqlite.stores import open_memory

    home = Home(root)
    conn = open_memory(home, Config())
    assert conn is not None
    old = NOW - timedelta(hours=5)
    events = [
        (
            None,
            Event(
                "user",
                f"我的项目{i}用 Python。Never deploy on Friday {i}",
                [],
                [],
                old,
                session=f"idle{i}",
            ),
        )
        for i in range(10)
    ]
    list(log_events(home, conn, events, ("bench", "agent", None), Config(), old))
    for i in range(300):
        when = NOW - timedelta(days=i % 40)
        remember(
            conn, Draft(f"note {i} about topic {i % 17}", duration="30d"), "bench", "agent", when
        )
    conn.close()


def test_consolidation_beside_writers_loses_nothing(tmp_path: Path) -> None:
    root = tmp_path / "store"
    _seed(root)
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    barrier = ctx.Barrier(WRITERS + 1)
    processes = [
        ctx.Process(target=_writer, args=(str(root), w, barrier, out)) for w in range(WRITERS)
    ]
    processes.append(ctx.Process(target=_consolidator, args=(str(root), barrier, out)))
    for process in processes:
        process.start()
    results = [out.get(timeout=180) for _ in processes]
    for process in processes:
        process.join(timeout=60)
    writers = [r for r in results if r[0] == "writer"]
    (consolidated,) = [r for r in results if r[0] == "consolidate"]
    assert consolidated[3] is None, consolidated[3]
    assert consolidated[1]["sessions"] == 10 and consolidated[1]["episodes"] == 10
    assert all(not errors for *_, errors in writers), [e for *_, e in writers if e]
    assert sum(acked for _, _, acked, _ in writers) == WRITERS * CALLS
    with sqlite3.connect(root / "memory.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        for worker in range(WRITERS):
            indexes = [
                row[0]
                for row in conn.execute(
                    "SELECT turn_index FROM conversation_turns WHERE group_id = 'live'"
                    " AND session_id = ? ORDER BY turn_index",
                    (f"w{worker}",),
                )
            ]
            assert indexes == list(range(CALLS))
        unprocessed = conn.execute(
            "SELECT COUNT(*) FROM conversation_turns WHERE group_id = 'bench' AND extracted = 0"
        ).fetchone()[0]
        assert unprocessed == 0
