"""`log --batch` from a live producer: each event is acknowledged before the next is
written, whatever the output format (stdout is flushed whenever the reader waits, not
per printed turn)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def _batch(*options: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "soloqueue_mem", *options, "log", "--batch", "-s", "s"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=os.environ.copy(),
    )


@pytest.mark.parametrize("fmt", ["jsonl", "text"])
def test_each_event_is_acknowledged_before_the_next_is_written(home: Path, fmt: str):
    proc = _batch("--format", fmt)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for n in range(3):
            event = {"role": "user", "content": f"event {n} 事件"}
            proc.stdin.write(json.dumps(event, ensure_ascii=False).encode() + b"\n")
            proc.stdin.flush()
            ack = proc.stdout.readline()  # blocks until the turn is printed
            if fmt == "jsonl":
                turn = json.loads(ack)
                assert (turn["content"], turn["turn_index"], turn["line"]) == (
                    event["content"],
                    n,
                    n + 1,
                )
            else:
                assert ack == f"s#{n}\n".encode()
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
        out, err = proc.stdout.read(), proc.stderr.read()
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == 0, err
    assert out == b""  # nothing was held back until the end


def test_a_large_batch_prints_every_stored_turn_once(home: Path):
    """Unflushed output is still complete: 1,200 lines over three chunks, a bad line
    among them reported on stderr with its number, exit 65 (partial)."""
    lines = [json.dumps({"role": "user", "content": f"第{n}条 line {n}"}) for n in range(1200)]
    lines[700] = '{"role": "user"'  # malformed
    data = ("\n".join(lines) + "\n").encode()
    done = subprocess.run(
        [sys.executable, "-m", "soloqueue_mem", "log", "--batch", "--format", "jsonl", "-s", "s"],
        input=data,
        capture_output=True,
        env=os.environ.copy(),
        check=False,
    )
    printed = [json.loads(line) for line in done.stdout.splitlines()]
    assert [t["line"] for t in printed] == [n + 1 for n in range(1200) if n != 700]
    assert [t["turn_index"] for t in printed] == list(range(1199))
    assert [t["content"] for t in printed] == [f"第{n}条 line {n}" for n in range(1200) if n != 700]
    assert b"line 701" in done.stderr
    assert done.returncode == 65, done.stderr
    jsonl = home / "groups" / "default" / "sessions" / "default" / "s.jsonl"
    records = [json.loads(line) for line in jsonl.read_bytes().splitlines()]
    assert [r["content"] for r in records] == [t["content"] for t in printed]
