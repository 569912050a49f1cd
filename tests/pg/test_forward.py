"""``recall`` on PostgreSQL handed to a warm ``serve`` over ``<root>/serve.sock``: a real
server from the fixture, a real ``serve`` process, real ``recall`` processes. Whether a
call was forwarded is read from the client process itself: a forwarded one never
imports psycopg."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import forwarding
from tests.conftest import Cli
from tests.forwarding import Run, asked_while_stopped, leave_stale_socket


def recall(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> Run:
    return forwarding.recall(*args, searched_by="psycopg", env=env, timeout=timeout)


@pytest.fixture
def home(short_home: Path) -> Path:
    return short_home


@pytest.fixture
def twin(home: Path, cli: Cli, on_postgres: str) -> str:
    """Data recalled below, and the URL of a copy of its database taken now (the same
    data for the direct run: a recall counts the memories it returns as accessed)."""
    import psycopg

    cli.ok("log", "-s", "s1", "the staging deploy failed with a timeout")
    cli.ok("log", "-s", "s1", "我们下周在上海开会讨论部署")
    cli.ok("remember", "Deploys go through staging first", "--importance", "0.9")
    cli.ok("remember", "上海的部署在周五进行")
    name = on_postgres.split("?")[0].rsplit("/", 1)[1]
    with psycopg.connect(on_postgres.replace(f"/{name}?", "/postgres?"), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}_twin TEMPLATE {name}")  # constant names
    return on_postgres.replace(f"/{name}?", f"/{name}_twin?")


@pytest.fixture
def serve(home: Path, on_postgres: str) -> Iterator[Any]:
    pytest.importorskip("starlette", reason="the [server] extra is not installed")
    pytest.importorskip("uvicorn", reason="the [server] extra is not installed")
    from tests.api.test_http import Server

    running = Server(home)
    yield running
    if running.process.poll() is None:
        running.stop()


def test_a_forwarded_recall_prints_what_the_direct_one_prints(
    twin: str, serve: Any, home: Path
) -> None:
    asked = [
        ("--format", "json", "recall", "staging deploy"),
        ("--format", "jsonl", "recall", "上海 部署", "--limit", "1"),
        ("recall", "deploy", "--max-tokens", "12", "--format", "json"),  # left out: a note
        ("--format", "json", "recall", "staging", "--channels", "traces,memories", "-n", "3"),
    ]
    forwarded = [recall(*args) for args in asked]
    assert all(run.forwarded for run in forwarded)
    serve.stop()
    direct = [recall(*args, env={"SOLOQUEUE_DATABASE_URL": twin}) for args in asked]
    assert not any(run.forwarded for run in direct)
    for there, here in zip(forwarded, direct, strict=True):
        assert (there.code, there.stdout, there.stderr) == (here.code, here.stdout, here.stderr)
    assert b"Deploys go through staging first" in forwarded[0].stdout
    assert forwarded[2].stderr and forwarded[2].stderr[0].startswith("note: ")


def test_the_users_mistakes_come_back_as_the_direct_path_reports_them(
    twin: str, serve: Any
) -> None:
    asked = [
        ("--format", "json", "recall", "deploy", "--since", "the other day"),
        ("recall", "deploy", "--limit", "500"),
        ("recall", "deploy", "--type", "NOTATYPE"),
        ("recall", "deploy", "--channels", "traces,nosuch"),
    ]
    forwarded = [recall(*args) for args in asked]
    assert all(run.forwarded for run in forwarded)
    serve.stop()
    direct = [recall(*args, env={"SOLOQUEUE_DATABASE_URL": twin}) for args in asked]
    for there, here in zip(forwarded, direct, strict=True):
        assert there.code in (2, 65) and there.stdout == b""
        assert (there.code, there.stderr) == (here.code, here.stderr)
    assert forwarded[0].stderr[0].startswith('{"error": {"code": "bad_input"')
    assert forwarded[1].stderr == ["error: --limit must be between 1 and 100"]


def test_recall_does_the_work_itself_unless_the_serve_matches(
    twin: str, serve: Any, home: Path, on_postgres: str
) -> None:
    import psycopg

    asked = ("--format", "json", "recall", "staging deploy")
    assert recall(*asked).forwarded
    for other in (
        ("--format", "table", "recall", "staging deploy"),
        ("--format", "json", "recall", "staging deploy", "--explain"),
    ):
        run = recall(*other)
        assert run.code == 0 and not run.forwarded
    pinned_elsewhere = recall(*asked, env={"SOLOQUEUE_NOW": "2026-11-27T08:00:00Z"})
    assert pinned_elsewhere.code == 0 and not pinned_elsewhere.forwarded
    with psycopg.connect(on_postgres, autocommit=True) as admin:  # the server's connection
        admin.execute(  # goes: its next answer is a 503
            "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    lost = recall(*asked)
    assert lost.code == 0 and not lost.forwarded
    assert b"Deploys go through staging first" in lost.stdout
    assert recall(*asked).forwarded  # the server has reconnected
    (home / "config.toml").write_text("busy_timeout_ms = 9000\n")  # edited after serve began
    edited = recall(*asked)
    assert edited.code == 0 and not edited.forwarded
    assert b"Deploys go through staging first" in edited.stdout


def test_a_forwarded_recall_falls_back_when_no_server_answers(twin: str, serve: Any) -> None:
    """A stopped serve still has its socket accepting: recall must not wait for it (it
    waits 1 s for 100 Continue; the 60 s timeout only keeps a failure from hanging)."""
    asked = ("--format", "json", "recall", "staging deploy")
    direct = recall(*asked, env={"SOLOQUEUE_DATABASE_URL": twin})
    run = asked_while_stopped(serve, recall, *asked)
    assert not run.forwarded
    assert (run.code, run.stdout, run.stderr) == (0, direct.stdout, direct.stderr)
    assert b"Deploys go through staging first" in run.stdout


def test_the_socket_is_private_replaces_a_stale_one_and_goes_with_serve(
    twin: str, serve: Any, home: Path
) -> None:
    path = home / "serve.sock"
    assert stat.S_IMODE(home.stat().st_mode) == 0o700 and stat.S_ISSOCK(path.lstat().st_mode)
    from tests.api.test_http import Server

    second = Server(home)  # the first one keeps the socket
    try:
        assert second.process.stderr.readline().decode().startswith("note: another serve")
    finally:
        second.stop()
    assert recall("--format", "json", "recall", "deploy").forwarded
    serve.stop()  # SIGTERM
    assert not path.exists()
    leave_stale_socket(path)
    run = recall("--format", "json", "recall", "deploy")
    assert run.code == 0 and not run.forwarded and b"staging" in run.stdout
    again = Server(home)  # takes the stale socket's place
    try:
        assert recall("--format", "json", "recall", "deploy").forwarded
    finally:
        again.stop()
    assert not path.exists()
