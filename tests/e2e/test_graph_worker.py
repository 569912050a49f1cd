"""The graph queue in real processes: 8 ``graph remember`` at once each start a
detached worker, and one worker at a time processes every task, in order; a worker
killed in the middle of a task loses nothing and applies nothing twice."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.conftest import run_process


def with_lexicon(home: Path, built_lexicon: Path) -> None:
    """The detached workers find the segmentation lexicon already built (~1 s saved)."""
    (home / "cache").mkdir(parents=True, exist_ok=True, mode=0o700)
    shutil.copyfile(built_lexicon, home / "cache" / built_lexicon.name)


def task(n: int) -> bytes:
    return json.dumps(
        [{"role": "user", "content": f"Message number {n} is about topic {n}."}]
    ).encode()


def nodes(home: Path) -> list[tuple[int, str]]:
    with sqlite3.connect(home / "graph.db") as conn:
        return conn.execute("SELECT node_id, content FROM graph_nodes ORDER BY node_id").fetchall()


def test_eight_concurrent_remembers_are_processed_serially_in_queue_order(home, built_lexicon):
    home.mkdir(parents=True, mode=0o700)
    with_lexicon(home, built_lexicon)
    argv = [sys.executable, "-m", "soloqueue_mem", "--format", "json", "graph", "remember"]
    procs = [
        subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(8)
    ]
    task_ids = {}
    for n, proc in enumerate(procs):
        out, err = proc.communicate(task(n), timeout=60)
        assert proc.returncode == 0, err
        task_ids[int(json.loads(out)["task_id"])] = n
    assert sorted(task_ids) == list(range(1, 9))
    done = run_process("--format", "json", "graph", "work", "--wait")  # waits for any worker
    assert done.returncode == 0, done.stderr
    created = nodes(home)
    order = [task_ids[t] for t in sorted(task_ids)]  # the messages in queue order
    assert [content for _, content in created] == [
        f"Message number {n} is about topic {n}." for n in order
    ]
    stats = json.loads(run_process("--format", "json", "graph", "stats").stdout)
    assert stats["queued"] == 0 and stats["graphs"][0]["focus"] == 5


def test_a_worker_killed_mid_task_loses_nothing_and_applies_nothing_twice(home, built_lexicon):
    home.mkdir(parents=True, mode=0o700)
    with_lexicon(home, built_lexicon)
    first = run_process("graph", "remember", "--sync", input=task(1))
    assert first.returncode == 0, first.stderr
    queued = run_process(
        "graph",
        "remember",
        input=task(2),
        env={"SOLOQUEUE_TESTING": "1", "SOLOQUEUE_FAULT": "graph.mid_task:kill"},
    )  # its detached worker inherits the fault and dies inside the task's transaction
    assert queued.returncode == 0, queued.stderr
    killed = run_process(
        "graph",
        "work",
        "--wait",
        env={"SOLOQUEUE_TESTING": "1", "SOLOQUEUE_FAULT": "graph.mid_task:kill"},
    )
    assert killed.returncode == -9
    assert [c for _, c in nodes(home)] == ["Message number 1 is about topic 1."]
    done = run_process("--format", "json", "graph", "work", "--wait")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tasks"] == 1
    assert [c for _, c in nodes(home)] == [
        "Message number 1 is about topic 1.",
        "Message number 2 is about topic 2.",
    ]
    assert os.path.exists(home / ".graph.lock")
