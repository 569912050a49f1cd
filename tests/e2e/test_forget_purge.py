"""RELIABILITY E6: `memory forget` really erases. After it returns, a canary that was
in a memory (its content, subject and tags, and every earlier version of it) is in no
byte of memory.db or its write-ahead log: not in a table page, a free page, an index
or the full-text index. Each test first proves the canary was in those bytes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_process

ASCII_CANARY = "CanaryQ7W3Z9X"
CHINESE_CANARY = "鹦鹉螺暗号"  # characters no other memory here uses


_OPEN = (
    "import sqlite3, sys\n"
    "conn = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
    "if sys.argv[2] == 'snapshot':\n"
    "    conn.execute('BEGIN')\n"
    "conn.execute('SELECT COUNT(*) FROM memories').fetchone()\n"
    "print('open', flush=True)\n"
    "sys.stdin.read()\n"
    "conn.close()\n"
)


class OtherProcess:
    """Another process with memory.db open: ``idle`` between reads, or holding a read
    ``snapshot``. A separate process, because reading the file's bytes from this one
    would drop this process's POSIX locks on it."""

    def __init__(self, path: Path, mode: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _OPEN, str(path), mode],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.proc.stdout.readline() == b"open\n", self.proc.stderr.read()  # type: ignore[union-attr]

    def close(self) -> None:
        if self.proc.returncode is None:
            self.proc.communicate(b"", timeout=30)
            assert self.proc.returncode == 0


def raw_bytes(home: Path) -> bytes:
    """memory.db and memory.db-wal as they are on disk."""
    data = (home / "memory.db").read_bytes()
    wal = home / "memory.db-wal"
    return data + (wal.read_bytes() if wal.exists() else b"")


def traces_of(data: bytes) -> list[str]:
    """Which forms of the canaries appear: as written, as the FTS index stores them
    (lower case, CJK one character per token), and as single CJK characters."""
    forms = [ASCII_CANARY, ASCII_CANARY.lower(), CHINESE_CANARY, *CHINESE_CANARY]
    return [form for form in forms if form.encode("utf-8") in data]


@pytest.fixture
def canary(cli, home):
    """Ordinary memories around one that holds both canaries in several versions."""
    fillers = [{"content": f"ordinary memory {i} about the garden"} for i in range(40)]
    cli.ok("remember", input=json.dumps(fillers))
    sp = ("--subject", f"vault-{ASCII_CANARY}", "--predicate", "code", "--tag", ASCII_CANARY)
    first = cli.json("remember", f"the vault code was {ASCII_CANARY} 旧{CHINESE_CANARY}", *sp)
    latest = cli.json("remember", f"the vault code is {ASCII_CANARY} {CHINESE_CANARY}", *sp)
    assert latest["superseded"] == [first["id"]]
    cli.ok("remember", f"THE VAULT CODE IS {ASCII_CANARY}, {CHINESE_CANARY}!")  # confirms it
    cli.ok("remember", input=json.dumps([{"content": "one more ordinary memory"}]))
    # Searchable, so the full-text index holds the canary's terms too.
    for query in (ASCII_CANARY, CHINESE_CANARY):
        hits = cli.json("recall", query, "--channels", "memories")
        assert [h["id"] for h in hits] == [latest["id"]]
    return latest["id"]


def test_forget_leaves_no_canary_in_the_database_or_its_wal(cli, home, canary):
    # Another process keeps the database open, so the WAL is not simply deleted when
    # the forgetting process exits: the forget itself has to empty it.
    other = OtherProcess(home / "memory.db", "idle")
    try:
        assert traces_of(raw_bytes(home)) == [
            ASCII_CANARY,
            ASCII_CANARY.lower(),
            CHINESE_CANARY,
            *CHINESE_CANARY,
        ]
        done = run_process("--format", "json", "memory", "forget", canary[:8])
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout)
        assert len(out["forgotten"]) == 2 and out["wal_cleared"] is True
        assert done.stderr == b""
        assert (home / "memory.db-wal").exists()  # kept by the other process, but empty
        assert traces_of(raw_bytes(home)) == []
    finally:
        other.close()
    assert traces_of(raw_bytes(home)) == []
    assert len(cli.json("memory", "list", "--all")) == 41
    assert cli.json("recall", ASCII_CANARY) == []
    assert cli.json("recall", "ordinary garden", "--limit", "3") != []


def test_a_reader_delays_the_purge_and_forget_says_so(cli, home, canary):
    (home / "config.toml").write_text("busy_timeout_ms = 100\n")
    reader = OtherProcess(home / "memory.db", "snapshot")
    try:
        result = run_process("--format", "json", "memory", "forget", canary)
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["wal_cleared"] is False
        assert result.stderr.startswith(b"warning: another process is reading the store")
        # The reader's snapshot still needs the old pages, so the canary is still on disk...
        assert traces_of(raw_bytes(home)) != []
    finally:
        reader.close()
    # ...until the next checkpoint, here the last connection closing.
    assert traces_of(raw_bytes(home)) == []
    assert cli.json("recall", CHINESE_CANARY) == []


def test_forget_does_not_rely_on_the_sqlite_build_default(home, canary):
    """Some SQLite builds zero freed bytes by default and some do not: forget turns
    secure_delete on itself, so it erases through a connection that had it off."""
    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.memory import store
    from soloqueue_mem.storage.sqlite.stores import open_memory

    conn = open_memory(Home(home), Config(), create=False)
    assert conn is not None
    try:
        conn.execute("PRAGMA secure_delete = OFF")
        assert len(store.forget(conn, [canary]).ids) == 2
    finally:
        conn.close()
    assert traces_of(raw_bytes(home)) == []
