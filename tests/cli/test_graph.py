"""``soloqueue-mem graph`` through the CLI, on the offline rules path."""

from __future__ import annotations

import json
import os

import pytest

from tests.cli.test_offload import write_config
from tests.conftest import rewrite, table_rows

CONVERSATION = [
    {
        "role": "user",
        "content": "我们决定用 PostgreSQL 做用户系统的数据库。它支持 JSONB，查询也快。",
    },
    {
        "role": "assistant",
        "content": "Sounds good to me. We should deploy PostgreSQL on Kubernetes next week.",
    },
]
LOGIN = [{"role": "user", "content": "登录模块采用 JWT 方案，token 有效期 15 分钟。"}]


def remember(cli, messages, *args):  # type: ignore[no-untyped-def]
    return cli.json("graph", "remember", "--sync", *args, input=json.dumps(messages))


@pytest.mark.usefixtures("store")
def test_remember_sync_builds_nodes_links_and_focus(cli, home):
    result = remember(cli, CONVERSATION)
    assert result["task_id"] == "1" and result["messages"] == 2
    assert result["processed"]["tasks"] == 1 and result["processed"]["queued"] == 0
    focus = cli.json("graph", "focus")
    assert [f["position"] for f in focus] == [1, 2, 3, 4]
    contents = [f["content"] for f in reversed(focus)]
    assert contents[0] == "我们决定用 PostgreSQL 做用户系统的数据库。"
    assert contents[1].startswith("PostgreSQL 支持 JSONB")  # 它 resolved by the heuristic
    assert all(len(c) <= 200 for c in contents)
    assert all(1 <= len(f["keywords"]) <= 5 and len(f["phrase"]) <= 20 for f in focus)
    first = cli.json("graph", "show", focus[-1]["node_id"])
    assert first["out"] == [
        {"node_id": focus[-2]["node_id"], "strength": 0.5, "relation": "下文", "dangling": False}
    ]
    remember(cli, LOGIN)
    shown = cli.json("graph", "show", focus[-1]["node_id"])
    assert {"node_id": "5", "strength": 1.0, "relation": None, "dangling": False} in shown["out"]
    stats = cli.json("graph", "stats")
    assert stats == {
        "graphs": [
            {
                "group": "default",
                "agent": "default",
                "nodes": 5,
                "links": 2 * 3 + 2 * 4,
                "dangling_links": 0,
                "focus": 5,
                "queued": 0,
            }
        ],
        "queued": 0,
    }


@pytest.mark.usefixtures("store")
def test_recall_text_is_the_seeds_format_and_json_adds_the_path(cli, home):
    remember(cli, CONVERSATION)
    remember(cli, LOGIN)
    text = cli.ok("graph", "recall", "--keywords", "postgresql,jwt", "--format", "text").stdout
    assert text == (
        "[记忆] 登录模块采用 JWT 方案，token 有效期 15 分钟。\n---\n"
        "[记忆] 我们决定用 PostgreSQL 做用户系统的数据库。\n---\n"
        "[记忆] PostgreSQL 支持 JSONB，查询也快。\n---\n"
        "[记忆] We should deploy PostgreSQL on Kubernetes next week.\n"
    )
    data = cli.json("graph", "recall", "--keywords", "JSONB")
    (hit,) = data["results"]
    assert set(hit) == {
        "node_id",
        "content",
        "phrase",
        "keywords",
        "matched_keywords",
        "path",
        "relations",
        "path_strength",
    }
    assert hit["matched_keywords"] == ["jsonb"] and hit["path"] == ["5", "2"]
    assert hit["path_strength"] == 1.0 and data["forgotten"] == []
    assert cli.json("graph", "recall", "--keywords", "JSONB", "--relation", "下文")["results"] == []
    (itself,) = cli.json("graph", "recall", "--keywords", "JSONB", "--depth", "0")["results"]
    assert itself["path"] == ["2"]  # a focus node, found without a hop


def test_recall_on_an_empty_store_is_empty_and_creates_nothing(cli, store):
    before = os.listdir(store)
    assert cli.ok("graph", "recall", "--keywords", "x", "--format", "text").stdout == ""
    assert cli.json("graph", "focus") == []
    assert cli.json("graph", "stats") == {"graphs": [], "queued": 0}
    assert os.listdir(store) == before


@pytest.mark.usefixtures("store")
def test_graphs_of_two_agents_are_isolated(cli, home):
    remember(cli, CONVERSATION, "--agent", "alice")
    remember(cli, LOGIN, "--agent", "bob")
    assert cli.json("graph", "recall", "--keywords", "jwt", "-a", "alice")["results"] == []
    assert len(cli.json("graph", "recall", "--keywords", "jwt", "-a", "bob")["results"]) == 1
    assert len(cli.json("graph", "focus", "-a", "bob")) == 1


