"""Crash and I/O-error points of `artifact save` (RELIABILITY A1, A7)."""

from __future__ import annotations

import json
import resource
import sqlite3
import subprocess
import sys

import pytest

from tests.conftest import run_process

FAULT = {"SOLOQUEUE_TESTING": "1"}
TRANSIENT = {"temp-file", "orphan-recent"}


def verify(home) -> dict:
    done = run_process("--format", "json", "verify", "--full")
    assert done.returncode in (0, 8), done.stderr
    return json.loads(done.stdout)


def saved_rows(home) -> int:
    if not (home / "artifacts.db").exists():
        return 0
    with sqlite3.connect(home / "artifacts.db") as conn:
        return conn.execute("SELECT COUNT(*) FROM artifacts").fetchone()[0]


@pytest.mark.parametrize(
    "point",
    [
        "artifact.after_tmp_write",
        "artifact.after_fsync",
        "artifact.after_rename",
        "artifact.after_row_commit",
    ],
)
def test_a1_a_killed_save_leaves_only_transient_findings_and_reruns_cleanly(home, tmp_path, point):
    source = tmp_path / "payload.bin"
    source.write_bytes(b"payload " * 5000)
    run_process("log", "-s", "s", "create the store")
    killed = run_process(
        "artifact", "save", str(source), env={**FAULT, "SOLOQUEUE_FAULT": f"{point}:kill"}
    )
    assert killed.returncode == -9
    report = verify(home)
    assert {f["kind"] for f in report["findings"]} <= TRANSIENT, report["findings"]
    assert all(f["severity"] != "error" for f in report["findings"])
    rows_before = saved_rows(home)
    again = run_process("--format", "json", "artifact", "save", str(source))
    assert again.returncode == 0, again.stderr
    artifact = json.loads(again.stdout)
    read = run_process("artifact", "read", artifact["id"])
    assert read.stdout == source.read_bytes()
    assert saved_rows(home) == rows_before + 1
    with sqlite3.connect(home / "artifacts.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def _limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))


def test_a7_efbig_fails_cleanly_with_nothing_half_stored(home, tmp_path):
    source = tmp_path / "big.bin"
    source.write_bytes(b"x" * (4 << 20))
    run_process("log", "-s", "s", "create the store")
    done = subprocess.run(
        [sys.executable, "-m", "soloqueue_mem", "artifact", "save", str(source)],
        capture_output=True,
        preexec_fn=_limit_file_size,
        check=False,
        timeout=60,
    )
    assert done.returncode == 74
    assert done.stderr.decode().startswith("error: cannot store the content: File too large")
    assert "Traceback" not in done.stderr.decode()
    assert saved_rows(home) == 0
    assert not list((home / "artifacts").rglob("*.tmp"))
    assert not [p for p in (home / "artifacts").rglob("*") if p.is_file()]


@pytest.mark.parametrize("action", ["enospc", "eio"])
@pytest.mark.usefixtures("store")
def test_a7_disk_errors_during_a_save_fail_cleanly(home, tmp_path, action):
    source = tmp_path / "payload.bin"
    source.write_bytes(b"data" * 1000)
    done = run_process(
        "artifact",
        "save",
        str(source),
        env={**FAULT, "SOLOQUEUE_FAULT": f"artifact.after_tmp_write:{action}"},
    )
    assert done.returncode == 74
    assert done.stderr.decode().count("\n") == 1 and done.stderr.decode().startswith(
        "error: cannot store"
    )
    assert saved_rows(home) == 0
    assert not [p for p in (home / "artifacts").rglob("*") if p.is_file()]
