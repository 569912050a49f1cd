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


def test_the_library_pushes_promotes_and_queries_on_postgres(home: Path, on_postgres: str) -> None:
    from soloqueue_mem import Store

    with Store() as store:
        added = store.working_add("the staging database moved to 10.0.0.7", group="ops")
        assert added.entry is not None and added.entry.id == 1
        assert store.working_add("thanks", group="ops").dropped == "acknowledgement"
        first = store.promote("Staging lives at 10.0.0.7.\n\nBackups run nightly.", group="ops")
        again = store.promote("Staging lives at 10.0.0.7.\n\nBackups run nightly.", group="ops")
        assert (len(first.stored), again.stored, again.existing) == (1, [], 1)
        answer = store.query("staging backups", group="ops").as_json()
        assert [r["source"] for r in answer["results"]] == ["hot", "cold"]
        assert answer["cold_search"] == "lexical"
    assert not (home / "memory.db").exists()


def test_hosts_pushing_the_same_entries_at_once_store_each_once(
    tmp_path: Path, on_postgres: str
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from soloqueue_mem import Store

    names = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima".split()
    texts = [f"the {name} cluster deployment finished" for name in names]

    def push(host: str) -> list[bool]:
        with Store(tmp_path / host) as store:
            return [store.working_add(t, group="ops").entry is not None for t in texts]

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(push, ["a", "b", "c", "d"]))
    assert sum(map(sum, results)) == len(texts)  # each text entered once, whoever won
    import psycopg

    with psycopg.connect(on_postgres) as conn:
        stored = [row[0] for row in conn.execute("SELECT content FROM working_memory")]
    assert sorted(stored) == sorted(texts)


def test_a_nul_character_is_refused_in_one_line_and_the_rest_is_logged(
    cli: Cli, on_postgres: str
) -> None:
    """PostgreSQL text cannot hold U+0000 (SQLite keeps it): the line holding it is
    refused with its reason, and a batch logs its other lines."""
    done = cli("log", "-s", "n", input=json.dumps({"role": "user", "content": "a\x00b"}))
    assert done.exit_code == 65
    assert done.stderr.splitlines() == [
        "error: PostgreSQL text cannot hold a NUL character (U+0000): remove it, or use SQLite"
    ]
    lines = [json.dumps({"role": "user", "content": text}) for text in ("one", "t\x00wo", "three")]
    batch = cli("log", "--batch", "-s", "n", input="\n".join(lines) + "\n")
    assert batch.exit_code == 65, batch.stderr
    assert "line 2: PostgreSQL text cannot hold a NUL character" in batch.stderr
    shown = cli.json("session", "show", "n")
    assert [t["content"] for t in shown["turns"]] == ["one", "three"]
