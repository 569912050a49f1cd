"""The optional model path of consolidate against a real chat-completions server on
loopback: success, a malformed answer, server errors then success, and a timeout —
with the quick rules as the fallback and the extraction queue keeping every turn."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator

import pytest

from benchmarks._fake_model import FakeChat

USER_TURN = "我的代码目录是 /srv/app。I prefer tabs over spaces when writing Python code."
MODEL_MEMORY = {
    "type": "FACT",
    "subject": "user",
    "predicate": "deploy target",
    "content": "User deploys the app to a Raspberry Pi",
    "importance": 0.7,
}


class ChatServer(FakeChat):
    """Answers each POST with the next scripted reply: (status, body or None to hang),
    then "NONE"."""

    def __init__(self, replies: list[tuple[int, str | None]]) -> None:
        self.replies = list(replies)
        super().__init__(lambda _: self.replies.pop(0) if self.replies else (200, "NONE"))


# A scripted answer must never time out on a loaded machine (a retry would take the next
# answer of the script); only the test of a hanging server waits for the short timeout.
MODEL_CONFIG = (
    "llm_timeout = {timeout}\nllm_attempts = 3\nllm_backoff_base = 0.01\nllm_backoff_cap = 0.05\n"
)


@pytest.fixture
def model_env(monkeypatch, home) -> Iterator[None]:
    home.mkdir(parents=True, mode=0o700, exist_ok=True)
    (home / "config.toml").write_text(MODEL_CONFIG.format(timeout=10))
    monkeypatch.setenv("SOLOQUEUE_LLM_MODEL", "test-model")
    yield


def log_finished_session(cli) -> None:
    cli.ok("log", "-s", "s1", "--role", "user", USER_TURN)
    cli.ok("session", "end", "s1")  # rules run here; consolidate then finds nothing new


def log_idle_session(cli, monkeypatch) -> None:
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-26T05:00:00Z")
    cli.ok("log", "-s", "s1", "--role", "user", USER_TURN)
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-26T08:00:00Z")


def contents(cli) -> set[str]:
    return {m["content"] for m in cli.json("memory", "list")}


def queue_rows(home) -> list[tuple]:
    with sqlite3.connect(home / "state.db") as conn:
        return conn.execute(
            "SELECT turn_index, status, retry_count FROM extraction_queue ORDER BY id"
        ).fetchall()


SUMMARY = "用户说明了代码目录和缩进偏好。"


def test_model_memories_and_summary_are_stored(cli, home, monkeypatch, model_env):
    log_idle_session(cli, monkeypatch)
    with ChatServer([(200, json.dumps([MODEL_MEMORY])), (200, SUMMARY)]) as server:
        monkeypatch.setenv("SOLOQUEUE_LLM_URL", server.url)
        report = cli.json("consolidate")
    points = {"extraction": 1, "summary": 1, "scratchpad": 1, "identity": 1}  # USER.md
    assert report["model"] == {"used": True, "calls": 4, "failures": 0, "queued": 0,
                               "points": points}  # fmt: skip
    assert "User deploys the app to a Raspberry Pi" in contents(cli)
    assert cli.json("episode", "list")[0]["summary"] == SUMMARY
    assert server.requests[0]["model"] == "test-model"
    assert USER_TURN[:20] in server.requests[0]["messages"][0]["content"]
    assert not (home / "state.db").exists() or queue_rows(home) == []


def test_a_malformed_answer_falls_back_to_the_rules_and_queues_the_turn(
    cli, home, monkeypatch, model_env
):
    log_idle_session(cli, monkeypatch)
    with ChatServer([(200, "here are some memories: {not json")] * 3) as server:
        monkeypatch.setenv("SOLOQUEUE_LLM_URL", server.url)
        report = cli.json("consolidate")
    assert report["model"]["failures"] == 1 and report["model"]["queued"] == 1
    assert len(server.requests) == 3  # llm_attempts
    assert "用户的代码目录是 /srv/app" in contents(cli)  # the rules' memory
    assert queue_rows(home) == [(0, "pending", 1)]


def test_server_errors_then_success_within_one_call(cli, home, monkeypatch, model_env):
    log_idle_session(cli, monkeypatch)
    replies = [(500, ""), (503, ""), (200, json.dumps([MODEL_MEMORY])), (200, SUMMARY)]
    with ChatServer(replies) as server:
        monkeypatch.setenv("SOLOQUEUE_LLM_URL", server.url)
        report = cli.json("consolidate")
    assert len(server.requests) == 6  # three tries of the extraction, then the others
    assert report["model"]["calls"] == 4 and report["model"]["failures"] == 0
    assert "User deploys the app to a Raspberry Pi" in contents(cli)


def test_a_timeout_queues_the_turn_and_a_later_run_completes_it(cli, home, monkeypatch, model_env):
    (home / "config.toml").write_text(MODEL_CONFIG.format(timeout=0.5))
    log_idle_session(cli, monkeypatch)
    with ChatServer([(200, None)] * 3) as server:
        monkeypatch.setenv("SOLOQUEUE_LLM_URL", server.url)
        first = cli.json("consolidate")
    assert first["model"]["queued"] == 1
    assert "用户的代码目录是 /srv/app" in contents(cli)  # nothing was lost meanwhile
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-26T09:00:00Z")  # past the backoff
    with ChatServer([(200, json.dumps([MODEL_MEMORY]))]) as server:
        monkeypatch.setenv("SOLOQUEUE_LLM_URL", server.url)
        second = cli.json("consolidate")
    assert second["queue"] == {"due": 1, "completed": 1, "pending": 0, "failed": 0}
    assert "User deploys the app to a Raspberry Pi" in contents(cli)
    assert queue_rows(home) == [(0, "completed", 1)]


def test_retries_are_bounded_then_the_item_fails_for_good(cli, home, monkeypatch, model_env):
    log_idle_session(cli, monkeypatch)
    hours = iter(range(9, 20))
    with ChatServer([(500, "")] * 30) as server:
        monkeypatch.setenv("SOLOQUEUE_LLM_URL", server.url)
        cli.json("consolidate")
        for _ in range(2):
            monkeypatch.setenv("SOLOQUEUE_NOW", f"2026-11-26T{next(hours):02d}:00:00Z")
            cli.json("consolidate")
    assert queue_rows(home) == [(0, "failed", 3)]
    assert "用户的代码目录是 /srv/app" in contents(cli)


def test_without_the_model_nothing_is_contacted_and_no_queue_exists(cli, home, monkeypatch):
    monkeypatch.delenv("SOLOQUEUE_LLM_URL", raising=False)
    log_idle_session(cli, monkeypatch)
    report = cli.json("consolidate")
    assert report["model"] == {"used": False}
    assert "queue" not in report
    assert not (home / "state.db").exists()


def test_a_bad_model_url_is_a_clear_error(cli, monkeypatch, model_env):
    monkeypatch.setenv("SOLOQUEUE_LLM_URL", "ftp://example")
    result = cli("consolidate")
    assert result.exit_code == 65 and "SOLOQUEUE_LLM_URL must be an http(s) URL" in result.stderr
