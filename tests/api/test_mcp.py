"""The MCP server through the SDK's own client over stdio (the [mcp] extra)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from soloqueue_mem import Store

mcp = pytest.importorskip("mcp", reason="the [mcp] extra is not installed: pip install '.[mcp]'")

TOOLS = {
    "recall": (True, False),
    "trace": (True, False),
    "remember": (False, False),
    "forget": (False, True),
    "read_artifact": (True, False),
    "context_build": (True, False),
    "session_export": (True, False),
    "query": (True, False),
    "graph_recall": (True, False),
    "graph_remember": (False, False),
}


def soloqueue_settings() -> dict[str, str]:
    """The test's SOLOQUEUE_* settings (the clock; on the PostgreSQL pass, the database):
    the SDK starts the server with a minimal environment."""
    return {name: value for name, value in os.environ.items() if name.startswith("SOLOQUEUE_")}


def run_session(home, calls, *args: str) -> tuple[list[Any], list[Any]]:
    """Start ``soloqueue-mem mcp ARGS``, list its tools and make ``calls`` in order."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "soloqueue_mem", "mcp", *args],
        env={**soloqueue_settings(), "SOLOQUEUE_HOME": str(home)},
    )

    async def main() -> tuple[list[Any], list[Any]]:
        async with Client(params, read_timeout_seconds=60) as client:
            tools = (await client.list_tools()).tools
            return tools, [await client.call_tool(name, arguments) for name, arguments in calls]

    return asyncio.run(main())


@pytest.fixture
def filled(home):
    with Store() as store:
        store.log("the staging deploy failed with a timeout", session="s1")
        store.log("retrying the staging deploy", role="assistant", session="s1")
        store.log("部署到预发环境失败了 " * 400, session="big")
        store.log("team lunch at noon", session="t1", group="team")
        store.remember("User prefers vim", type="PREFERENCE", subject="user", predicate="editor")
        store.artifact_save("日志行\n".encode() * 3000, title="big log")
        store.artifact_save(b"team secret notes", title="team", group="team")
    return home


def test_every_tool_with_its_annotations_and_answers(filled):
    calls = [
        ("recall", {"query": "which editor does the user prefer"}),
        ("trace", {"query": "staging deploy"}),
        ("remember", {"content": "Deploys go through staging", "tags": ["ops"]}),
        ("read_artifact", {"id": "1", "offset": 0, "length": 102}),
        ("read_artifact", {"id": "1", "offset": 100}),
        ("context_build", {"session": "s1", "query": "editor"}),
        ("session_export", {"session": "s1", "format": "openai"}),
        ("read_artifact", {"id": "99"}),
        ("trace", {"query": "x", "limit": 0}),
        ("recall", {"query": "staging deploy", "recent": 2, "session": "s1"}),
        ("recall", {"query": "staging deploy", "persona": "nobody"}),
    ]
    tools, results = run_session(filled, calls)
    found = {t.name: (t.annotations.read_only_hint, t.annotations.destructive_hint) for t in tools}
    assert found == TOOLS
    assert all(t.annotations.idempotent_hint for t in tools if t.name in ("remember", "forget"))
    recall, trace, remember, head, rest, built, exported, missing, bad, in_context, persona = (
        results
    )
    assert persona.is_error and "unknown persona 'nobody'" in persona.content[0].text
    assert not [h for h in in_context.structured_content["hits"] if h.get("session") == "s1"]
    assert "User prefers vim" in [h["content"] for h in recall.structured_content["hits"]]
    assert {h["session"] for h in trace.structured_content["hits"]} == {"s1"}
    assert remember.structured_content["action"] == "created"
    assert (
        head.structured_content["text"].startswith("日志行")
        and not head.structured_content["complete"]
    )
    assert head.structured_content["end"] == 100  # 102 bytes would cut a character
    assert rest.structured_content["offset"] == 100
    assert rest.structured_content["text"].startswith("日志行\n")
    messages = built.structured_content["messages"]
    assert (
        messages[0]["role"] == "system" and messages[-1]["content"] == "retrying the staging deploy"
    )
    page = exported.structured_content
    assert page["complete"] and json.loads(page["text"])[0]["role"] == "user"
    assert missing.is_error and "not_found:" in missing.content[0].text
    assert bad.is_error and "bad_input:" in bad.content[0].text


