"""Sessions, working memory and seed 004's query on the PostgreSQL back end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Cli


def test_a_session_reads_every_hosts_turns(
    cli: Cli, home: Path, on_postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-26T08:00:00Z")
    cli.ok("log", "-s", "s1", "written on host a")
    monkeypatch.setenv("SOLOQUEUE_HOME", str(home.parent / "host-b"))
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-26T08:01:00Z")
    cli.ok("log", "-s", "s1", "-r", "assistant", "written on host b")
    exported = cli.ok("session", "export", "s1").stdout.splitlines()
    assert [json.loads(line)["content"] for line in exported] == [
        "written on host a",
        "written on host b",
    ]
    (row,) = cli.json("session", "list")
    assert (row["session"], row["turn_count"], row["last_turn_at"]) == (
        "s1",
        2,
        "2026-11-26T08:01:00.000Z",
    )
    assert cli("session", "show", "nope").exit_code == 3


def test_this_hosts_log_gives_the_original_of_offloaded_output(
    cli: Cli, home: Path, on_postgres: str
) -> None:
    big = "x" * 20_000
    event = {"role": "tool", "content": big, "tool_results": [{"id": "c1", "content": big}]}
    cli.ok("log", "-s", "s1", "--offload", input=json.dumps(event))
    (record,) = [json.loads(line) for line in cli.ok("session", "export", "s1").stdout.splitlines()]
    assert record["content"] == big and record.get("offloaded")
    host_b = home.parent / "host-b"
    host_b.mkdir()
    other = cli.ok("--root", str(host_b), "session", "export", "s1").stdout
    assert big not in other  # host b sees the database's L1 view: a reference
