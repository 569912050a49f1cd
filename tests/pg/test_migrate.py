"""``migrate --to``: a SQLite store copied into PostgreSQL, through the CLI and the library."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from soloqueue_mem.config import Config
from soloqueue_mem.home import Home
from soloqueue_mem.storage.sqlite.stores import open_memory
from tests.conftest import Cli, run_process

TURNS = [
    {"role": "user", "content": "Please build the parser in Rust", "event_id": "e1"},
    {
        "role": "assistant",
        "content": "我会用 Rust 写这个解析器",
        "tool_calls": [{"id": "c1", "name": "grep", "input": {"pattern": "fn main"}}],
    },
    {"role": "tool", "tool_results": [{"tool_call_id": "c1", "content": "src/main.rs"}]},
    {"role": "user", "content": "然后在上海开会讨论编译器", "metadata": {"n": 1}},
]


def _sqlite_store(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two sessions, and memories with a superseded version and a forgotten one."""
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-26T08:00:00Z")
    batch = "\n".join(json.dumps(t, ensure_ascii=False) for t in TURNS)
    cli.ok("log", "--batch", "-s", "s1", input=batch)
    cli.ok("log", "-s", "s2", "--group", "team", "the deploy key rotates monthly")
    cli.ok("remember", "--subject", "user", "--predicate", "city", "The user lives in 上海")
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-26T09:00:00Z")
    cli.ok("remember", "--subject", "user", "--predicate", "city", "The user lives in 北京")
    cli.ok("remember", "--type", "PREFERENCE", "--tag", "editor", "The user prefers vim")


def _migrate(cli: Cli, url: str) -> Any:
    result = cli("--format", "json", "migrate", "--to", url)
    return result.exit_code, json.loads(result.stdout) if result.stdout else None, result.stderr


def _counts(report: dict[str, Any]) -> dict[str, tuple[int, int, int, int]]:
    return {
        name: (t["source"], t["copied"], t["existing"], t["conflicts"])
        for name, t in report["tables"].items()
    }


