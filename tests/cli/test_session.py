"""`session list | show | export | end`: reading sessions back from the canonical log."""

from __future__ import annotations

import json

import pytest

from tests.conftest import missing_store_is_sqlite

SESSION_KEYS = {"group", "agent", "session", "started_at", "last_turn_at", "turn_count", "ended_at"}


def log_conversation(cli, session="s1", **flags):
    events = [
        {"role": "user", "content": "请帮我读一下 config.toml"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c1", "name": "read_file", "input": {"path": "config.toml"}}],
        },
        {
            "role": "tool",
            "content": "",
            "tool_results": [{"tool_use_id": "c1", "content": "timeout = 5", "is_error": False}],
        },
        {"role": "assistant", "content": "超时是 5 秒。"},
    ]
    args = [f"--{k}={v}" for k, v in flags.items()]
    cli.ok("log", "--batch", "-s", session, *args, input="\n".join(json.dumps(e) for e in events))
    return events


def test_list_shows_sessions_most_recent_first(cli, monkeypatch):
    cli.ok("log", "-s", "old", "x")
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-27T08:00:00Z")
    cli.ok("log", "-s", "new", "y")
    cli.ok("log", "-s", "other", "--agent", "bot", "z")
    rows = cli.json("session", "list")
    # newest first; equal times are ordered by group, agent, session
    assert [r["session"] for r in rows] == ["other", "new", "old"]
    assert all(set(r) == SESSION_KEYS for r in rows)
    assert [r["session"] for r in cli.json("session", "list", "--agent", "bot")] == ["other"]


@missing_store_is_sqlite
def test_list_on_a_missing_store_is_refused_and_creates_nothing(cli, home):
    result = cli("session", "list")
    assert (result.exit_code, result.stdout) == (66, "")
    assert not home.exists()


def test_show_returns_every_record_in_order(cli):
    events = log_conversation(cli)
    shown = cli.json("session", "show", "s1")
    assert [t["turn_index"] for t in shown["turns"]] == [0, 1, 2, 3]
    assert shown["turns"][1]["tool_calls"] == events[1]["tool_calls"]
    assert shown["problems"] == []


@pytest.mark.usefixtures("store")
def test_show_unknown_session_is_not_found(cli):
    result = cli("session", "show", "nope")
    assert result.exit_code == 3
    assert result.stderr.startswith("error: session default/default/nope not found")
    assert result.stdout == ""


def test_export_jsonl_is_the_log_itself(cli, home):
    log_conversation(cli)
    out = cli.ok("session", "export", "s1", "--as", "jsonl").stdout
    path = home / "groups/default/sessions/default/s1.jsonl"
    assert [json.loads(x) for x in out.splitlines()] == [
        json.loads(x) for x in path.read_text().splitlines()
    ]


def test_export_openai_gives_back_the_messages(cli):
    log_conversation(cli)
    messages = json.loads(cli.ok("session", "export", "s1", "--as", "openai").stdout)
    assert messages == [
        {"role": "user", "content": "请帮我读一下 config.toml"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "config.toml"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "timeout = 5"},
        {"role": "assistant", "content": "超时是 5 秒。"},
    ]


def test_export_markdown(cli):
    log_conversation(cli)
    md = cli.ok("session", "export", "s1", "--as", "md").stdout
    assert md.startswith("# Session s1 (default/default)")
    assert "**tool call** `read_file`" in md and "timeout = 5" in md


def test_end_marks_the_session_and_writes_its_episode(cli):
    log_conversation(cli)
    ended = cli.json("session", "end", "s1")
    episode_ids = ended.pop("episodes")
    assert ended == {
        "group": "default",
        "agent": "default",
        "session": "s1",
        "ended_at": "2026-11-26T08:00:00.000Z",
        "memories": [],
        "transient_cleared": [],
    }
    assert cli.json("session", "list")[0]["ended_at"] == "2026-11-26T08:00:00.000Z"
    episode = cli.json("episode", "show", episode_ids[0])
    assert episode["source"] == "session_end" and episode["tools_used"] == ["read_file"]
    assert cli.json("session", "end", "s1")["episodes"] == []  # nothing new to digest
    assert cli("session", "end", "unknown").exit_code == 3


def test_group_and_agent_scope_sessions(cli):
    log_conversation(cli, session="s1", group="g1", agent="a1")
    assert cli("session", "show", "s1").exit_code == 3
    assert len(cli.json("session", "show", "s1", "--group", "g1", "--agent", "a1")["turns"]) == 4
