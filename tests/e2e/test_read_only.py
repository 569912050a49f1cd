"""Issue 15 item 9 (RELIABILITY D12): a read-only store can be read. Readers open its
databases read-only (``immutable=1`` with no ``-wal`` file, else ``mode=ro``), never
need write access and leave no ``-wal``/``-shm`` behind; ``recall`` skips its access
bump with a note; ``verify`` reports a healthy read-only store as sound.

As root, file modes do not stop writes, so the program runs without the capabilities
that override them (dropped from the bounding set before ``exec``): like any user.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_process, tree_snapshot

PR_CAPBSET_DROP = 24
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER = 1, 2, 3


def _as_plain_user() -> None:
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def run_read_only(*args: str, input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "soloqueue_mem", "--format", "json", *args],
        input=input,
        capture_output=True,
        preexec_fn=_as_plain_user,  # noqa: PLW1509 - no threads in the test process
        timeout=60,
        check=False,
    )


def set_writable(root: Path, on: bool) -> None:
    for path in [root, *root.rglob("*")]:
        mode = path.lstat().st_mode
        os.chmod(path, (mode | 0o200) if on else (mode & ~0o222))


@pytest.fixture
def read_only_store(home):
    for args, data in (
        (["log", "-s", "s1", "hello world from the log"], None),
        (["remember", "hello fact to recall"], None),
        (["artifact", "save", "-"], b"artifact data"),
    ):
        assert run_process(*args, input=data).returncode == 0
    set_writable(home, False)
    yield home
    set_writable(home, True)


def test_d12_readers_work_on_a_read_only_store_and_change_nothing(read_only_store):
    before = tree_snapshot(read_only_store)
    messages = json.dumps([{"role": "user", "content": "hello"}]).encode()
    commands = [
        (["trace", "hello"], None),
        (["recall", "hello"], None),
        (["stats"], None),
        (["artifact", "read", "1"], None),
        (["artifact", "list"], None),
        (["memory", "list"], None),
        (["session", "list"], None),
        (["episode", "list"], None),
        (["context", "build", "--with-memory", "--max-context", "8000"], messages),
        (["verify"], None),
        (["verify", "--full"], None),
    ]
    for args, data in commands:
        done = run_read_only(*args, input=data)
        assert done.returncode == 0, (args, done.stderr)
        assert b"readonly" not in done.stderr
    assert run_read_only("artifact", "read", "1").stdout == b"artifact data"
    recalled = run_read_only("recall", "hello fact")
    assert b"read-only" in recalled.stderr
    assert any(hit["content"] == "hello fact to recall" for hit in json.loads(recalled.stdout))
    report = json.loads(run_read_only("verify", "--full").stdout)
    assert report["findings"] == [] and report["exit_code"] == 0
    assert tree_snapshot(read_only_store) == before
    leftovers = [p.name for p in read_only_store.iterdir() if p.name.endswith(("-wal", "-shm"))]
    assert leftovers == []


def test_d12_writers_on_a_read_only_store_fail_cleanly(read_only_store):
    done = run_read_only("remember", "new fact")
    assert done.returncode == 74, done.stderr
    assert b"Traceback" not in done.stderr
