"""RELIABILITY A1/A3 for `log`: kill -9 at every fault point and mid-stream, torn tails.

What the caller saw acknowledged must survive; the JSONL (canonical) and the turn index
(derived) must agree once the next writer has run; a torn fragment is set aside, never
merged into a record.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from soloqueue_mem.sessions.logfile import read_lines
from tests.conftest import run_process

FAULT = {"SOLOQUEUE_TESTING": "1"}


def jsonl_path(home: Path, session: str = "s") -> Path:
    return home / "groups" / "default" / "sessions" / "default" / f"{session}.jsonl"


def index_rows(home: Path, session: str = "s") -> list[tuple[int, str, str | None]]:
    conn = sqlite3.connect(home / "memory.db")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return conn.execute(
            "SELECT turn_index, content, event_id FROM conversation_turns"
            " WHERE session_id = ? ORDER BY turn_index",
            (session,),
        ).fetchall()
    finally:
        conn.close()


def jsonl_records(home: Path, session: str = "s") -> list[dict]:
    """Every line of the JSONL; fails on a torn tail or a bad line."""
    data = jsonl_path(home, session).read_bytes()
    assert data == b"" or data.endswith(b"\n"), "JSONL has a torn tail"
    return [json.loads(line) for line in data.splitlines()]


def assert_consistent(home: Path, session: str = "s") -> list[dict]:
    """JSONL lines == index rows, turn indexes 0..n-1 in both."""
    records = jsonl_records(home, session)
    rows = index_rows(home, session)
    assert [r["turn_index"] for r in records] == list(range(len(records)))
    assert [(r["turn_index"], r["content"], r.get("event_id")) for r in records] == rows
    return records


def log(*args: str, input: bytes | None = None, env: dict[str, str] | None = None) -> dict:
    done = run_process("log", "-s", "s", "--format", "json", *args, input=input, env=env)
    assert done.returncode == 0, (done.returncode, done.stderr)
    assert done.stderr == b""
    return json.loads(done.stdout)


def killed_log(
    point: str, *args: str, input: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    done = run_process(
        "log",
        "-s",
        "s",
        "--format",
        "json",
        *args,
        input=input,
        env={**FAULT, "SOLOQUEUE_FAULT": f"{point}:kill"},
    )
    assert done.returncode == -signal.SIGKILL, (done.returncode, done.stderr)
    assert done.stdout == b"", "nothing may be acknowledged by a killed writer"
    return done


# -- kill -9 in the middle of a live --batch stream -----------------------------------


@pytest.mark.usefixtures("store")
def test_kill_during_batch_keeps_every_acknowledged_event(home: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "soloqueue_mem", "log", "--batch", "--format", "jsonl", "-s", "s"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=os.environ.copy(),
    )
    assert proc.stdin is not None and proc.stdout is not None
    acknowledged: dict[str, int] = {}
    try:
        for n in range(30):
            content = f"event {n} 事件"
            proc.stdin.write(json.dumps({"role": "user", "content": content}).encode() + b"\n")
            proc.stdin.flush()
            ack = proc.stdout.readline()  # the acknowledgement is the synchronisation point
            assert ack, f"no acknowledgement for event {n}: {proc.stderr.read()!r}"
            turn = json.loads(ack)
            assert turn["content"] == content
            acknowledged[content] = turn["turn_index"]
        for n in range(30, 36):  # in flight when the kill lands
            proc.stdin.write(
                json.dumps({"role": "user", "content": f"event {n} 事件"}).encode() + b"\n"
            )
        proc.stdin.flush()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdin.close()
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    assert list(acknowledged.values()) == list(range(30))

    # Right after the crash: the index is a prefix of the JSONL; past it lie only
    # whole records (appended, never committed) and at most a torn final line.
    entries = list(read_lines(jsonl_path(home)))
    bad = [e for e in entries if e.record is None]
    assert all(e.number == len(entries) and "torn" in (e.error or "") for e in bad), bad
    records = [e.record for e in entries if e.record is not None]
    in_log = {r["content"]: r["turn_index"] for r in records}
    for content, index in acknowledged.items():
        assert in_log.get(content) == index, f"acknowledged {content!r} lost from the JSONL"
    rows = index_rows(home)
    assert [(r["turn_index"], r["content"]) for r in records[: len(rows)]] == [
        (i, c) for i, c, _ in rows
    ]
    assert [r["turn_index"] for r in records] == list(range(len(records)))
    indexed = [(i, c) for i, c, _ in rows]
    for content, index in acknowledged.items():
        assert (index, content) in indexed, f"acknowledged {content!r} lost from the index"

    # The next writer repairs the derived state: JSONL and index agree exactly.
    log("after the crash")
    records = assert_consistent(home)
    by_content = {r["content"]: r["turn_index"] for r in records}
    for content, index in acknowledged.items():
        assert by_content[content] == index
    assert records[-1]["content"] == "after the crash"


# -- fault points ---------------------------------------------------------------------


def test_torn_tail_from_a_kill_mid_write_is_set_aside(home: Path) -> None:
    log("first")
    log("second 第二")
    path = jsonl_path(home)
    complete = path.read_bytes()
    killed_log("log.mid_write", "third 第三 torn")
    data = path.read_bytes()
    assert data.startswith(complete) and len(data) > len(complete)
    assert not data.endswith(b"\n"), "the fault point must leave a torn tail"
    fragment = data[len(complete) :]

    shown = run_process("session", "show", "s", "--format", "json")
    assert shown.returncode == 0, shown.stderr
    body = json.loads(shown.stdout)
    assert [t["content"] for t in body["turns"]] == ["first", "second 第二"]
    assert len(body["problems"]) == 1 and "torn" in body["problems"][0]
    warning = shown.stderr.decode()
    assert warning.startswith("warning:") and "torn" in warning and "Traceback" not in warning

    log("fourth")
    records = assert_consistent(home)
    assert [r["content"] for r in records] == ["first", "second 第二", "fourth"]
    torn = path.with_name(path.name + ".torn")
    assert torn.read_bytes() == fragment + b"\n"
    # The fragment never became part of a record: the file is the complete records
    # from before the crash plus exactly one new, whole line.
    after = path.read_bytes()
    assert after.startswith(complete)
    (new_line,) = after[len(complete) :].splitlines()
    assert json.loads(new_line)["content"] == "fourth"
    assert all("torn" not in r["content"] for r in records)


def test_kill_before_commit_is_found_by_trace_then_indexed(home: Path) -> None:
    log("alpha")
    killed_log("log.before_commit", "zebra crossing")
    records = jsonl_records(home)
    assert [r["content"] for r in records] == ["alpha", "zebra crossing"]
    assert index_rows(home) == [(0, "alpha", None)], "the index must not have the uncommitted turn"

    found = run_process("trace", "zebra", "--format", "json")
    assert found.returncode == 0 and found.stderr == b"", found.stderr
    hits = json.loads(found.stdout)
    assert [(h["content"], h["turn_index"], h["source"]) for h in hits] == [
        ("zebra crossing", 1, "jsonl")
    ]

    assert log("omega")["turn_index"] == 2
    records = assert_consistent(home)
    assert [r["content"] for r in records] == ["alpha", "zebra crossing", "omega"]
    found = json.loads(run_process("trace", "zebra", "--format", "json").stdout)
    assert [(h["turn_index"], h["source"]) for h in found] == [(1, "index")]


def test_retry_after_kill_after_commit_does_not_duplicate(home: Path) -> None:
    log("before")
    event = json.dumps({"role": "user", "content": "exactly once", "event_id": "hook-7"}).encode()
    killed_log("log.after_commit", input=event)
    retried = log(input=event)
    assert retried["duplicate"] is True and retried["turn_index"] == 1
    assert log(input=event)["duplicate"] is True
    records = assert_consistent(home)
    assert [(r["content"], r.get("event_id")) for r in records] == [
        ("before", None),
        ("exactly once", "hook-7"),
    ]


def test_retry_after_kill_before_commit_does_not_duplicate(home: Path) -> None:
    event = json.dumps({"role": "user", "content": "exactly once", "event_id": "hook-8"}).encode()
    killed_log("log.before_commit", input=event)
    retried = log(input=event)
    assert retried["turn_index"] == 0
    records = assert_consistent(home)
    assert [(r["content"], r.get("event_id")) for r in records] == [("exactly once", "hook-8")]


# -- A3: a torn tail at every byte offset of the last line ----------------------------


def _through_the_cli(line: bytes, cut: int) -> bool:
    """Whether the CLI checks run at this cut: every cut with SOLOQUEUE_SLOW=1, else the
    first and last few, every cut inside a multi-byte character and every 16th (four
    processes a cut; the library check above runs at every cut)."""
    if os.environ.get("SOLOQUEUE_SLOW") == "1":
        return True
    inside = line[cut] & 0xC0 == 0x80  # the cut splits a UTF-8 character
    return inside or cut < 4 or cut > len(line) - 4 or cut % 16 == 0


def test_torn_tail_at_every_byte_offset(cli, home: Path, tmp_path: Path) -> None:
    contents = ["one", "deux ü", "三 🎉 end"]
    last = "last 最后 é🎉"
    for text in contents:
        cli.ok("log", "-s", "s", text)
    # The exact bytes the next record would have: log it into a twin session.
    for text in [*contents, last]:
        cli.ok("log", "-s", "twin", text)
    base = jsonl_path(home).read_bytes()
    line = jsonl_path(home, "twin").read_bytes()[len(base) :]
    assert line.endswith(b"\n") and json.loads(line)["content"] == last
    assert any(b >= 0x80 for b in line), "the line must contain multi-byte characters"

    pristine = tmp_path / "pristine"
    shutil.copytree(home, pristine)
    k = len(contents) + 1
    for cut in range(1, len(line)):  # every proper prefix, up to all but the newline
        fragment = line[:cut]
        root = tmp_path / f"cut{cut}"
        shutil.copytree(pristine, root)
        path = jsonl_path(root)
        with open(path, "ab") as handle:
            handle.write(fragment)

        entries = list(read_lines(path))
        assert [e.record["content"] for e in entries if e.record] == contents, cut
        assert [(e.number, "torn" in (e.error or "")) for e in entries if e.record is None] == [
            (k, True)
        ]
        if not _through_the_cli(line, cut):
            shutil.rmtree(root)
            continue

        shown = cli("session", "show", "s", "--root", str(root), "--format", "json")
        assert shown.exit_code == 0, (cut, shown.stderr)
        body = json.loads(shown.stdout)
        assert [t["content"] for t in body["turns"]] == contents, cut
        assert len(body["problems"]) == 1 and "torn" in body["problems"][0], cut
        assert "torn" in shown.stderr

        exported = cli.ok("session", "export", "s", "--root", str(root)).stdout
        assert [json.loads(x)["content"] for x in exported.splitlines()] == contents, cut

        # A fragment that already holds the searched word is not a hit.
        hits = json.loads(cli.ok("trace", "last", "--root", str(root), "--format", "json").stdout)
        assert [(h["session"], h["source"]) for h in hits] == [("twin", "index")], cut

        cli.ok("log", "-s", "s", "--root", str(root), "next")
        data = path.read_bytes()
        assert data.endswith(b"\n")
        records = [json.loads(x) for x in data.splitlines()]
        assert [r["content"] for r in records] == [*contents, "next"], cut
        assert [r["turn_index"] for r in records] == list(range(k)), cut
        assert path.with_name("s.jsonl.torn").read_bytes() == fragment + b"\n", cut
        assert all(e.record is not None for e in read_lines(path)), cut
        shutil.rmtree(root)