def test_a_store_is_copied_whole_and_reads_the_same_on_postgres(
    cli: Cli, home: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _sqlite_store(cli, monkeypatch)
    on_sqlite = {
        "all": cli.json("memory", "list", "--all"),
        "history": cli.json("memory", "history", cli.json("memory", "list")[-1]["id"]),
    }
    code, report, _ = _migrate(cli, database_url)
    assert code == 0 and report["verified"] is True and report["conflicts"] == []
    assert _counts(report) == {
        "sessions": (2, 2, 0, 0),
        "turns": (5, 5, 0, 0),
        "memories": (3, 3, 0, 0),
        "episodes": (0, 0, 0, 0),
        "remember_events": (0, 0, 0, 0),
    }
    for table in report["tables"].values():
        assert table["source_sha256"] == table["target_sha256"]
    monkeypatch.setenv("SOLOQUEUE_DATABASE_URL", database_url)
    monkeypatch.setenv("SOLOQUEUE_HOME", str(home.parent / "host-b"))  # another host
    assert cli.json("memory", "list", "--all") == on_sqlite["all"]
    assert cli.json("memory", "history", on_sqlite["history"][-1]["id"]) == on_sqlite["history"]
    assert [h["turn_index"] for h in cli.json("trace", "编译器")] == [3]
    assert [h["turn_index"] for h in cli.json("trace", "grep", "-s", "s1")] == [1]  # tool calls
    nxt = cli.json("log", "-s", "s1", "after the move")
    assert nxt["turn_index"] == 4  # the session's counter came along
    again = cli.json("log", "-s", "s1", input=json.dumps(TURNS[0]))
    assert again["duplicate"] is True  # and its event ids


def test_a_rerun_copies_nothing_and_verifies_again(
    cli: Cli, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _sqlite_store(cli, monkeypatch)
    first = _migrate(cli, database_url)[1]
    code, second, _ = _migrate(cli, database_url)
    assert code == 0 and second["verified"] is True
    assert _counts(second) == {
        "sessions": (2, 0, 2, 0),
        "turns": (5, 0, 5, 0),
        "memories": (3, 0, 3, 0),
        "episodes": (0, 0, 0, 0),
        "remember_events": (0, 0, 0, 0),
    }
    assert {n: t["target_sha256"] for n, t in second["tables"].items()} == {
        n: t["target_sha256"] for n, t in first["tables"].items()
    }


def test_a_copied_correction_naming_a_dropped_value_is_kept_at_its_expiry(
    cli: Cli, home: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The value a memory says it replaced comes along, and PostgreSQL's expiry reads
    it as SQLite's does: the correction stays (out of recall), another memory goes."""
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-09-10T08:00:00Z")
    named = cli.json("remember", "The studio is dropping .po, everything moves to XLIFF 2.0")
    cli.ok("remember", "The studio ships strings every Friday")
    assert _migrate(cli, database_url)[0] == 0
    monkeypatch.setenv("SOLOQUEUE_DATABASE_URL", database_url)
    monkeypatch.setenv("SOLOQUEUE_HOME", str(home.parent / "host-b"))
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-10-20T03:43:00Z")
    assert cli.json("consolidate", "--format", "json")["expire"]["deleted"] == 1
    assert [m["id"] for m in cli.json("memory", "list", "--all")] == [named["id"]]


def test_a_copy_killed_mid_way_is_finished_by_running_it_again(
    cli: Cli, home: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _sqlite_store(cli, monkeypatch)
    killed = run_process(
        "migrate",
        "--to",
        database_url,
        env={"SOLOQUEUE_TESTING": "1", "SOLOQUEUE_FAULT": "migrate.after_batch:kill"},
    )
    assert killed.returncode == -9 and killed.stdout == b""  # after the sessions' batch
    code, report, _ = _migrate(cli, database_url)
    assert code == 0 and report["verified"] is True
    assert _counts(report) == {
        "sessions": (2, 0, 2, 0),
        "turns": (5, 5, 0, 0),
        "memories": (3, 3, 0, 0),
        "episodes": (0, 0, 0, 0),
        "remember_events": (0, 0, 0, 0),
    }


def test_batches_resume_where_an_interrupted_library_copy_stopped(
    cli: Cli, home: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from soloqueue_mem.storage.postgres.connect import connect
    from soloqueue_mem.storage.postgres.copy_sqlite import copy_tables

    _sqlite_store(cli, monkeypatch)
    source = open_memory(Home(home), Config(), create=False)
    assert source is not None
    batches = []

    def stop_at_the_second_turn_batch(table: str, rows: int) -> None:
        batches.append(table)
        if batches.count("turns") == 2:
            raise KeyboardInterrupt

    with connect(database_url) as target:
        with pytest.raises(KeyboardInterrupt):
            copy_tables(source, target, batch_rows=2, progress=stop_at_the_second_turn_batch)
        report = copy_tables(source, target, batch_rows=2).report()
    source.close()
    assert report["verified"] is True
    assert report["tables"]["turns"]["copied"] == 1 and report["tables"]["turns"]["existing"] == 4
    (count,) = target_turns(database_url, "s1")
    assert count == 4


def target_turns(url: str, session: str) -> tuple[int]:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT turn_count FROM sessions WHERE session_id = %s", (session,)
        ).fetchone()
    assert row is not None
    return row


def test_rows_the_database_holds_differently_are_conflicts_left_alone(
    cli: Cli, home: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _sqlite_store(cli, monkeypatch)
    host_b = {"SOLOQUEUE_DATABASE_URL": database_url, "SOLOQUEUE_HOME": str(home.parent / "b")}
    written = cli("--format", "json", "log", "-s", "s1", "host b was here first", env=host_b)
    assert written.exit_code == 0
    code, report, stderr = _migrate(cli, database_url)
    assert code == 65 and report["verified"] is False
    assert "left as they are" in stderr
    assert report["conflicts"] == [{"table": "turns", "key": ["default", "default", "s1", 0]}]
    turns = report["tables"]["turns"]
    assert (turns["copied"], turns["conflicts"]) == (4, 1)
    assert turns["source_sha256"] != turns["target_sha256"]
    hits = cli("--format", "json", "trace", "host", env=host_b)
    assert [h["content"] for h in json.loads(hits.stdout)] == ["host b was here first"]


def test_bad_targets_are_one_error_line(cli: Cli, home: Path, database_url: str) -> None:
    missing = cli("migrate", "--to", database_url)
    assert missing.exit_code == 66 and "no data directory" in missing.stderr
    cli.ok("log", "-s", "s1", "hi")
    bad = cli("migrate", "--to", "mysql://x")
    assert bad.exit_code == 65 and bad.stderr.count("\n") == 1
    gone = cli("migrate", "--to", f"postgresql://u:secret@/db?host={home}/none")
    assert gone.exit_code == 74 and gone.stderr.startswith("error: cannot connect")
    assert "secret" not in gone.stderr


def test_the_printed_url_hides_its_password() -> None:
    from soloqueue_mem.storage.base import shown_url

    assert shown_url("postgresql://ann:pw@db:5432/m?x=1") == "postgresql://ann:***@db:5432/m?x=1"
    assert shown_url("postgresql://ann@db/m") == "postgresql://ann@db/m"


def test_the_rest_of_the_store_comes_along_and_a_rerun_adds_nothing(
    cli: Cli, home: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Extraction state, scratchpads, working memory, kv and session variables."""
    from tests.cli.test_offload import write_config
    from tests.e2e.test_extract_on_log import wait_for_workers

    write_config(home, "extract_on_log = true\n")
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-26T08:00:00Z")
    cli.ok("log", "-s", "s1", "I live in Berlin and I prefer tea")
    wait_for_workers(home)
    cli.ok("scratchpad", "set", "## 当前项目\n- the parser")
    cli.ok("kv", "set", "editor", '"vim"')
    cli.ok("session", "set", "s1", "next_step", "write tests")
    cli.ok("working", "add", "looking at the lexer")
    made = cli.json("remember", "the build uses ninja", "--event-id", "k1")
    cli.ok("attach", "-", "--name", "plan.md", input=b"# Plan\nport the lexer")
    reads = [
        ("attachment", "list"),
        ("scratchpad", "show"),
        ("kv", "list"),
        ("session", "get", "s1"),
        ("working", "list"),
        ("memory", "list"),
    ]
    on_sqlite = [cli.json(*read) for read in reads]
    code, report, _ = _migrate(cli, database_url)
    assert code == 0 and report["verified"] is True
    assert _counts(report)["log_extractions"] == (1, 1, 0, 0)
    assert _counts(report)["extraction_queue"] == (0, 0, 0, 0)
    assert _counts(report)["remember_events"] == (1, 1, 0, 0)
    copied = {kind: (t["source"], t["copied"]) for kind, t in report["records"].items()}
    assert copied == {
        "scratchpad": (1, 1),
        "working": (1, 1),
        "attachment": (1, 1),
        "kv": (1, 1),
        "session_state": (1, 1),
        "embedding": (0, 0),
        "embedded_item": (0, 0),
    }
    monkeypatch.setenv("SOLOQUEUE_DATABASE_URL", database_url)
    monkeypatch.setenv("SOLOQUEUE_HOME", str(home.parent / "host-b"))
    assert [cli.json(*read) for read in reads] == on_sqlite
    retried = cli.json("remember", "the build uses ninja", "--event-id", "k1")
    assert retried["duplicate"] is True and retried["id"] == made["id"]
    monkeypatch.delenv("SOLOQUEUE_DATABASE_URL")
    monkeypatch.setenv("SOLOQUEUE_HOME", str(home))
    code, again, _ = _migrate(cli, database_url)
    assert code == 0 and again["verified"] is True
    assert all(t["copied"] == 0 for t in [*again["tables"].values(), *again["records"].values()])
    assert again["records"]["kv"]["existing"] == 1
