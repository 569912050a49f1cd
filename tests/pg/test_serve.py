"""``serve`` and ``mcp`` on the PostgreSQL back end: a real server on a free port, the
MCP SDK's own client over stdio, both against the real PostgreSQL of the fixture."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli, run_process


@pytest.fixture
def pg_http(home: Path, on_postgres: str) -> Any:
    pytest.importorskip("starlette", reason="the [server] extra is not installed")
    pytest.importorskip("uvicorn", reason="the [server] extra is not installed")
    from tests.api.test_http import Server

    running = Server(home)
    yield running
    running.stop()


def test_serve_runs_log_trace_recall_remember_and_seed_004_on_postgres(
    pg_http: Any, cli: Cli, home: Path
) -> None:
    status, logged = pg_http.json(
        "POST", "/api/v1/log", {"session": "h1", "content": "我们下周在上海开会讨论编译器"}
    )
    assert status == 200 and logged["turns"][0]["turn_index"] == 0
    status, traced = pg_http.json("POST", "/api/v1/trace", {"query": "编译器"})
    assert [h["content"] for h in traced["hits"]] == ["我们下周在上海开会讨论编译器"]
    status, made = pg_http.json("POST", "/api/v1/remember", {"content": "User prefers vim"})
    assert status == 200 and made["action"] == "created"
    status, recalled = pg_http.json("POST", "/api/v1/recall", {"query": "vim"})
    assert status == 200 and made["id"] in [h["id"] for h in recalled["hits"]]
    # what the server wrote is what the CLI reads from the same database
    assert [m["id"] for m in cli.json("memory", "list")] == [made["id"]]
    body = {"group_id": "grp", "content": "项目最终决定采用微服务架构。"}
    status, ingested = pg_http.json("POST", "/api/v1/memory/ingest", body)
    assert status == 200 and len(ingested["stored"]) == 1
    question = {"group_id": "grp", "query": "项目的架构决策是什么？"}
    status, found = pg_http.json("POST", "/api/v1/memory/query", question)
    assert status == 200
    assert found == cli.json("query", "-g", "grp", "项目的架构决策是什么？")
    assert not (home / "memory.db").exists()


def test_serve_reads_this_hosts_artifacts_on_postgres_and_keeps_serving(
    pg_http: Any, cli: Cli
) -> None:
    status, missing = pg_http.json("GET", "/api/v1/artifacts/1")
    assert status == 404 and missing["error"]["code"] == "not_found"
    saved = cli.json("artifact", "save", "-", "--title", "notes", input="bytes on this host")
    status, _, data = pg_http.call("GET", f"/api/v1/artifacts/{saved['id']}")
    assert status == 200 and data == b"bytes on this host"  # the CAS of this host
    status, _ = pg_http.json("POST", "/api/v1/log", {"session": "s", "content": "still serving"})
    assert status == 200


def test_a_lost_connection_answers_503_once_then_the_server_reconnects(
    pg_http: Any, on_postgres: str
) -> None:
    import psycopg

    status, _ = pg_http.json("POST", "/api/v1/log", {"session": "s", "content": "before"})
    assert status == 200
    with psycopg.connect(on_postgres, autocommit=True) as admin:  # the server restarts, say
        (ended,) = admin.execute(
            "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 10000))"
            " FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid()"
        ).fetchone()
    assert ended == 1
    status, failed = pg_http.json("POST", "/api/v1/trace", {"query": "before"})
    assert status == 503 and failed["error"]["code"] == "temporary"
    assert "lost the connection to the database" in failed["error"]["message"]
    status, traced = pg_http.json("POST", "/api/v1/trace", {"query": "before"})
    assert status == 200 and [h["content"] for h in traced["hits"]] == ["before"]


def test_serve_and_mcp_fail_at_start_when_the_database_cannot_be_reached(
    home: Path, tmp_path: Path
) -> None:
    pytest.importorskip("uvicorn", reason="the [server] extra is not installed")
    pytest.importorskip("mcp", reason="the [mcp] extra is not installed")
    missing = f"postgresql://postgres@/postgres?host={tmp_path / 'no-server'}"
    for command in (["serve", "--port", "0"], ["mcp"]):
        done = run_process(*command, env={"SOLOQUEUE_DATABASE_URL": missing}, timeout=60)
        assert done.returncode == 74, done.stderr
        (line,) = done.stderr.decode().splitlines()
        assert line.startswith("error: cannot connect to the database")


def run_mcp(home: Path, url: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    pytest.importorskip("mcp", reason="the [mcp] extra is not installed")
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "soloqueue_mem", "mcp"],
        env={
            "SOLOQUEUE_HOME": str(home),
            "SOLOQUEUE_NOW": os.environ["SOLOQUEUE_NOW"],
            "SOLOQUEUE_DATABASE_URL": url,
        },
    )

    async def main() -> list[Any]:
        async with Client(params, read_timeout_seconds=60) as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    return asyncio.run(main())


def test_mcp_tools_run_on_postgres(cli: Cli, home: Path, on_postgres: str) -> None:
    cli.ok("log", "-s", "s1", "the staging deploy failed with a timeout")
    cli.ok("artifact", "save", "-", input="staging notes")
    calls = [
        ("remember", {"content": "Deploys go through staging", "tags": ["ops"]}),
        ("recall", {"query": "staging deploy"}),
        ("trace", {"query": "staging"}),
        ("session_export", {"session": "s1", "format": "md"}),
        ("query", {"query": "staging"}),
        ("graph_remember", {"messages": [{"role": "user", "content": "Staging runs on k8s."}]}),
        ("graph_recall", {"keywords": ["staging"]}),
        ("read_artifact", {"id": "1"}),
        ("context_build", {"session": "s1"}),
        ("trace", {"query": "x", "limit": 0}),
    ]
    results = run_mcp(home, on_postgres, calls)
    remembered, recalled, traced, exported, queried, graphed, associated, *rest = results
    artifact, built, bad = rest
    assert artifact.structured_content["text"] == "staging notes"
    messages = built.structured_content["messages"]
    assert messages[-1]["content"] == "the staging deploy failed with a timeout"
    assert remembered.structured_content["action"] == "created"
    memory_id = remembered.structured_content["id"]
    assert memory_id in [h["id"] for h in recalled.structured_content["hits"]]
    assert [h["session"] for h in traced.structured_content["hits"]] == ["s1"]
    assert "staging deploy failed" in exported.structured_content["text"]
    assert "Deploys go through staging" in [
        r["content"] for r in queried.structured_content["results"]
    ]
    assert graphed.structured_content["processed"]["nodes"] == 1  # the graph is the database's
    assert [r["content"] for r in associated.structured_content["results"]] == [
        "Staging runs on k8s."
    ]
    assert bad.is_error and "bad_input: " in bad.content[0].text
    assert [m["id"] for m in cli.json("memory", "list")] == [memory_id]
    assert not (home / "memory.db").exists()


def test_store_warm_connects_at_once_or_says_why(
    home: Path, on_postgres: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from soloqueue_mem import Store
    from soloqueue_mem.errors import StorageError

    with Store() as store:
        store.warm()
        assert store.trace("anything") == []
    pytest.importorskip("uvicorn", reason="the [server] extra is not installed")
    pytest.importorskip("mcp", reason="the [mcp] extra is not installed")
    missing = f"postgresql://postgres@/postgres?host={tmp_path / 'no-server'}"
    monkeypatch.setenv("SOLOQUEUE_DATABASE_URL", missing)
    with Store() as store, pytest.raises(StorageError, match="cannot connect to the database"):
        store.warm()
    monkeypatch.delenv("SOLOQUEUE_DATABASE_URL")
    with Store() as store:  # SQLite: warming reads, it creates nothing
        store.warm()
    assert not home.exists()
