"""`context build`: the messages an agent sends, from a session or piped history, inside
the budget; offloading on the way, the manifest, the token cache and the memory layers."""

from __future__ import annotations

import json

import pytest

from soloqueue_mem.context.tokens import counter_for, message_tokens
from tests.conftest import rewrite, table_rows

COUNT = counter_for("cl100k_base").count

MANIFEST_KEYS = {
    "messages",
    "limit",
    "safe",
    "budget",
    "used",
    "fallback",
    "encoding",
    "exact",
    "offloaded",
    "layers",
    "manifest",
}
ENTRY_KEYS = {"position", "role", "tokens", "kept", "reason"}
LAYER_KEYS = {"name", "text", "tokens", "budget", "status"}
ORPHAN = "tool result whose call was dropped"


def big_output(chars: int = 50_000) -> str:
    """ASCII text of exactly ``chars`` characters with a distinct start and end."""
    lines = "".join(f"line {i:05d}: value={i * 7919 % 10007} status=ok\n" for i in range(2000))
    body = "BEGIN of the tool output\n" + lines
    tail = "\nEND of the tool output"
    return body[: chars - len(tail)] + tail


def build(cli, *args: str, input: str | None = None):
    return cli.json("context", "build", *args, input=input)


def manifest(cli, *args: str, input: str | None = None) -> dict:
    return build(cli, *args, "--manifest", input=input)


# --- from a logged session --------------------------------------------------------------


@pytest.fixture
def session(cli) -> dict:
    """Session s1: a question, a call to two tools (one printing 50 KB), an answer."""
    output = big_output()
    events = [
        {"role": "user", "content": "磁盘为什么满了？check the disk please"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c1", "name": "run_shell", "input": {"cmd": "df -h /var"}},
                {"id": "c2", "name": "run_shell", "input": {"cmd": "cat /var/log/app.log"}},
            ],
        },
        {
            "role": "tool",
            "tool_results": [
                {"tool_use_id": "c1", "content": "/dev/sda1 100% /var", "is_error": False},
                {"tool_use_id": "c2", "content": output, "is_error": False},
            ],
        },
        {"role": "assistant", "content": "The log filled /var; 日志占满了磁盘。"},
        {"role": "user", "content": "clean it up"},
    ]
    turns = cli.json("log", "--batch", "-s", "s1", input="\n".join(map(json.dumps, events)))
    (artifact_id,) = turns[2]["offloaded"]
    return {"output": output, "artifact_id": artifact_id}


def test_a_session_builds_into_its_l1_openai_messages(cli, session):
    out = build(cli, "--system", "You are Ada.", "-s", "s1", "--max-context", "100000",
                "--reserve", "0")  # fmt: skip
    assert out[0] == {"role": "system", "content": "You are Ada."}
    assert out[1:] == json.loads(cli.ok("session", "export", "s1", "--as", "openai").stdout)
    assert [m["role"] for m in out] == ["system", "user", "assistant", "tool", "tool", "assistant",
                                        "user"]  # fmt: skip
    assert [c["id"] for c in out[2]["tool_calls"]] == ["c1", "c2"]
    assert out[3] == {"role": "tool", "tool_call_id": "c1", "content": "/dev/sda1 100% /var"}
    big = out[4]
    assert big["tool_call_id"] == "c2"
    assert f"read_artifact('{session['artifact_id']}')" in big["content"]
    assert big["content"].startswith("[输出过大 (48KB)")
    assert "BEGIN of the tool output" in big["content"]
    assert session["output"] not in big["content"] and len(big["content"]) < 1000
    assert len(json.dumps(out)) < 3000


def test_a_missing_session_is_not_found(cli):
    result = cli("context", "build", "-s", "nope", "--max-context", "1000")
    assert result.exit_code == 3 and result.stdout == ""


