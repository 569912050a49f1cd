"""`hook claude` on PostgreSQL: every event from the recorded payloads
(tests/data/claude_code/), fed to the real program, writing to the database; a
second host's session starts with the brief of what the first one stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_process
from tests.e2e.test_claude_hooks import SESSION, USE_ID, cli_json, context_of, errors, hook, payload


def test_a_whole_session_of_hook_events(
    home: Path, on_postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert hook(payload("SessionStart")) == ("", "")  # an empty database: no brief
    for name in ("UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure"):
        assert hook(payload(name)) == ("", "")
    logged = cli_json("session", "show", SESSION, "--group", "shop-e828ac")["turns"]  # type: ignore[index]
    assert [t["role"] for t in logged] == ["user", "assistant", "tool", "assistant", "tool"]
    assert logged[1]["event_id"] == f"{USE_ID}:call"  # PostToolUse's call was a duplicate
    (hit,) = cli_json("trace", "QueryCanceled")  # type: ignore[misc]
    assert hit["session"] == SESSION and hit["role"] == "tool"

    assert hook(payload("PreCompact")) == ("", "")
    assert [e["source"] for e in cli_json("episode", "list")] == ["context_compress"]  # type: ignore[union-attr]
    assert hook(payload("PreCompact")) == ("", "")  # again: nothing new to compress
    assert hook(payload("Stop")) == ("", "")
    assert hook(payload("SessionEnd")) == ("", "")
    (session,) = cli_json("session", "list")  # type: ignore[misc]
    assert session["ended_at"] is not None and session["turn_count"] == 6
    assert errors(home) == []
    assert not (home / "memory.db").exists() and not (home / "state.db").exists()

    # Another host: its first session starts with the brief of what the database holds
    # (the scratchpad noted the episode; this host has no identity/ of its own).
    monkeypatch.setenv("SOLOQUEUE_HOME", str(home.parent / "host-b"))
    brief = context_of(hook(payload("SessionStart"))[0], "SessionStart")
    assert "## 最近的情节" in brief and "## 草稿本" in brief
    assert brief.endswith("</memory-brief>")


def test_recalled_memories_come_from_the_database(home: Path, on_postgres: str) -> None:
    done = run_process("remember", "--type", "FACT", "CI runs PostgreSQL 16 with a 30 s timeout")
    assert done.returncode == 0, done.stderr
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("hook_recall = true\n")
    given = hook(payload("UserPromptSubmit"), "--group", "default")[0]  # where remember wrote
    context = context_of(given, "UserPromptSubmit")
    assert "## 相关记忆" in context and "30 s timeout" in context


def test_an_unreachable_database_still_exits_0_with_the_reason(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOLOQUEUE_DATABASE_URL", "postgresql://nobody@127.0.0.1:1/none")
    data = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "hi", "session_id": "s"})
    stdout, stderr = hook(data.encode())
    assert stdout == "" and "cannot connect to the database" in stderr
    (error,) = errors(home)
    assert error["code"] == "io"
    assert not (home / "memory.db").exists()
