"""Extraction on both back ends: ``extract_on_log`` (the background worker, at most five
turns per session, the digest not counting them twice) and the model path of
``consolidate`` with its retry queue (tests/e2e's contract tests, run on SQLite and on
PostgreSQL), then the PostgreSQL queue consumed by two "hosts" at once."""

from __future__ import annotations

import json
import sqlite3
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.cli.test_offload import write_config
from tests.conftest import Cli
from tests.e2e.test_consolidate_llm import (
    MODEL_CONFIG,
    MODEL_MEMORY,
    SUMMARY,
    ChatServer,
    contents,
    log_idle_session,
)
from tests.e2e.test_extract_on_log import STATEMENTS, wait_for_workers


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str | None:
    """The database URL on PostgreSQL, None on SQLite."""
    if request.param == "postgres":
        return request.getfixturevalue("on_postgres")
    return None


def rows(home: Path, url: str | None, sql: str) -> list[tuple]:
    """``sql`` over state.db's tables (SQLite) or the database's (PostgreSQL)."""
    if url is None:
        if not (home / "state.db").exists():
            return []
        with sqlite3.connect(home / "state.db") as conn:
            return conn.execute(sql).fetchall()
    import psycopg

    with psycopg.connect(url) as conn:
        return [tuple(row) for row in conn.execute(sql)]  # type: ignore[arg-type]


def extracted(home: Path, url: str | None) -> list[tuple]:
    sql = "SELECT turn_index FROM log_extractions WHERE extracted_at IS NOT NULL ORDER BY 1"
    return rows(home, url, sql)


def queue_rows(home: Path, url: str | None) -> list[tuple]:
    sql = "SELECT turn_index, status, retry_count FROM extraction_queue ORDER BY id"
    return rows(home, url, sql)


def test_user_turns_are_extracted_on_log_at_most_five(
    cli: Cli, home: Path, backend: str | None
) -> None:
    write_config(home, "extract_on_log = true\n")
    batch = [{"role": "user", "content": "short: use vim"}]  # under 30 characters
    batch += [{"role": "user", "content": text} for text in STATEMENTS[:3]]
    cli.ok("log", "-s", "s1", "--batch", input="\n".join(map(json.dumps, batch)))
    for text in STATEMENTS[3:]:  # one worker each, running at once with the others
        cli.ok("log", "-s", "s1", "--role", "user", text)
    wait_for_workers(home)
    assert len(extracted(home, backend)) == 5 and (0,) not in extracted(home, backend)
    memories = cli.json("memory", "list")
    assert len(memories) == 5 and {m["source"] for m in memories} == {"log"}
    ended = cli.json("session", "end", "s1")
    assert len(ended["memories"]) == 2  # the two turns past the cap, from the digest
    # The extracted turns were not counted twice: their confidence did not rise.
    assert {m["confidence"] for m in cli.json("memory", "list")} == {0.5}
    assert (home / "memory.db").exists() is (backend is None)