def test_graph_and_query_tools_in_the_servers_scope(filled):
    with Store(filled) as store:
        store.working_add("热数据：用户刚刚讨论了部署到预发环境。", group="team")
    talk = [
        {"role": "user", "content": "我们决定用 PostgreSQL 做用户系统的数据库。"},
        {"role": "assistant", "content": "We should deploy PostgreSQL on Kubernetes next week."},
    ]
    calls = [
        ("graph_remember", {"messages": talk}),
        ("graph_recall", {"keywords": ["postgresql"]}),
        ("query", {"query": "部署 预发"}),
        ("graph_remember", {"messages": [{"role": "user", "content": " "}]}),
    ]
    _, results = run_session(filled, calls, "--group", "team", "--agent", "a1")
    remembered, recalled, answered, empty = results
    assert remembered.structured_content["processed"]["tasks"] == 1
    contents = [r["content"] for r in recalled.structured_content["results"]]
    assert sorted(contents) == sorted(m["content"] for m in talk)
    assert "热数据" in json.dumps(answered.structured_content, ensure_ascii=False)
    assert empty.is_error and "bad_input:" in empty.content[0].text
    with Store(filled) as store:  # the graph of the server's scope, no other
        assert store.graph_recall("postgresql").found == []
        assert len(store.graph_recall("postgresql", group="team", agent="a1").found) == 2


def test_answers_fit_the_output_cap(filled):
    from soloqueue_mem.api.bounded import json_tokens

    calls = [
        ("trace", {"query": "部署 预发"}),
        ("session_export", {"session": "big", "format": "md"}),
        ("read_artifact", {"id": "1"}),
    ]
    _, results = run_session(filled, calls, "--max-output-tokens", "300")
    for result in results:
        assert not result.is_error, result.content
        assert json_tokens(result.structured_content) <= 300 + 50  # the fields around the text
    assert "…[shortened]" in results[0].structured_content["hits"][0]["content"]
    assert not results[1].structured_content["complete"]
    assert not results[2].structured_content["complete"]


def test_group_scope_from_the_server_arguments(filled):
    with Store(filled) as store:
        default_memory = store.memories()[0].id
    calls = [
        ("trace", {"query": "staging lunch"}),
        ("remember", {"content": "The team eats at noon"}),
        ("forget", {"ids": [default_memory]}),
        ("read_artifact", {"id": "1"}),
        ("read_artifact", {"id": "2"}),
        ("session_export", {"session": "t1"}),
    ]
    _, results = run_session(filled, calls, "--group", "team")
    trace, remember, forget, other, own, exported = results
    assert [h["group"] for h in trace.structured_content["hits"]] == ["team"]
    assert remember.structured_content["group"] == "team"
    assert forget.is_error and "not_found:" in forget.content[0].text
    assert not other.is_error  # saved without a group: visible to every scope
    assert own.structured_content["text"] == "team secret notes"
    assert "lunch" in exported.structured_content["text"]
    with Store(filled) as store:
        assert [m.id for m in store.memories(group="default")] == [default_memory]


def test_without_the_extra_one_error_line_names_the_install_command(home):
    probe = (
        "import sys; sys.modules['mcp'] = None\n"
        "from soloqueue_mem.cli import main\n"
        "sys.argv = ['soloqueue-mem', 'mcp']\n"
        "main()\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, check=False)
    assert result.returncode == 1
    [line] = result.stderr.decode().splitlines()
    # the package is on no index: the hint names this checkout, not 'soloqueue-mem[mcp]'
    assert line.startswith("error: mcp is not installed; install the mcp extra: ")
    assert line.endswith(f"'{Path(__file__).parents[2]}[mcp]'")