def test_a_session_keeps_its_newest_turns_and_drops_orphaned_tool_results(cli, session):
    roomy = manifest(cli, "-s", "s1", "--max-context", "100000", "--reserve", "0")
    cost = {e["position"]: e["tokens"] for e in roomy["manifest"]}
    # no system message (it is empty: not sent, no cost); room for positions 2..5, one
    # token short of the call at 1
    assert cost[-1] == 0 and roomy["messages"][0]["role"] == "user"
    budget = cost[2] + cost[3] + cost[4] + cost[5] + cost[1] - 1
    reserve = 95_000 - 3 - budget
    out = manifest(cli, "-s", "s1", "--max-context", "100000", "--reserve", str(reserve))
    assert out["budget"] == budget and not out["fallback"]
    assert out["messages"] == roomy["messages"][4:]
    assert [(e["position"], e["kept"], e["reason"]) for e in out["manifest"]] == [
        (-1, False, "empty system message (not sent)"),
        (0, False, "budget spent by newer messages"),
        (1, False, "budget spent by newer messages"),
        (2, False, ORPHAN),
        (3, False, ORPHAN),
        (4, True, "fits, newest first"),
        (5, True, "fits, newest first"),
    ]
    assert out["used"] == cost[4] + cost[5]
    # one token more and the whole tool exchange comes back
    more = manifest(cli, "-s", "s1", "--max-context", "100000", "--reserve", str(reserve - 1))
    assert more["messages"] == roomy["messages"][1:]


# --- from stdin -------------------------------------------------------------------------

HISTORY = [
    {"role": "user", "content": "列出当前目录"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "README.md\nsrc\n"},
    {"role": "assistant", "content": "There are two entries: README.md and src."},
]


def test_piped_history_as_a_json_array_or_jsonl(cli):
    args = ("--system", "You are Ada.", "--max-context", "8000", "--reserve", "100")
    from_array = build(cli, *args, input=json.dumps(HISTORY))
    from_lines = build(cli, *args, input="\n".join(map(json.dumps, HISTORY)) + "\n")
    assert from_array == from_lines == [{"role": "system", "content": "You are Ada."}, *HISTORY]


def test_a_big_tool_message_in_piped_history_is_offloaded(cli):
    output = big_output()
    history = [*HISTORY[:2], {"role": "tool", "tool_call_id": "call_1", "content": output}]
    out = manifest(cli, "--max-context", "8000", "--reserve", "100", input=json.dumps(history))
    (artifact_id,) = out["offloaded"]
    tool = out["messages"][-1]
    assert tool["role"] == "tool" and tool["tool_call_id"] == "call_1"
    assert f"read_artifact('{artifact_id}')" in tool["content"]
    assert output not in tool["content"]
    assert out["manifest"][-1]["tokens"] < 600 and out["manifest"][-1]["kept"]
    original = cli.ok("artifact", "read", artifact_id).stdout_bytes
    assert original == output.encode("utf-8")


@pytest.mark.usefixtures("store")
def test_small_tool_messages_are_not_offloaded(cli):
    out = manifest(cli, "--max-context", "8000", "--reserve", "100", input=json.dumps(HISTORY))
    assert out["offloaded"] == []
    assert cli.json("artifact", "list") == []


@pytest.mark.parametrize(
    "data",
    [
        '[{"role": "user", "content": "a"}',  # truncated JSON
        '[{"content": "no role"}]',
        '[{"role": "user", "content": "a"}, 42]',
        '{"role": "user", "content": "a"}\n{bad json\n',
        '{"role": "user", "content": "a"}\n{"content": "no role"}\n',
    ],
)
def test_bad_piped_history_is_rejected_with_nothing_on_stdout(cli, data):
    result = cli("context", "build", "--max-context", "8000", input=data)
    assert result.exit_code == 65, (result.stdout, result.stderr)
    assert result.stdout == ""
    assert result.stderr.startswith("error:")


@pytest.mark.usefixtures("store")
def test_rejected_history_offloads_nothing(cli):
    huge = json.dumps({"role": "tool", "tool_call_id": "call_1", "content": big_output()})
    result = cli("context", "build", "--max-context", "8000", input=huge + "\n{bad json\n")
    assert result.exit_code == 65 and result.stdout == ""
    assert cli.json("artifact", "list") == []


# --- output formats ---------------------------------------------------------------------


def test_the_manifest_fields_are_a_contract(cli):
    out = manifest(cli, "--system", "You are Ada.", "--max-context", "1000", "--reserve", "10",
                   input=json.dumps(HISTORY))  # fmt: skip
    assert set(out) == MANIFEST_KEYS
    assert (out["limit"], out["safe"], out["budget"]) == (1000, 950, 937)
    assert out["fallback"] is False
    assert (out["encoding"], out["exact"]) == ("cl100k_base", True)
    assert out["offloaded"] == [] and out["layers"] == []
    assert out["messages"] == [{"role": "system", "content": "You are Ada."}, *HISTORY]
    assert all(set(e) == ENTRY_KEYS for e in out["manifest"])
    assert [(e["position"], e["role"]) for e in out["manifest"]] == [
        (-1, "system"),
        (0, "user"),
        (1, "assistant"),
        (2, "tool"),
        (3, "assistant"),
    ]
    expected = [message_tokens(m, COUNT) for m in out["messages"]]
    assert [e["tokens"] for e in out["manifest"]] == expected
    assert out["used"] == sum(expected)
    assert all(e["kept"] is True and e["reason"] for e in out["manifest"])


