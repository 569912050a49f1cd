"""RELIABILITY B1/B8: many processes logging at once, into one session and their own.

Every process opens and closes the store for each event, exactly as one `log`
invocation does. Afterwards each session's turn indexes are 0..n-1 with no gap or
duplicate, its JSONL and its rows agree line by line, every writer's events appear in
the order it wrote them, and no writer saw an error ("database is locked" above all).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sqlite3
import subprocess
import sys
import threading
import traceback
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

SHARED = "shared"


def _own(worker: int) -> str:
    return f"own-{worker:02d}"


def _session_for(worker: int, workers: int) -> str:
    """The first half of the workers share one session, the others write their own."""
    return SHARED if worker < workers // 2 else _own(worker)


def _content(worker: int, call: int) -> str:
    return f"w{worker:02d}-c{call:04d} 并发"


# -- library workers (spawned processes) ---------------------------------------------


def _library_worker(
    root: str, worker: int, workers: int, calls: int, barrier: Any, out: Any
) -> None:
    """Log ``calls`` events one at a time, opening and closing memory.db for each."""
    acks: list[tuple[str, int]] = []
    errors: list[str] = []
    try:
        from datetime import UTC, datetime

        from soloqueue_mem.config import Config
        from soloqueue_mem.home import Home
        from soloqueue_mem.sessions.events import parse_event
        from soloqueue_mem.sessions.writer import LoggedTurn, log_events
        from soloqueue_mem.storage.sqlite.stores import open_memory

        home = Home(Path(root))
        config = Config()
        now = datetime(2026, 11, 26, 8, tzinfo=UTC)
        session = _session_for(worker, workers)
        barrier.wait(timeout=60)
        for call in range(calls):
            try:
                conn = open_memory(home, config)
                assert conn is not None
                try:
                    event = parse_event({"role": "user", "content": _content(worker, call)})
                    results = list(
                        log_events(
                            home,
                            conn,
                            [(None, event)],
                            ("default", "default", session),
                            config,
                            now,
                        )
                    )
                finally:
                    conn.close()
                (turn,) = results
                assert isinstance(turn, LoggedTurn), turn
                acks.append((turn.content, turn.turn_index))
            except BaseException:  # noqa: BLE001 - every failure is reported to the parent
                errors.append(traceback.format_exc())
    except BaseException:  # noqa: BLE001
        errors.append(traceback.format_exc())
    out.put((worker, acks, errors))


# -- checks shared by every variant --------------------------------------------------


def _jsonl_path(home: Path, session: str) -> Path:
    return home / "groups" / "default" / "sessions" / "default" / f"{session}.jsonl"


def check_store(
    home: Path, workers: int, calls: int, acks: dict[int, list[tuple[str, int]]]
) -> None:
    """The store after a concurrent run: gap-free, JSONL == rows, per-writer order kept."""
    conn = sqlite3.connect(home / "memory.db")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = conn.execute(
            "SELECT session_id, turn_index, content FROM conversation_turns"
            " ORDER BY session_id, turn_index"
        ).fetchall()
        sessions = {
            row[0]: (row[1], row[2])
            for row in conn.execute("SELECT session_id, turn_count, jsonl_bytes FROM sessions")
        }
    finally:
        conn.close()

    by_session: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for session, index, content in rows:
        by_session[session].append((index, content))
    expected_sessions = {_session_for(w, workers) for w in range(workers)}
    assert set(by_session) == expected_sessions
    for session, turns in by_session.items():
        indexes = [index for index, _ in turns]
        assert indexes == list(range(len(indexes))), f"{session}: turn indexes not 0..n-1"
        path = _jsonl_path(home, session)
        lines = path.read_bytes().split(b"\n")
        assert lines[-1] == b"", f"{session}: JSONL does not end with a newline"
        records = [json.loads(line) for line in lines[:-1]]
        assert len(records) == len(turns), (
            f"{session}: {len(records)} JSONL lines, {len(turns)} rows"
        )
        assert [(r["turn_index"], r["content"]) for r in records] == turns
        assert sessions[session] == (len(turns), path.stat().st_size)

    sharing = sum(1 for w in range(workers) if _session_for(w, workers) == SHARED)
    assert len(by_session[SHARED]) == sharing * calls
    position = {(s, content): index for s, turns in by_session.items() for index, content in turns}
    for worker in range(workers):
        session = _session_for(worker, workers)
        if session != SHARED:
            assert len(by_session[session]) == calls
        seen = [position[(session, _content(worker, call))] for call in range(calls)]
        assert seen == sorted(seen), f"worker {worker}: events out of order"
        assert len(set(seen)) == calls
        # What the caller was told is what the store holds.
        assert acks[worker] == [(_content(worker, c), seen[c]) for c in range(calls)]


def _no_errors(errors: dict[int, list[str]]) -> None:
    locked = [e for errs in errors.values() for e in errs if "database is locked" in e]
    assert not locked, locked[:3]
    assert not any(errors.values()), {w: e[:2] for w, e in errors.items() if e}


# -- library: 16 processes x 200 calls -----------------------------------------------


def test_sixteen_processes_log_through_the_library(home: Path) -> None:
    workers, calls = 16, 200
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(workers)
    out = ctx.Queue()
    processes = [
        ctx.Process(target=_library_worker, args=(str(home), w, workers, calls, barrier, out))
        for w in range(workers)
    ]
    for process in processes:
        process.start()
    acks: dict[int, list[tuple[str, int]]] = {}
    errors: dict[int, list[str]] = {}
    try:
        for _ in range(workers):
            worker, worker_acks, worker_errors = out.get(timeout=120)
            acks[worker], errors[worker] = worker_acks, worker_errors
    finally:
        for process in processes:
            process.join(timeout=30)
            if process.is_alive():
                process.kill()
    assert [p.exitcode for p in processes] == [0] * workers
    _no_errors(errors)
    check_store(home, workers, calls, acks)


# -- the real CLI: subprocesses -------------------------------------------------------


def _cli_writer(worker: int, workers: int, calls: int, acks: dict, errors: dict) -> None:
    session = _session_for(worker, workers)
    mine: list[tuple[str, int]] = []
    problems: list[str] = []
    for call in range(calls):
        text = _content(worker, call)
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "soloqueue_mem",
                "log",
                "--session",
                session,
                "--format",
                "json",
                text,
            ],
            capture_output=True,
            env=os.environ.copy(),
            timeout=120,
            check=False,
        )
        if done.returncode != 0 or done.stderr:
            problems.append(
                f"call {call}: exit {done.returncode}: {done.stderr.decode(errors='replace')}"
            )
            continue
        turn = json.loads(done.stdout)
        mine.append((turn["content"], turn["turn_index"]))
    acks[worker], errors[worker] = mine, problems


def _run_cli_writers(home: Path, workers: int, calls: int) -> None:
    acks: dict[int, list[tuple[str, int]]] = {}
    errors: dict[int, list[str]] = {}
    threads = [
        threading.Thread(target=_cli_writer, args=(w, workers, calls, acks, errors))
        for w in range(workers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(acks) == workers
    _no_errors(errors)
    check_store(home, workers, calls, acks)


def test_eight_cli_processes_log_concurrently(home: Path) -> None:
    _run_cli_writers(home, workers=8, calls=10)


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("SOLOQUEUE_SLOW") != "1",
    reason="16 x 200 real CLI processes take minutes; set SOLOQUEUE_SLOW=1",
)
def test_sixteen_cli_processes_times_two_hundred(home: Path) -> None:
    _run_cli_writers(home, workers=16, calls=200)
