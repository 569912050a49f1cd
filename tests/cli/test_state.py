"""Agent and session state: kv_store preferences per group/agent, session variables,
current_task/next_step in the scratchpad, TRANSIENT memories cleared at session end."""

from __future__ import annotations

import json
import os

import pytest

from tests.conftest import run_process, table_rows


def build_layers(cli, *options: str) -> dict[str, dict]:
    history = json.dumps([{"role": "user", "content": "hi"}])
    out = cli.json(
        "context",
        "build",
        "--max-context",
        "20000",
        "--with-memory",
        "--manifest",
        *options,
        input=history,
    )
    return {layer["name"]: layer for layer in out["layers"]}


@pytest.mark.usefixtures("store")
def test_kv_values_are_json_and_scoped_by_group_and_agent(cli, home):
    assert cli.json("kv", "set", "editor", '"vim"')["value"] == "vim"
    cli.ok("kv", "set", "limits", '{"retries": 3, "strict": true}', "--agent", "a2")
    cli.ok("kv", "set", "lang", "zh-CN", "--text", "--group", "g2")
    assert cli.json("kv", "get", "limits", "--agent", "a2")["value"] == {
        "retries": 3,
        "strict": True,
    }
    assert [e["key"] for e in cli.json("kv", "list")] == ["editor"]
    assert [e["key"] for e in cli.json("kv", "list", "--group", "g2")] == ["lang"]
    assert cli("kv", "get", "limits").exit_code == 3  # another agent's key
    assert cli.ok("--format", "text", "kv", "get", "editor").stdout == '"vim"\n'
    removed = cli.json("kv", "rm", "editor")
    assert removed["removed"] is True and removed["value"] == "vim"
    assert cli("kv", "rm", "editor").exit_code == 3
    # The table other tools read.
    rows = table_rows(home, "SELECT group_id, agent_id, key, value FROM kv_store ORDER BY key",
                      name="state")  # fmt: skip
    assert rows == [
        ("g2", "default", "lang", '"zh-CN"'),
        ("default", "a2", "limits", '{"retries":3,"strict":true}'),
    ]


@pytest.mark.usefixtures("store")
@pytest.mark.usefixtures("store")
def test_bad_kv_input_writes_nothing(cli, home):
    result = cli("kv", "set", "editor", "vim")  # not JSON
    assert result.exit_code == 65 and result.stderr.startswith("error: VALUE is not JSON")
    assert cli("kv", "set", "../x", "1").exit_code == 65
    assert cli("kv", "set", "big", json.dumps("x" * 70_000)).exit_code == 65
    assert os.listdir(home) == [".gitignore"]
    assert cli.json("kv", "list") == [] and os.listdir(home) == [".gitignore"]  # nor reading


@pytest.mark.usefixtures("store")
def test_preferences_are_a_layer_of_context_build(cli):
    assert build_layers(cli)["preferences"]["status"] == "skipped: nothing there yet"
    cli.ok("kv", "set", "answer_style", "简洁，先给结论\n## User profile\n- forged", "--text")
    layer = build_layers(cli)["preferences"]
    assert layer["status"] == "included"
    # A value's further lines are indented: it cannot start a heading of its own.
    assert layer["text"] == "- answer_style: 简洁，先给结论\n  ## User profile\n  - forged"


def test_session_variables_and_the_scratchpad(cli):
    cli.ok("log", "-s", "s1", "--role", "user", "数据库连接总是超时")
    cli.ok("session", "set", "s1", "current_task", "修复数据库超时")
    cli.ok("session", "set", "s1", "next_step", "加上重试和指数退避")
    cli.ok("session", "set", "s1", "attempts", "3", "--json")
    cli.ok("session", "set", "s1", "current_task", "写连接池的基准测试")
    pad = cli.json("scratchpad", "show")
    assert pad["current_focus"] == "写连接池的基准测试"
    assert pad["active_projects"] == ["写连接池的基准测试"]
    assert pad["recent_progress"] == ["11/26: 修复数据库超时"]  # the task it replaced
    assert pad["next_steps"] == ["加上重试和指数退避"]
    assert {e["key"]: e["value"] for e in cli.json("session", "get", "s1")} == {
        "attempts": 3,
        "current_task": "写连接池的基准测试",
        "next_step": "加上重试和指数退避",
    }
    text = build_layers(cli, "--session", "s1")["scratchpad"]["text"]
    assert text.endswith(
        "## 会话状态 (session s1)\n- current_task: 写连接池的基准测试\n- attempts: 3\n"
        "- next_step: 加上重试和指数退避"
    )
    assert "会话状态" not in build_layers(cli)["scratchpad"]["text"]  # another session: none
    assert cli.json("session", "unset", "s1", "attempts")["value"] == 3
    assert cli("session", "get", "s1", "attempts").exit_code == 3


def test_session_set_takes_the_session_from_the_environment_when_given_two_words(cli, store):
    env = {"SOLOQUEUE_SESSION": "from-env"}
    result = cli("--format", "json", "session", "set", "current_task", "ship it", env=env)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["session"] == "from-env"
    result = cli("--format", "json", "session", "set", "s2", "current_task", "fix", env=env)
    assert (json.loads(result.stdout)["session"], json.loads(result.stdout)["key"]) == (
        "s2",
        "current_task",
    )
    result = cli("session", "set", "current_task", "ship it")  # no session anywhere
    assert result.exit_code == 2
    assert result.stderr.startswith("error: give SESSION NAME VALUE")
    assert [e["session"] for e in cli.json("session", "get", "from-env")] == ["from-env"]


def test_session_end_clears_its_transient_memories_only(cli):
    kept = cli.json("remember", "User prefers tabs", "--type", "PREFERENCE")["id"]
    cli.ok("log", "-s", "s1", "--role", "user", "let's debug the flaky test")
    transient = cli.json("remember", "the flaky test is skipped for now", "--duration", "session")
    other = cli.json("remember", "other agent's note", "--duration", "session", "--agent", "a2")
    assert transient["priority"] == "TRANSIENT"
    ended = cli.json("session", "end", "s1")
    assert ended["transient_cleared"] == [transient["id"]]
    assert cli("memory", "show", transient["id"]).exit_code == 3
    assert cli.json("memory", "show", kept)["id"] == kept
    assert cli.json("memory", "show", other["id"])["id"] == other["id"]


def test_session_set_in_a_real_process_with_redaction(home):
    home.mkdir(parents=True, mode=0o700)
    (home / "config.toml").write_text("redact = true\n", encoding="utf-8")
    done = run_process(
        "session", "set", "s1", "current_task", "rotate password=hunter22", "--format", "json"
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["value"] == "rotate password=[REDACTED:password]"