def test_dropped_messages_are_counted_in_the_manifest(cli):
    out = manifest(cli, "--max-context", "40", "--reserve", "0", input=json.dumps(HISTORY))
    dropped = [e for e in out["manifest"] if not e["kept"] and e["position"] >= 0]
    assert dropped and all(isinstance(e["tokens"], int) and e["tokens"] > 0 for e in dropped)
    assert len(out["messages"]) == sum(e["kept"] for e in out["manifest"])  # no empty system


def test_jsonl_format_prints_one_message_per_line(cli):
    lines = cli.jsonl("context", "build", "--system", "S", "--max-context", "8000",
                      "--reserve", "0", input=json.dumps(HISTORY))  # fmt: skip
    assert lines == [{"role": "system", "content": "S"}, *HISTORY]


def test_table_format_shows_the_manifest(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    result = cli.ok("--format", "table", "context", "build", "--max-context", "40",
                    "--reserve", "0", input=json.dumps(HISTORY))  # fmt: skip
    for word in ("position", "tokens", "kept", "reason", "empty system message (not sent)",
                 "fits, newest first", "budget spent by newer messages"):  # fmt: skip
        assert word in result.stdout
    assert "列出当前目录" not in result.stdout  # the manifest, not the messages


def test_stats_go_to_stderr(cli):
    result = cli.ok("--format", "json", "context", "build", "--system", "You are Ada.",
                    "--max-context", "1000", "--reserve", "10", "--stats",
                    input=json.dumps(HISTORY))  # fmt: skip
    messages = json.loads(result.stdout)  # stdout is still just the messages
    used = sum(message_tokens(m, COUNT) for m in messages)
    lines = result.stderr.splitlines()
    assert lines[0] == f"limit 1000, safe 950, budget 937, used {used}"
    system = message_tokens(messages[0], COUNT)
    assert lines[1] == f"system {system} tokens; history 4 kept of 4"


# --- the token cache --------------------------------------------------------------------


def cache_rows(home) -> dict[str, int]:
    return dict(
        table_rows(
            home,
            "SELECT key, tokens FROM token_cache"
            " WHERE encoding = 'cl100k_base' AND key LIKE 'turn:%'",
        )
    )


def test_session_token_counts_are_cached_and_used(cli, session, home):
    args = ("-s", "s1", "--max-context", "100000", "--reserve", "0")
    first = manifest(cli, *args)
    rows = cache_rows(home)
    keys = [f"turn:default/default/s1#{turn}.{n}" for turn, n in
            [(0, 0), (1, 0), (2, 0), (2, 1), (3, 0), (4, 0)]]  # fmt: skip
    assert sorted(rows) == sorted(keys)
    assert [rows[k] for k in keys] == [e["tokens"] for e in first["manifest"][1:]]

    second = manifest(cli, *args)
    assert second["messages"] == first["messages"] and second["used"] == first["used"]

    # the cached count is what the builder uses: corrupt it and the total follows
    rewrite(
        home,
        "UPDATE token_cache SET tokens = tokens + 1000 WHERE key = ?",
        "turn:default/default/s1#4.0",
    )
    third = manifest(cli, *args)
    assert third["used"] == first["used"] + 1000
    assert third["manifest"][-1]["tokens"] == first["manifest"][-1]["tokens"] + 1000
    assert third["messages"] == first["messages"]


def test_piped_history_is_not_cached_by_turn(cli, session, home):
    manifest(cli, "--max-context", "8000", "--reserve", "0", input=json.dumps(HISTORY))
    assert cache_rows(home) == {}


# --- the memory layers ------------------------------------------------------------------


def with_memory(cli, *args: str) -> dict:
    return manifest(cli, "--system", "You are Ada.", "--max-context", "8000", "--reserve", "0",
                    "--with-memory", *args, input="[]")  # fmt: skip


def layers(out: dict) -> dict[str, dict]:
    assert all(set(layer) == LAYER_KEYS for layer in out["layers"])
    return {layer["name"]: layer for layer in out["layers"]}


def test_a_remembered_fact_is_recalled_into_the_system_message(cli):
    fact = "The production database is PostgreSQL 16 on db-prod-3"
    cli.ok("remember", fact)
    out = with_memory(cli, "--query", "production database")
    system = out["messages"][0]["content"]
    assert system.startswith("You are Ada.\n\n## 记忆工具\n")
    section = system.split("## 相关记忆\n", 1)[1]
    assert fact in section.split("\n\n", 1)[0]
    recall = layers(out)["recall"]
    assert recall["status"] == "included" and fact in recall["text"]
    assert 0 < recall["tokens"] <= recall["budget"] == 300


def test_the_tools_layer_describes_the_memory_tools(cli):
    out = with_memory(cli)
    tools = layers(out)["tools"]
    assert tools["status"] == "included" and tools["tokens"] <= tools["budget"] == 80
    for name in ("recall(", "trace(", "read_artifact("):
        assert name in tools["text"]
    assert f"## 记忆工具\n{tools['text']}" in out["messages"][0]["content"]


def test_absent_layers_are_skipped_cleanly(cli):
    out = with_memory(cli)
    found = layers(out)
    assert list(found) == [
        "identity", "persona", "tools", "scratchpad", "core_memory", "recall", "user",
        "preferences",
    ]  # fmt: skip
    assert found["recall"]["status"] == "skipped: no query"
    for name in ("identity", "persona", "scratchpad", "core_memory", "user", "preferences"):
        assert found[name]["status"].startswith("skipped: ")
        assert (found[name]["text"], found[name]["tokens"]) == ("", 0)
    system = out["messages"][0]["content"]
    for heading in ("## 核心记忆", "## 用户档案", "## 相关记忆", "## 草稿本"):
        assert heading not in system
    # a query with nothing to recall is skipped too, not an error
    assert layers(with_memory(cli, "--query", "anything"))["recall"]["status"].startswith(
        "skipped: "
    )


@pytest.mark.usefixtures("store")  # config.toml and identity/ live there
def test_identity_files_appear_under_their_headings(cli, home):
    cli.ok("remember", "Ada prefers short answers")  # creates the store
    identity = home / "identity"
    identity.mkdir(exist_ok=True)
    (identity / "MEMORY.md").write_text("# Core\n- 项目代号 Falcon\n- deploys go through CI\n")
    (identity / "USER.md").write_text("Name: 小明. Prefers replies in Chinese.\n")
    out = with_memory(cli)
    system = out["messages"][0]["content"]
    assert "## 核心记忆\n# Core\n- 项目代号 Falcon\n- deploys go through CI" in system
    assert system.endswith("## 用户档案\nName: 小明. Prefers replies in Chinese.")
    assert system.index("## 记忆工具") < system.index("## 核心记忆")
    found = layers(out)
    assert found["core_memory"]["status"] == found["user"]["status"] == "included"
    assert found["user"]["budget"] == 120


def test_the_promoted_traits_reach_the_system_message_once(cli):
    trait = "以后回答都用中文"
    for _ in range(2):  # said twice: a trait, promoted to user_custom.md by consolidate
        cli.ok("remember", trait, "--type", "RULE", "--subject", "user")
    cli.ok("consolidate")
    out = with_memory(cli)
    persona = layers(out)["persona"]
    assert persona["status"] == "included" and persona["budget"] == 200
    assert persona["text"] == f"# User persona\n\n- {trait}"  # the traits mark is gone
    system = out["messages"][0]["content"]
    assert f"## 用户人格\n{persona['text']}" in system
    assert system.count(trait) == 1  # core memory (MEMORY.md) leaves it out
    assert system.index("## 用户人格") < system.index("## 记忆工具")


@pytest.mark.usefixtures("store")  # config.toml and identity/ live there
def test_a_huge_core_memory_is_shortened_to_its_budget(cli, home):
    cli.ok("remember", "anything")
    identity = home / "identity"
    identity.mkdir(exist_ok=True)
    text = "\n".join(f"- service {i} listens on port {8000 + i}" for i in range(500))
    (identity / "MEMORY.md").write_text(text)
    out = with_memory(cli, "--stats")
    core = layers(out)["core_memory"]
    assert core["status"] == "shortened" and core["budget"] == 400
    assert 350 < core["tokens"] <= 400 and core["tokens"] == COUNT(core["text"])
    assert core["text"].endswith("…") and text.startswith(core["text"][:-1])
    assert f"## 核心记忆\n{core['text']}" in out["messages"][0]["content"]


def test_a_fact_appears_once_across_the_memory_layers(cli, home):
    editor = "The user's editor is Helix"
    cli.ok("remember", editor, "--subject", "user", "--predicate", "editor")
    cli.ok("remember", "User prefers dark themes", "--type", "PREFERENCE", "--subject", "user")
    cli.ok("consolidate")
    for name in ("MEMORY.md", "USER.md"):  # both files state it
        assert editor in (home / "identity" / name).read_text()
    words = " ".join(f"key{i}" for i in range(130))
    note = f"Helix keymap notes: {words}"  # remembered after consolidation: recall alone has it
    cli.ok("remember", note)
    assert 250 < COUNT(note) < 285  # fits the recall layer (300) only without the repeat

    out = with_memory(cli, "--query", "Helix editor")
    assert out["messages"][0]["content"].count(editor) == 1
    found = layers(out)
    assert editor in found["core_memory"]["text"]
    assert editor not in found["recall"]["text"]
    assert note in found["recall"]["text"] and found["recall"]["status"] == "included"
    assert found["user"] == {"name": "user", "text": "", "tokens": 0, "budget": 120,
                             "status": "skipped: shown in an earlier layer"}  # fmt: skip

    cli.ok("scratchpad", "set", f"## Current focus\n- {editor}.\n")  # the first layer wins
    found = layers(with_memory(cli, "--query", "Helix editor"))
    assert editor in found["scratchpad"]["text"]
    assert all(editor not in found[name]["text"] for name in ("core_memory", "recall", "user"))
    assert "User prefers dark themes" in found["core_memory"]["text"]
    assert "Facts" not in found["core_memory"]["text"]  # a heading left empty goes too


def test_memory_layer_stats_go_to_stderr(cli):
    result = cli.ok("context", "build", "--max-context", "8000", "--reserve", "0",
                    "--with-memory", "--stats", input="[]")  # fmt: skip
    assert "layer tools: " in result.stderr
    assert "layer core_memory: 0/400 tokens (skipped: nothing there yet)" in result.stderr
    assert "layer recall: 0/300 tokens (skipped: no query)" in result.stderr
    assert "layer" not in result.stdout


# --- usage ------------------------------------------------------------------------------


def test_query_needs_with_memory(cli):
    result = cli("context", "build", "--max-context", "8000", "--query", "x", input="[]")
    assert result.exit_code == 2 and result.stdout == ""
    assert "--with-memory" in result.stderr


def test_a_limit_is_required(cli):
    result = cli("context", "build", "--system", "S", input="[]")
    assert result.exit_code == 2 and result.stdout == ""
    assert "--model" in result.stderr and "--max-context" in result.stderr


def test_the_system_prompt_can_come_from_a_file(cli, tmp_path):
    prompt = tmp_path / "prompt.md"
    prompt.write_text("# Role\nYou are Ada, 一个谨慎的助手。\n", encoding="utf-8")
    out = build(cli, "--system", f"@{prompt}", "--max-context", "8000", "--reserve", "0",
                input="[]")  # fmt: skip
    assert out == [{"role": "system", "content": "# Role\nYou are Ada, 一个谨慎的助手。"}]


def test_a_missing_system_prompt_file_is_bad_input(cli, tmp_path):
    result = cli("context", "build", "--system", f"@{tmp_path / 'nope.md'}",
                 "--max-context", "8000", input="[]")  # fmt: skip
    assert result.exit_code == 65 and result.stdout == ""
    assert "nope.md" in result.stderr


@pytest.mark.usefixtures("store")
def test_the_scratchpad_of_the_builds_scope_is_a_layer(cli):
    cli.ok("scratchpad", "set", "## 当前项目\n- 迁移到 PostgreSQL\n## 下一步\n- 写测试\n")
    cli.ok("scratchpad", "set", "## 当前项目\n- someone else's\n", "--agent", "other")
    out = with_memory(cli)
    pad = layers(out)["scratchpad"]
    assert pad["status"] == "included" and "迁移到 PostgreSQL" in pad["text"]
    assert "someone else's" not in out["messages"][0]["content"]
    assert "## 草稿本\n## 当前项目\n- 迁移到 PostgreSQL" in out["messages"][0]["content"]


def test_the_recall_layer_brings_relevant_turns(cli):
    """The raw log is the ground truth: a turn that stated something extraction never
    kept still reaches the prompt when the query is about it."""
    cli.ok("log", "-s", "old", "the staging box answers on 10.4.2.17, ssh as deploy")
    cli.ok("remember", "the staging box is rebuilt every sunday")
    found = layers(with_memory(cli, "--query", "staging box ssh"))
    assert "10.4.2.17" in found["recall"]["text"]
    assert "rebuilt every sunday" in found["recall"]["text"]