@pytest.mark.usefixtures("store")
def test_compression_deletes_an_unimportant_node_and_recall_reports_it(cli, home):
    remember(cli, [{"role": "user", "content": "The cat is called Mimi and sleeps all day."}])
    for n in range(5):  # five new nodes push the cat out of the focus
        remember(cli, [{"role": "user", "content": f"Unrelated topic number {n} about weather."}])
    # long forgotten
    rewrite(home, "UPDATE graph_links SET strength = 0.02 WHERE to_id = 1", name="graph")
    report = cli.json("graph", "compress", "--time-budget", "5")
    assert report["deleted"] == 1 and report["stopped"] is False
    missing = cli("graph", "show", "1")
    assert missing.exit_code == 3 and missing.stderr.startswith("error: graph node 1 not found")
    text = cli.ok("graph", "recall", "--keywords", "topic number 0", "--format", "text").stdout
    assert text.endswith("\n---\n[记忆] 与某个已遗忘的事物有关联\n")
    exported = json.loads(cli.ok("graph", "export").stdout)
    assert any(link["dangling"] for link in exported["links"])
    mermaid = cli.ok("graph", "export", "--format", "mermaid").stdout
    assert mermaid.startswith("graph LR\n") and 'forgotten(("?"))' in mermaid
    dot = cli.ok("graph", "export", "--format", "dot").stdout
    assert dot.startswith("digraph graph_memory {") and "forgotten" in dot


def test_queue_full_exits_75_and_bad_input_65_writing_nothing(cli, home):
    write_config(home, "graph_max_queue_size = 1\n")
    remember(cli, LOGIN)
    rewrite(
        home,
        "INSERT INTO graph_tasks (group_id, agent_id, messages_json, enqueued_at)"
        " VALUES ('default', 'default', '[]', 'x')",
        name="graph",
    )
    full = cli("graph", "remember", input=json.dumps(LOGIN))
    assert full.exit_code == 75 and "queue is full" in full.stderr
    bad = cli("graph", "remember", input='[{"role": "user"}')
    assert bad.exit_code == 65 and bad.stderr.startswith("error: ")
    empty = cli("graph", "remember", input='[{"role": "user", "content": "  "}]')
    assert empty.exit_code == 65
    assert table_rows(home, "SELECT COUNT(*) FROM graph_tasks", name="graph") == [(1,)]


@pytest.mark.usefixtures("store")
def test_jsonl_input_and_session_turns(cli, home):
    lines = "\n".join(json.dumps(m) for m in CONVERSATION)
    assert cli.json("graph", "remember", "--sync", input=lines)["messages"] == 2
    cli.ok("log", "-s", "s1", "--role", "user", "The release is planned for Friday.")
    result = cli.json("graph", "remember", "--sync", "--session", "s1")
    assert result["messages"] == 1
    assert cli.json("graph", "recall", "--keywords", "friday")["results"][0]["content"] == (
        "The release is planned for Friday."
    )
    missing = cli("graph", "remember", "--session", "nope")
    assert missing.exit_code == 3 and missing.stderr == (
        "error: session nope not found (try: soloqueue-mem session list)\n"
    )


@pytest.mark.usefixtures("store")
def test_the_graph_channel_joins_recall_and_consolidate_runs_the_queue(cli, home):
    remember(cli, CONVERSATION)
    hits = cli.json("recall", "PostgreSQL JSONB")
    assert hits[0]["kind"] == "graph" and hits[0]["channel"] == "graph"
    assert hits[0]["content"] == "PostgreSQL 支持 JSONB，查询也快。"
    assert {"phrase", "keywords", "group", "agent"} <= set(hits[0])
    only = cli.json("recall", "PostgreSQL", "--channels", "memories")
    assert all(h["kind"] != "graph" for h in only)
    remember(cli, LOGIN)
    report = cli.json("consolidate")["graph"]
    assert (
        report["graphs"] == 1
        and report["tasks"] == 0
        and report["visited"] == 5
        and report["compressed"] == 0
    )
    assert cli.json("graph", "stats")["queued"] == 0


def test_config_keys_are_checked(cli, home):
    write_config(home, "graph_decay_rate = 1.5\n")
    result = cli("graph", "stats")
    assert result.exit_code == 65 and "graph_decay_rate must be between 0 and 1" in result.stderr


@pytest.mark.usefixtures("store")
@pytest.mark.sqlite_only("damages graph.db, the SQLite file")
def test_verify_checks_graph_db(cli, home):
    remember(cli, LOGIN)
    assert cli("verify").exit_code == 0
    data = bytearray((home / "graph.db").read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # the header's tail and the first page
    (home / "graph.db").write_bytes(bytes(data))
    for suffix in ("-wal", "-shm"):
        (home / f"graph.db{suffix}").unlink(missing_ok=True)
    report = json.loads(cli("--format", "json", "verify").stdout)
    assert any(
        f["kind"] == "corrupt-database" and f["where"] == "graph.db" for f in report["findings"]
    )
