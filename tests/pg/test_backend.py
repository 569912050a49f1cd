"""The PostgreSQL back end through the CLI, the library and several processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from soloqueue_mem import Store
from soloqueue_mem.errors import NotFound
from tests.conftest import Cli, run_process


def test_the_fast_log_path_and_a_real_process_use_postgres(home: Path, on_postgres: str) -> None:
    done = run_process("--format", "json", "log", "-s", "s1", "hello from a process")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["turn_index"] == 0
    assert not (home / "memory.db").exists()
    assert (home / "groups/default/sessions/default/s1.jsonl").is_file()  # the local log


def test_event_ids_dedup_and_indexes_continue_across_hosts(
    cli: Cli, home: Path, on_postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    event = json.dumps({"role": "user", "content": "once", "event_id": "e1"})
    first = cli.json("log", "-s", "shared", input=event)
    monkeypatch.setenv("SOLOQUEUE_HOME", str(home.parent / "host-b"))
    again = cli.json("log", "-s", "shared", input=event)
    assert again["duplicate"] is True and again["id"] == first["id"]
    second = cli.json("log", "-s", "shared", "next turn, written on host b")
    assert second["turn_index"] == 1
    hits = cli.json("trace", "once")
    assert [h["content"] for h in hits] == ["once"]


def test_the_library_store_runs_on_postgres(home: Path, on_postgres: str) -> None:
    with Store() as store:
        (turn,) = store.log("the deploy key rotates monthly", session="s1")
        assert turn.turn_index == 0
        assert [h.turn.id for h in store.trace("deploy")] == [turn.id]
        made = store.remember("deploys happen on Fridays", subject="team", predicate="deploy_day")
        later = store.remember("deploys happen on Mondays", subject="team", predicate="deploy_day")
        assert later.action == "superseded" and later.superseded == [made.memory.id]
        assert [m.id for m in store.memories()] == [later.memory.id]
        hits = store.recall("deploys", channels=["memories"]).hits
        assert [h.candidate.memory.id for h in hits] == [later.memory.id]
        assert store.memory(later.memory.id[:8]).access_count == 1
        forgotten = store.forget(later.memory.id)
        assert set(forgotten.ids) == {made.memory.id, later.memory.id}
        with pytest.raises(NotFound):
            store.memory(later.memory.id)
        assert [s.session for s in store.sessions()] == ["s1"]
        assert store.session_export("s1").count("\n") == 1
        with pytest.raises(NotFound):
            store.kv_get("k")  # kv runs on PostgreSQL (tests/pg/test_context_hosts.py)
    assert not (home / "memory.db").exists()


def test_recall_names_the_channels_it_lacks(
    cli: Cli, on_postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from soloqueue_mem.storage.postgres.backend import PostgresBackend

    monkeypatch.setattr(PostgresBackend, "channels", frozenset({"memories", "episodes"}))
    result = cli("recall", "x", "--channels", "memories,kinds")
    assert result.exit_code == 69
    assert "kinds" in result.stderr


_WRITER = """
import sys
from soloqueue_mem import Store
with Store(sys.argv[1]) as store:
    for n in range(int(sys.argv[2])):
        store.log(f"writer {sys.argv[3]} turn {n}", session="shared")
print("done", flush=True)
"""


def test_writers_on_two_hosts_get_gap_free_turn_indexes(tmp_path: Path, on_postgres: str) -> None:
    per_writer, writers = 15, 6
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                _WRITER,
                str(tmp_path / f"host-{n % 2}"),
                str(per_writer),
                str(n),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=os.environ.copy(),
        )
        for n in range(writers)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    with Store(tmp_path / "host-0") as store:
        turns = [h.turn for h in store.trace("writer", session="shared", limit=1000)]
    indexes = sorted(t.turn_index for t in turns)
    assert indexes == list(range(per_writer * writers))
    local = [
        json.loads(line)["turn_index"]
        for host in ("host-0", "host-1")
        for line in (tmp_path / host / "groups/default/sessions/default/shared.jsonl")
        .read_text()
        .splitlines()
    ]
    assert sorted(local) == indexes  # each host's log holds the turns it wrote


def test_a_newer_schema_is_refused(cli: Cli, database_url: str, on_postgres: str) -> None:
    import psycopg

    cli.ok("log", "-s", "s1", "hello")
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("UPDATE schema_version SET version = 99")
    result = cli("trace", "hello")
    assert result.exit_code == 74
    assert "schema version 99" in result.stderr


def test_a_bad_or_unreachable_url_is_one_error_line(
    cli: Cli, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOLOQUEUE_DATABASE_URL", "mysql://nowhere")
    result = cli("log", "-s", "s1", "hi")
    assert result.exit_code == 65 and "postgresql://" in result.stderr
    pytest.importorskip("psycopg", reason="the [postgres] extra is not installed")
    monkeypatch.setenv("SOLOQUEUE_DATABASE_URL", f"postgresql://x@/db?host={home.parent}/none")
    result = cli("log", "-s", "s1", "hi")
    assert result.exit_code == 74
    assert result.stderr.startswith("error: cannot connect to the database")
    assert not (home / "memory.db").exists()


def test_database_url_in_config_selects_postgres(cli: Cli, home: Path, database_url: str) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_text(f'database_url = "{database_url}"\n')
    cli.ok("log", "-s", "s1", "configured")
    assert not (home / "memory.db").exists()
    assert [s["session"] for s in cli.json("session", "list")] == ["s1"]


def test_remember_event_ids_are_kept_in_the_database_for_every_host(
    home: Path, on_postgres: str
) -> None:
    from tests.e2e import test_hardening as hardening

    hardening.test_a1_remember_event_id_is_scoped_and_a_forgotten_memory_is_made_again(home)
    first = hardening.run_json("remember", "deploys on Fridays", "--event-id", "k2")
    host_b = {"SOLOQUEUE_HOME": str(home.parent / "host-b")}
    again = hardening.run_json("remember", "deploys on Fridays", "--event-id", "k2", env=host_b)
    assert again["duplicate"] is True and again["id"] == first["id"]
    assert again["confidence"] == first["confidence"]  # the retry changed nothing