def test_consolidate_does_not_extract_a_turn_extracted_on_log_again(
    cli: Cli, home: Path, backend: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(home, "extract_on_log = true\n")
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-26T05:00:00Z")
    cli.ok("log", "-s", "s1", "--role", "user", STATEMENTS[0])
    wait_for_workers(home)
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-26T08:00:00Z")
    report = cli.json("consolidate")
    assert report["sessions"] == {"sessions": 1, "turns": 1, "episodes": 1, "memories": 0}
    (memory,) = cli.json("memory", "list")
    assert memory["source"] == "log" and memory["confidence"] == 0.5


def turn_flags(cli: Cli) -> list[bool]:
    """Each turn's ``extracted`` flag, as the export shows it."""
    dump = cli.ok("export").stdout.splitlines()
    return [r["extracted"] for r in map(json.loads, dump) if r["kind"] == "turn"]


def test_a_statement_extracted_on_log_supersedes_across_languages(
    cli: Cli, home: Path, backend: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(home, "extract_on_log = true\n")
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-26T05:00:00Z")
    stated = "我现在住在上海，已经在这边工作三年多了，挺喜欢这里的生活节奏和美食"
    cli.ok("log", "-s", "s1", "--role", "user", stated)
    wait_for_workers(home)
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-26T06:00:00Z")
    said = "I live in Berlin now, I moved there last spring for a new job"
    cli.ok("log", "-s", "s1", "--role", "user", said)
    wait_for_workers(home)
    (active,) = cli.json("memory", "list")
    assert (active["subject"], active["predicate"], active["content"]) == (
        "user", "city", "User lives in Berlin now, User moved there last spring for a new job"
    )  # fmt: skip
    history = cli.json("memory", "history", active["id"])
    assert [m["content"][:8] for m in history] == ["用户现在住在上海", active["content"][:8]]
    assert extracted(home, backend) == [(0,), (1,)]
    assert turn_flags(cli) == [False, False]  # the digest's flag: not digested yet
    ended = cli.json("session", "end", "s1")  # the digest summarizes, extracts nothing new
    assert ended["memories"] == [] and len(ended["episodes"]) == 1
    assert turn_flags(cli) == [True, True]


def test_workers_on_two_hosts_share_the_limit_of_a_session(
    cli: Cli, tmp_path: Path, on_postgres: str
) -> None:
    hosts = [tmp_path / name / ".soloqueue" for name in ("host-a", "host-b")]
    for host in hosts:
        write_config(host, "extract_on_log = true\n")
    for number, text in enumerate(STATEMENTS):  # alternating hosts, one worker each
        cli.ok("--root", str(hosts[number % 2]), "log", "-s", "shared", "--role", "user", text)
    for host in hosts:
        wait_for_workers(host)
    assert len(extracted(hosts[0], on_postgres)) == 5
    memories = cli.json("--root", str(hosts[1]), "memory", "list")
    assert len(memories) == 5 and {m["source"] for m in memories} == {"log"}


@pytest.fixture
def model_env(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    write_config(home, MODEL_CONFIG.format(timeout=10))
    monkeypatch.setenv("SOLOQUEUE_LLM_MODEL", "test-model")


def test_model_memories_and_summary_are_stored(
    cli: Cli, home: Path, backend: str | None, monkeypatch: pytest.MonkeyPatch, model_env: None
) -> None:
    log_idle_session(cli, monkeypatch)
    with ChatServer([(200, json.dumps([MODEL_MEMORY])), (200, SUMMARY)]) as server:
        monkeypatch.setenv("SOLOQUEUE_LLM_URL", server.url)
        report = cli.json("consolidate")
    points = {"extraction": 1, "summary": 1, "scratchpad": 1, "identity": 1}  # USER.md
    assert report["model"] == {"used": True, "calls": 4, "failures": 0, "queued": 0,
                               "points": points}  # fmt: skip
    assert report["queue"] == {"due": 0, "completed": 0, "pending": 0, "failed": 0}
    assert "User deploys the app to a Raspberry Pi" in contents(cli)
    assert cli.json("episode", "list")[0]["summary"] == SUMMARY
    assert queue_rows(home, backend) == []


def test_a_timeout_queues_the_turn_and_a_later_run_completes_it(
    cli: Cli, home: Path, backend: str | None, monkeypatch: pytest.MonkeyPatch, model_env: None
) -> None:
    (home / "config.toml").write_text(MODEL_CONFIG.format(timeout=0.5))
    log_idle_session(cli, monkeypatch)
    with ChatServer([(200, None)] * 3) as server:
        monkeypatch.setenv("SOLOQUEUE_LLM_URL", server.url)
        first = cli.json("consolidate")
    assert first["model"]["queued"] == 1
    assert "用户的代码目录是 /srv/app" in contents(cli)  # the rules' memory meanwhile
    assert queue_rows(home, backend) == [(0, "pending", 1)]
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-26T09:00:00Z")  # past the backoff
    with ChatServer([(200, json.dumps([MODEL_MEMORY]))]) as server:
        monkeypatch.setenv("SOLOQUEUE_LLM_URL", server.url)
        second = cli.json("consolidate")
    assert second["queue"] == {"due": 1, "completed": 1, "pending": 0, "failed": 0}
    assert "User deploys the app to a Raspberry Pi" in contents(cli)
    assert queue_rows(home, backend) == [(0, "completed", 1)]


def test_retries_are_bounded_then_the_item_fails_for_good(
    cli: Cli, home: Path, backend: str | None, monkeypatch: pytest.MonkeyPatch, model_env: None
) -> None:
    log_idle_session(cli, monkeypatch)
    with ChatServer([(500, "")] * 30) as server:
        monkeypatch.setenv("SOLOQUEUE_LLM_URL", server.url)
        cli.json("consolidate")
        for hour in (9, 10):
            monkeypatch.setenv("SOLOQUEUE_NOW", f"2026-11-26T{hour:02d}:00:00Z")
            cli.json("consolidate")
    assert queue_rows(home, backend) == [(0, "failed", 3)]


def test_a_dry_run_neither_calls_the_model_nor_queues(
    cli: Cli, home: Path, backend: str | None, monkeypatch: pytest.MonkeyPatch, model_env: None
) -> None:
    log_idle_session(cli, monkeypatch)
    with ChatServer([(500, "")] * 3) as server:
        monkeypatch.setenv("SOLOQUEUE_LLM_URL", server.url)
        report = cli.json("consolidate", "--dry-run")
    assert report["model"] == {"used": False} and server.requests == []
    assert queue_rows(home, backend) == []


# -- the PostgreSQL queue, consumed by several hosts ---------------------------------

NOW = datetime(2026, 11, 26, 8, tzinfo=UTC)


def _queue_of(url: str, items: int) -> None:
    from soloqueue_mem.lifecycle import queue
    from soloqueue_mem.sessions.events import SessionKey
    from soloqueue_mem.storage.postgres.connect import connect

    key = SessionKey("g", "a", "s")
    conn = connect(url)
    try:
        for index in [*range(items), 0]:  # queuing a turn again keeps the first entry
            record = {"turn_index": index, "role": "user", "content": f"turn {index}"}
            queue.enqueue(conn, key, record, "the model is down", NOW, NOW, 3)
    finally:
        conn.close()


def test_a_claimed_item_is_skipped_by_another_host_without_waiting(database_url: str) -> None:
    from soloqueue_mem.lifecycle import queue
    from soloqueue_mem.storage.postgres.connect import connect

    _queue_of(database_url, 6)
    first, second = connect(database_url), connect(database_url)
    try:
        with first.transaction():  # host 1 claims three and has not committed yet
            mine = queue.due(first, NOW, 3)
            second.execute("SET lock_timeout = '5s'")  # a wait would fail, not hang
            theirs = queue.due(second, NOW, 10)  # host 2 skips the locked rows
        assert [item.turn_index for item in mine] == [0, 1, 2]
        assert [item.turn_index for item in theirs] == [3, 4, 5]
        assert queue.due(second, NOW, 10) == []  # claimed: not due until the lease ends
        assert [i.turn_index for i in queue.due(second, NOW + queue.LEASE, 10)] == list(range(6))
        queue.completed(first, mine[0], NOW)
        assert queue.depth(first) == {"completed": 1, "pending": 5}
    finally:
        first.close()
        second.close()


def test_hosts_consuming_one_queue_at_once_take_each_item_once(database_url: str) -> None:
    from soloqueue_mem.lifecycle import queue
    from soloqueue_mem.storage.postgres.connect import connect

    _queue_of(database_url, 200)
    taken: list[list[int]] = [[] for _ in range(4)]
    start = threading.Barrier(4)

    def consume(host: int) -> None:
        conn = connect(database_url)
        try:
            start.wait()
            while items := queue.due(conn, NOW, 7):
                for item in items:
                    taken[host].append(item.turn_index)
                    queue.completed(conn, item, NOW)
        finally:
            conn.close()

    threads = [threading.Thread(target=consume, args=(host,)) for host in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    everything = sorted(index for host in taken for index in host)
    assert everything == list(range(200))  # each item once, none lost
    conn = connect(database_url)
    try:
        assert queue.depth(conn) == {"completed": 200}
        assert queue.due(conn, NOW + timedelta(days=1), 10) == []
    finally:
        conn.close()


def test_a_correction_supersedes_by_topic_on_both_back_ends(cli: Cli, backend: str | None) -> None:
    cli.ok("remember", "The nightly backup job runs on the archive host at 2am")
    cli.ok("remember", "The archive host has 4 TB of disk")
    done = cli.json("remember", "Actually the nightly backup job moved to 4am")
    assert done["action"] == "superseded"
    current = {m["content"] for m in cli.json("memory", "list")}
    assert current == {
        "The archive host has 4 TB of disk",
        "Actually the nightly backup job moved to 4am",
    }
