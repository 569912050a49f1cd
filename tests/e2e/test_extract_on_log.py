"""``extract_on_log = true``: log starts a background worker that extracts memories
from a user's turn (>= 30 characters, at most 5 turns per session, also across
concurrent workers); the session's digest does not extract those turns again. The
test waits for the workers by taking their lock exclusively, as a script can."""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
from pathlib import Path

from tests.cli.test_offload import write_config

STATEMENTS = [f"我更喜欢用 vim 写第 {n} 个项目的代码，回答请简洁一点就好" for n in range(7)]


def wait_for_workers(home: Path) -> None:
    fd = os.open(home / ".extract.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    finally:
        os.close(fd)


def extracted(home: Path) -> list[tuple]:
    with sqlite3.connect(home / "state.db") as conn:
        return conn.execute(
            "SELECT turn_index FROM log_extractions WHERE extracted_at IS NOT NULL"
            " ORDER BY turn_index"
        ).fetchall()


def test_user_turns_are_extracted_in_the_background_at_most_five(cli, home):
    write_config(home, "extract_on_log = true\n")
    batch = [{"role": "user", "content": "short: use vim"}]  # under 30 characters
    batch += [{"role": "user", "content": text} for text in STATEMENTS[:3]]
    cli.ok("log", "-s", "s1", "--batch", input="\n".join(map(json.dumps, batch)))
    for text in STATEMENTS[3:]:  # one worker each, running at once with the others
        cli.ok("log", "-s", "s1", "--role", "user", text)
    wait_for_workers(home)
    assert len(extracted(home)) == 5 and (0,) not in extracted(home)
    memories = cli.json("memory", "list")
    assert len(memories) == 5 and {m["source"] for m in memories} == {"log"}
    ended = cli.json("session", "end", "s1")
    assert len(ended["memories"]) == 2  # the two turns past the cap, from the digest
    # The extracted turns were not counted twice: their confidence did not rise.
    assert {m["confidence"] for m in cli.json("memory", "list")} == {0.5}


def test_off_by_default_starts_no_worker(cli, home):
    cli.ok("log", "-s", "s1", "--role", "user", STATEMENTS[0])
    assert not (home / ".extract.lock").exists()
    assert cli.json("memory", "list") == []


def test_a_batch_of_many_sessions_is_logged_and_extracted(cli, home):
    """The sessions a batch names are looked up in chunks: one query naming 1,200
    sessions would exceed SQLite's expression depth and fail the whole log."""
    write_config(home, "extract_on_log = true\n")
    cli.ok("log", "-s", "s0", "--role", "user", STATEMENTS[1])
    wait_for_workers(home)  # its claims table now exists, so the batch asks it
    batch = [{"role": "user", "content": STATEMENTS[0], "session": f"s{n}"} for n in range(1200)]
    cli.ok("log", "--batch", input="\n".join(map(json.dumps, batch)))
    wait_for_workers(home)
    assert len(extracted(home)) == 1201
