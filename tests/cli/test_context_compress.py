"""`context compress`: older turns become memories and an episode before they leave
the context; the output is a summary message plus the last N turns."""

from __future__ import annotations

import json

from tests.conftest import table_rows

CONVERSATION = [
    {"role": "user", "content": "我的代码目录是 /srv/app。不要在周五部署！帮我看看 config.toml"},
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
    {"role": "assistant", "content": "The timeout is 5 seconds."},
    {"role": "user", "content": "My editor is helix. Raise it to 30."},
    {"role": "assistant", "content": "Done."},
    {"role": "user", "content": "thanks"},
]


def logged(cli) -> None:
    lines = "\n".join(json.dumps(m, ensure_ascii=False) for m in CONVERSATION)
    cli.ok("log", "--batch", "-s", "s1", input=lines + "\n")


def compress(cli, keep: int) -> dict:
    return json.loads(
        cli.ok("context", "compress", "-s", "s1", "--keep", str(keep), "--manifest").stdout
    )


def extracted(home) -> list[tuple[int, int, str | None]]:
    return table_rows(home, "SELECT turn_index, extracted, episode_id FROM {turns} ORDER BY 1")


def test_compress_keeps_the_last_turns_behind_one_summary_message(cli, home):
    logged(cli)
    messages = json.loads(cli.ok("context", "compress", "-s", "s1", "--keep", "2").stdout)
    assert [m["role"] for m in messages] == ["system", "assistant", "user"]
    assert messages[0]["content"].startswith("[Summary of turns 0-4] ")
    assert messages[1:] == [
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "thanks"},
    ]


def test_what_leaves_the_context_becomes_memories_and_an_episode(cli, home):
    logged(cli)
    out = compress(cli, 2)
    assert out["compressed_turns"] == 5 and out["kept_turns"] == 2
    episode = out["episode"]
    assert episode["source"] == "context_compress" and episode["outcome"] == "ongoing"
    assert (episode["first_turn"], episode["last_turn"]) == (0, 4)
    assert episode["tools_used"] == ["read_file"]
    assert episode["action_nodes"][0]["key_params"] == {"path": "config.toml"}
    assert episode["action_nodes"][0]["result_summary"] == "timeout = 5"
    assert "config.toml" in episode["entities"]
    contents = {m["content"] for m in out["memories"]}
    assert {"用户的代码目录是 /srv/app", "不要在周五部署", "User's editor is helix"} <= contents
    assert all(m["source_episode_id"] == episode["id"] for m in out["memories"])
    assert sorted(episode["linked_memory_ids"]) == sorted(m["id"] for m in out["memories"])
    rows = extracted(home)
    assert [r[1] for r in rows] == [1, 1, 1, 1, 1, 0, 0]
    assert {r[2] for r in rows[:5]} == {episode["id"]}
    assert cli.json("episode", "show", episode["id"])["summary"] == episode["summary"]


def test_compressing_again_extracts_nothing_twice(cli, home):
    logged(cli)
    first = compress(cli, 2)
    before = cli.json("memory", "list")
    second = compress(cli, 2)
    assert second["episode"]["id"] == first["episode"]["id"]
    assert second["memories"] == []
    assert cli.json("memory", "list") == before  # no confidence bumps, no duplicates
    assert second["messages"] == first["messages"]


def test_kept_turns_never_open_with_an_orphaned_tool_result(cli):
    logged(cli)
    out = compress(cli, 5)  # the 5th-newest turn is the tool result of c1
    roles = [m["role"] for m in out["messages"]]
    assert roles[:3] == ["system", "assistant", "tool"]
    assert out["messages"][1]["tool_calls"][0]["id"] == "c1"
    assert out["compressed_turns"] == 1


def test_nothing_to_compress_returns_the_history_as_it_is(cli):
    logged(cli)
    out = compress(cli, 50)
    assert out["episode"] is None and out["memories"] == [] and out["compressed_turns"] == 0
    assert len(out["messages"]) == len(CONVERSATION)


def test_bad_arguments(cli):
    logged(cli)
    assert cli("context", "compress", "-s", "s1", "--keep", "-1").exit_code == 65
    assert cli("context", "compress", "-s", "nope", "--keep", "1").exit_code == 3
    assert cli("context", "compress", "-s", "../etc", "--keep", "1").exit_code == 65


def test_with_the_setting_the_newly_compressed_turns_feed_the_graph_once(cli, home):
    from tests.cli.test_offload import write_config

    write_config(home, "context_compress_feeds_graph = true\n")
    logged(cli)
    task = compress(cli, 2)["graph_task"]
    assert task["messages"] == 3  # the user and assistant turns with text, tools left out
    cli.json("graph", "work", "--wait")  # after the worker compress started, if still running
    found = cli.json("graph", "recall", "--keywords", "helix")["results"]
    assert [r["content"] for r in found] == ["My editor is helix."]
    assert compress(cli, 2)["graph_task"] is None  # nothing compressed for the first time


def test_without_the_setting_compress_leaves_the_graph_alone(cli, home):
    logged(cli)
    assert compress(cli, 2)["graph_task"] is None
    assert not (home / "graph.db").exists()
