"""``stats``, ``verify`` and ``gc`` on PostgreSQL: the scenarios of the SQLite tests run
on both back ends, and what only the shared database has (tsvectors, turn indexes
written by several hosts, supersede chains, blobs other hosts reference)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from soloqueue_mem import Store
from soloqueue_mem.clock import parse_timestamp
from soloqueue_mem.storage.postgres import reindex, verify
from soloqueue_mem.storage.postgres.schema import MIGRATIONS
from tests.conftest import NOW, Cli
from tests.pg.conftest import let_go

pytest.importorskip("psycopg")
import psycopg  # noqa: E402

EX_WARNINGS, EX_ERRORS, EX_TEMPFAIL = 8, 9, 75
HOUR = 3600


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "postgres":
        request.getfixturevalue("on_postgres")
    return str(request.param)


def run_verify(cli: Cli, *args: str) -> tuple[int, dict]:
    result = cli("--format", "json", "verify", *args)
    return result.exit_code, json.loads(result.stdout)


def kinds(report: dict) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for finding in report["findings"]:
        found.setdefault(finding["kind"], []).append(finding)
    return found


def jsonl(home: Path, session: str) -> Path:
    return home / "groups" / "default" / "sessions" / "default" / f"{session}.jsonl"


def three_turns(cli: Cli) -> None:
    cli.ok("log", "-s", "s", "hello alpha")
    cli.ok("log", "-s", "s", "--role", "assistant", "reply bravo")
    cli.ok("log", "-s", "t", "other charlie")


def sql(url: str, statement: str, *params: object) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(statement, params)  # type: ignore[arg-type] - test SQL
        return cursor.fetchall() if cursor.description else []


# --- both back ends ----------------------------------------------------------------


def test_stats_counts_the_store(cli: Cli, home: Path, backend: str) -> None:
    cli.ok("log", "-s", "a", "one")
    cli.ok("log", "-s", "b", "two")
    stats = cli.json("stats")
    assert stats["counts"] == {
        "turns": 2, "sessions": 2, "memories": 0, "artifacts": 0, "attachments": 0
    }  # fmt: skip
    assert stats["session_logs"]["files"] == 2
    if backend == "postgres":
        database = stats["databases"]["postgresql"]
        assert database["schema_version"] == len(MIGRATIONS) and database["bytes"] > 0
        assert database["rows"]["quarantine_logs"] == 2
        assert stats["backend"] == "postgres" and "counts.turns" in stats["shared"]
        assert not (home / "memory.db").exists()
    else:
        assert "backend" not in stats and "memory.db" in stats["databases"]


def test_verify_a_clean_store_then_a_corrupt_line_then_a_torn_tail(
    cli: Cli, home: Path, backend: str
) -> None:
    three_turns(cli)
    code, report = run_verify(cli)
    assert (code, report["findings"]) == (0, [])
    assert {k: report["counts"][k] for k in ("sessions", "turns_logged", "turns_indexed")} == {
        "sessions": 2,
        "turns_logged": 3,
        "turns_indexed": 3,
    }
    path = jsonl(home, "t")
    with open(path, "ab") as handle:
        handle.write(b'{"turn_index": 1, "timestamp": "2026-11-26T08:00:00.000Z", "role": "us')
    code, report = run_verify(cli)
    assert code == EX_WARNINGS, report
    assert [(f["kind"], f["where"]) for f in report["findings"]] == [
        ("torn-tail", "groups/default/sessions/default/t.jsonl:2")
    ]
    lines = jsonl(home, "s").read_bytes().splitlines(keepends=True)
    jsonl(home, "s").write_bytes(lines[0][:20] + b"\n" + lines[1])
    code, report = run_verify(cli)
    assert code == EX_ERRORS
    assert [f["where"] for f in kinds(report)["jsonl-corrupt"]] == [
        "groups/default/sessions/default/s.jsonl:1"
    ]


def test_verify_and_gc_on_a_missing_store_create_nothing(
    cli: Cli, home: Path, backend: str
) -> None:
    if backend == "sqlite":  # no data directory: no store (on PostgreSQL, the database)
        assert cli("verify", "--full").exit_code == cli("gc", "--deep").exit_code == 66
        assert not home.exists()
        return
    code, report = run_verify(cli, "--full")
    assert (code, report["findings"]) == (0, [])
    assert cli.json("gc", "--deep")["phase2"] == {"ran": False}
    assert not home.exists()


def test_gc_deletes_an_aged_orphan_and_keeps_what_a_turn_offloaded(
    cli: Cli, home: Path, backend: str
) -> None:
    cli.ok("log", "-s", "s", "--offload", "x" * 5000)
    (offloaded,) = [p for p in (home / "artifacts" / "blobs").rglob("*") if p.is_file()]
    orphan = put_blob(home, b"nobody's")
    report = cli.json("gc", "--deep")
    assert set(report) == {"dry_run", "phase1", "phase2", "seconds"}
    phase2 = report["phase2"]
    assert (phase2["blobs"], phase2["deleted_blobs"], phase2["missing_blobs"]) == (2, 1, [])
    assert offloaded.exists() and not (home / orphan).exists()
    assert run_verify(cli)[0] == 0


# --- PostgreSQL: the shared database ------------------------------------------------


def test_stats_says_which_figures_are_every_hosts(
    cli: Cli, home: Path, on_postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli.ok("log", "-s", "a", "one")
    cli.ok("log", "-s", "a", "two")
    monkeypatch.setenv("SOLOQUEUE_HOME", str(home.parent / "host-b"))
    cli.ok("log", "-s", "b", "three")
    with Store() as store:
        stats = store.stats()
    assert stats["counts"]["turns"] == 3 and stats["counts"]["sessions"] == 2  # the database's
    assert stats["session_logs"]["files"] == 1  # this host's


def test_a_corrupted_tsvector_is_found_and_repaired(cli: Cli, home: Path, on_postgres: str) -> None:
    cli.ok("log", "-s", "zh", "我们在上海讨论编译器")
    cli.ok("remember", "用户住在北京海淀区")
    cli.ok("session", "end", "zh")
    cli.ok("attach", "-", "--name", "plan.md", input="编译器的计划".encode())
    for table in ("quarantine_logs", "memories", "episodes", "attachments"):
        sql(on_postgres, f"UPDATE {table} SET search = to_tsvector('simple', 'garbage')")
    assert cli.json("trace", "编译器") == []
    code, report = run_verify(cli)
    assert code == EX_ERRORS
    assert sorted(f["where"] for f in kinds(report)["stale-search"]) == [
        "attachments",
        "episodes",
        "memories",
        "quarantine_logs",
    ]
    code, report = run_verify(cli, "--repair")
    assert code == EX_ERRORS  # what was found before the repair
    assert report["repaired"]["search_rows"] == {
        "quarantine_logs": 1,
        "memories": 2,
        "episodes": 1,
        "attachments": 1,
    }  # the logged statement is a memory too
    assert run_verify(cli)[0] == 0
    assert [hit["turn_index"] for hit in cli.json("trace", "编译器")] == [0]
    assert len(cli.json("recall", "编译器", "--channels", "attachments")) == 1


def test_a_dropped_search_index_is_an_error_and_repair_builds_it(
    cli: Cli, on_postgres: str
) -> None:
    cli.ok("log", "-s", "s", "hello")
    sql(on_postgres, "DROP INDEX memories_search")
    code, report = run_verify(cli, "--repair")
    assert code == EX_ERRORS
    assert [f["where"] for f in kinds(report)["missing-index"]] == ["memories"]
    assert report["repaired"]["search_indexes"] == 1
    assert run_verify(cli)[0] == 0


def test_the_quick_check_samples_the_newest_rows_and_full_checks_all(
    cli: Cli, on_postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(verify, "SAMPLE", 2)
    for n in range(4):
        cli.ok("log", "-s", "s", f"turn {n}")
    sql(on_postgres, "UPDATE quarantine_logs SET search = '' WHERE turn_index = 0")
    assert run_verify(cli)[0] == 0
    code, report = run_verify(cli, "--full")
    assert code == EX_ERRORS
    assert "id 1" in kinds(report)["stale-search"][0]["detail"]
    assert report["counts"]["search_rows_checked"] == 4


def test_turn_gaps_and_wrong_counters_are_errors_and_repair_fixes_the_counters(
    cli: Cli, on_postgres: str
) -> None:
    for n in range(3):
        cli.ok("log", "-s", "gap", f"turn {n}")
        cli.ok("log", "-s", "count", f"turn {n}")
    sql(on_postgres, "DELETE FROM quarantine_logs WHERE session_id = 'gap' AND turn_index = 1")
    sql(on_postgres, "UPDATE sessions SET next_turn_index = 2 WHERE session_id = 'count'")
    code, report = run_verify(cli)
    assert code == EX_ERRORS
    found = kinds(report)
    assert [(f["where"], f["detail"]) for f in found["turn-gap"]] == [
        ("default/default/gap", "2 turn(s) with indexes 0..2")
    ]
    counters = {f["where"]: f["severity"] for f in found["session-counter"]}
    assert counters == {"default/default/count": "error", "default/default/gap": "warning"}
    assert kinds(report)["unindexed-turns"][0]["severity"] == "info"  # gap's turn 1, logged
    repaired = run_verify(cli, "--repair")[1]["repaired"]
    assert repaired["session_counters"] == 2
    assert cli.json("log", "-s", "count", "turn 3")["turn_index"] == 3
    assert set(kinds(run_verify(cli)[1])) == {"turn-gap", "unindexed-turns"}


def test_only_this_hosts_logged_turns_are_compared(
    cli: Cli, home: Path, on_postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli.ok("log", "-s", "shared", "from host a")
    monkeypatch.setenv("SOLOQUEUE_HOME", str(home.parent / "host-b"))
    cli.ok("log", "-s", "shared", "from host b")
    monkeypatch.setenv("SOLOQUEUE_HOME", str(home))
    code, report = run_verify(cli)
    assert (code, report["counts"]["turns_logged"], report["counts"]["turns_indexed"]) == (0, 1, 2)
    record = {"turn_index": 5, "role": "user", "content": "never committed"}
    with open(jsonl(home, "shared"), "a") as log:
        log.write(json.dumps(record) + "\n")
    code, report = run_verify(cli)
    assert code == 0  # info: the database is the ground truth
    assert [(f["kind"], f["severity"]) for f in report["findings"]] == [("unindexed-turns", "info")]


def test_a_reindex_another_process_holds_is_reported_pending(cli: Cli, on_postgres: str) -> None:
    cli.ok("log", "-s", "s", "hello")
    with psycopg.connect(on_postgres, autocommit=True) as worker:
        with worker.transaction():
            reindex.schedule(worker)
        worker.execute("SELECT pg_advisory_lock(%s)", (reindex._LOCK,))
        code, report = run_verify(cli, "--repair")
        assert code == EX_WARNINGS
        assert [f["where"] for f in kinds(report)["reindex-pending"]] == ["quarantine_logs"]
        assert cli.json("stats")["databases"]["postgresql"]["reindex"]["quarantine_logs"]
        let_go(worker, reindex._LOCK)
    assert run_verify(cli)[0] == 0  # opened with the job free: done first
    assert "reindex" not in cli.json("stats")["databases"]["postgresql"]


# --- PostgreSQL: gc -------------------------------------------------------------------


def put_blob(home: Path, data: bytes) -> str:
    """An orphan blob file two hours old as the pinned clock sees it."""
    digest = hashlib.sha256(data).hexdigest()
    relpath = f"artifacts/blobs/2026/11/26/{digest[:2]}/{digest[2:4]}/{digest}"
    path = home / relpath
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.write_bytes(data)
    stamp = parse_timestamp(NOW).timestamp() - 2 * HOUR
    os.utime(path, (stamp, stamp))
    return relpath


def test_one_gc_at_a_time_across_hosts(cli: Cli, home: Path, on_postgres: str) -> None:
    cli.ok("log", "-s", "s", "hello")
    with psycopg.connect(on_postgres, autocommit=True) as other_host:
        from soloqueue_mem.storage.base import GC_LOCK

        other_host.execute("SELECT pg_advisory_lock(%s)", (GC_LOCK,))
        result = cli("gc", "--deep")
        assert result.exit_code == EX_TEMPFAIL and "another host" in result.stderr
        let_go(other_host, GC_LOCK)
    assert cli.json("gc", "--deep")["phase2"]["ran"] is True
