"""Seed 002's graph memory on PostgreSQL: graph.db's contract tests run again with
``database_url`` set (the same commands, JSON and exit codes), the recall property
against the plain reference search on the database's graph, and what only a shared
database has (the worker lock across hosts)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.cli import test_graph as contract
from tests.conftest import Cli
from tests.property import test_graph_props as props
from tests.unit.graph.helpers import SCOPE, add_node, link, set_focus

# graph.db's contract tests that touch nothing but the CLI: each runs as it is
CONTRACT: list[Callable[[Cli, Path], None]] = [
    contract.test_remember_sync_builds_nodes_links_and_focus,
    contract.test_recall_text_is_the_seeds_format_and_json_adds_the_path,
    contract.test_graphs_of_two_agents_are_isolated,
    contract.test_jsonl_input_and_session_turns,
    contract.test_the_graph_channel_joins_recall_and_consolidate_runs_the_queue,
    contract.test_config_keys_are_checked,
]


@pytest.mark.parametrize("test", CONTRACT, ids=lambda test: test.__name__)
def test_the_graph_contract_holds_on_postgres(
    test: Callable[[Cli, Path], None], cli: Cli, home: Path, on_postgres: str
) -> None:
    test(cli, home)
    assert not home.joinpath("graph.db").exists()  # the graph is the database's


def _execute(url: str, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(sql, params)
        return cursor.fetchall() if cursor.description else []


def test_an_empty_database_recalls_nothing(cli: Cli, on_postgres: str) -> None:
    assert cli.ok("graph", "recall", "--keywords", "x", "--format", "text").stdout == ""
    assert cli.json("graph", "focus") == []
    assert cli.json("graph", "stats") == {"graphs": [], "queued": 0}
    assert cli.json("graph", "work")["tasks"] == 0


def test_compression_deletes_an_unimportant_node_and_recall_reports_it(
    cli: Cli, on_postgres: str
) -> None:
    contract.remember(cli, [{"role": "user", "content": "The cat is called Mimi."}])
    for n in range(5):  # five new nodes push the cat out of the focus
        contract.remember(cli, [{"role": "user", "content": f"Unrelated topic {n} on weather."}])
    _execute(on_postgres, "UPDATE graph_links SET strength = 0.02 WHERE to_id = 1")
    report = cli.json("graph", "compress", "--time-budget", "5")
    assert report["deleted"] == 1 and report["stopped"] is False
    missing = cli("graph", "show", "1")
    assert missing.exit_code == 3 and missing.stderr.startswith("error: graph node 1 not found")
    text = cli.ok("graph", "recall", "--keywords", "topic 0", "--format", "text").stdout
    assert text.endswith("\n---\n[记忆] 与某个已遗忘的事物有关联\n")
    exported = json.loads(cli.ok("graph", "export").stdout)
    assert any(link["dangling"] for link in exported["links"])
    assert "forgotten" in cli.ok("graph", "export", "--format", "dot").stdout


def test_queue_full_exits_75_and_bad_input_65_writing_nothing(
    cli: Cli, home: Path, on_postgres: str
) -> None:
    from tests.cli.test_offload import write_config

    write_config(home, "graph_max_queue_size = 1\n")
    contract.remember(cli, contract.LOGIN)
    _execute(
        on_postgres,
        "INSERT INTO graph_tasks (group_id, agent_id, messages_json, enqueued_at)"
        " VALUES ('default', 'default', '[]', 'x')",
    )
    full = cli("graph", "remember", input=json.dumps(contract.LOGIN))
    assert full.exit_code == 75 and "queue is full" in full.stderr
    assert cli("graph", "remember", input='[{"role": "user"}').exit_code == 65
    assert _execute(on_postgres, "SELECT COUNT(*) FROM graph_tasks") == [(1,)]


def test_a_worker_on_another_host_holds_the_queue_and_runs_our_tasks(
    cli: Cli, tmp_path: Path, on_postgres: str
) -> None:
    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.storage.graph import worker_lock

    other_host = Home(tmp_path / "other-host")
    with worker_lock(other_host, Config(), wait=False):
        busy = cli("graph", "work")
        assert busy.exit_code == 75 and "another graph worker is running" in busy.stderr
        queued = cli.json("graph", "remember", input=json.dumps(contract.LOGIN))
        assert queued["queued"] == 1  # its worker found the lock held and left
        assert cli.json("graph", "stats")["queued"] == 1
    # the task runs once: here, or in a worker its remember started that got the lock first
    assert cli.json("graph", "work", "--wait")["queued"] == 0
    (graph,) = cli.json("graph", "stats")["graphs"]
    assert graph["nodes"] == 1 and graph["queued"] == 0


def test_two_roots_write_one_graph(cli: Cli, tmp_path: Path, on_postgres: str) -> None:
    """Two hosts (data directories) remember into one agent's graph: each sees the
    other's nodes, links and focus, and node ids are never given out twice."""
    first, second = tmp_path / "host-a", tmp_path / "host-b"
    contract.remember(cli, contract.CONVERSATION, "--root", str(first))
    contract.remember(cli, contract.LOGIN, "--root", str(second))
    for root in (first, second):
        stats = cli.json("graph", "stats", "--root", str(root))
        assert stats["graphs"][0]["nodes"] == 5 and stats["graphs"][0]["focus"] == 5
        hits = cli.json("graph", "recall", "--keywords", "jwt,jsonb", "--root", str(root))
        assert {h["node_id"] for h in hits["results"]} == {"2", "5"}
    assert _execute(on_postgres, "SELECT COUNT(DISTINCT node_id) FROM graph_nodes") == [(5,)]


def test_the_store_api_runs_the_graph_on_postgres(home: Path, on_postgres: str) -> None:
    from soloqueue_mem import Store
    from soloqueue_mem.graph.recall import as_json

    with Store(home) as store:
        task = store.graph_remember(contract.CONVERSATION, sync=True)
        assert task["processed"]["nodes"] == 4
        found = as_json(store.graph_recall("JSONB"), "zh")["results"]
        assert [hit["content"] for hit in found] == ["PostgreSQL 支持 JSONB，查询也快。"]
        assert len(store.graph_focus()) == 4
        assert store.graph_work()["tasks"] == 0


@pytest.fixture
def pg_graph(database_url: str) -> Any:
    from soloqueue_mem.graph.db import SqlGraph
    from soloqueue_mem.storage.postgres.connect import connect

    db = SqlGraph(connect(database_url))
    yield db
    db.close()


def test_recall_gives_the_reference_searchs_answer_on_postgres(pg_graph: Any) -> None:
    """The batched recall over the database's graph, against seed §4.2's plain search
    (the property test's reference), on a graph with weak, broken, deleted and
    relation-named links: the same nodes, paths, relations and strengths."""
    db = pg_graph
    ids = [add_node(db, f"memory {n} apple", ["Kiwi"] if n % 3 else []) for n in range(10)]
    for a, b, strength, relation in [
        (0, 1, 0.9, "a"), (0, 2, 0.3, "b"), (1, 3, 0.8, "a"), (2, 3, 0.95, "a"),
        (3, 4, 0.005, "a"), (4, 5, 1.0, None), (5, 6, 0.7, "a"), (1, 7, 0.6, "a"),
        (7, 8, 0.6, None), (9, 0, 0.5, "a"), (8, 9, 0.5, "b"),
    ]:  # fmt: skip
        link(db, ids[a], ids[b], strength, relation)
    set_focus(db, [ids[5], ids[0]])
    with db.transaction():
        db.delete_node(ids[7])
    for words, relations, depth, limit in [
        (["APPLE"], None, 3, 0),
        (["kiwi"], None, 2, 0),
        (["apple"], ["a"], 3, 0),
        (["apple", "kiwi"], None, 2, 2),
    ]:
        result = props.recall(db, SCOPE, words, relations, depth, limit, 0.01)
        found, dangling = props.reference_recall(db, words, relations, depth, limit, 0.01)
        got = [(f.node.id, f.matched, f.path, f.relations, f.strength) for f in result.found]
        assert got == found and result.dangling == dangling


def _graph_with_a_dangling_link_and_a_queued_task(cli: Cli, home: Path) -> None:
    """Five nodes in two agents' graphs, node 5 deleted (links into it dangle), a
    queued task."""
    from soloqueue_mem.config import Config
    from soloqueue_mem.graph.db import SqlGraph
    from soloqueue_mem.home import Home
    from soloqueue_mem.storage.sqlite.stores import open_graph

    contract.remember(cli, contract.CONVERSATION)
    contract.remember(cli, contract.LOGIN, "--agent", "bob")
    contract.remember(cli, contract.LOGIN)
    graph = SqlGraph(open_graph(Home(home), Config()))
    try:
        with graph.transaction():
            graph.delete_node(6)
        graph.enqueue(SCOPE, contract.LOGIN, "2026-11-26T08:00:00.000Z", 10)
    finally:
        graph.close()


def test_migrate_copies_the_graph_with_its_ids_verified_by_counts(
    cli: Cli, home: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli.ok("log", "-s", "s1", "a turn, so there is a memory.db to migrate")
    _graph_with_a_dangling_link_and_a_queued_task(cli, home)
    before = {
        "stats": cli.json("graph", "stats"),
        "export": cli.ok("graph", "export").stdout,
        "recall": cli.json("graph", "recall", "--keywords", "postgresql,jwt", "--depth", "3"),
    }
    result = cli("--format", "json", "migrate", "--to", database_url)
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    counts = {
        name: (t["source"], t["copied"], t["existing"], t["conflicts"])
        for name, t in report["tables"].items()
        if name.startswith("graph_")
    }
    assert counts == {
        "graph_nodes": (5, 5, 0, 0),
        "graph_links": (10, 10, 0, 0),  # 6 in the first batch, 4 dangling into node 6
        "graph_focus": (5, 5, 0, 0),
        "graph_tasks": (1, 1, 0, 0),
    }
    assert report["verified"] is True
    again = json.loads(cli.ok("--format", "json", "migrate", "--to", database_url).stdout)
    assert {n: t["existing"] for n, t in again["tables"].items() if n.startswith("graph_")} == {
        "graph_nodes": 5, "graph_links": 10, "graph_focus": 5, "graph_tasks": 1,
    }  # fmt: skip
    monkeypatch.setenv("SOLOQUEUE_DATABASE_URL", database_url)
    assert cli.json("graph", "stats") == before["stats"]
    assert cli.ok("graph", "export").stdout == before["export"]
    assert (
        cli.json("graph", "recall", "--keywords", "postgresql,jwt", "--depth", "3")
        == (before["recall"])
    )
    contract.remember(cli, [{"role": "user", "content": "A new node after the move."}])
    assert max(int(n["node_id"]) for n in json.loads(cli.ok("graph", "export").stdout)["nodes"]) > 6


def test_export_and_import_carry_the_graph_between_back_ends(
    cli: Cli, home: Path, tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite → dump → PostgreSQL → dump: the same graph records; importing twice adds
    nothing."""
    cli.ok("init")
    _graph_with_a_dangling_link_and_a_queued_task(cli, home)
    dump = cli.ok("export").stdout
    graph_lines = [line for line in dump.splitlines() if '"kind":"graph_' in line]
    assert len(graph_lines) == 5 + 2 + 1  # nodes, two focus lists, a task
    monkeypatch.setenv("SOLOQUEUE_DATABASE_URL", database_url)
    other = tmp_path / "host-b"
    report = cli.json("import", "-", "--root", str(other), input=dump)
    assert report["added"]["graph_node"] == 5 and report["added"]["graph_task"] == 1
    again = cli.json("import", "-", "--root", str(other), input=dump)
    assert "graph_node" not in again["added"] and again["existing"]["graph_node"] == 5
    exported = cli.ok("export", "--root", str(other)).stdout
    assert [line for line in exported.splitlines() if '"kind":"graph_' in line] == graph_lines
    assert not (other / "graph.db").exists()
    new = cli.json("graph", "remember", "--sync", "--root", str(other), input=json.dumps(
        [{"role": "user", "content": "After the import."}]
    ))  # fmt: skip
    assert new["processed"]["tasks"] == 2  # the imported queued task, then this one


_GRAPH_WRITER = """
import sys
from soloqueue_mem import Store
root, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
with Store(root) as store:
    for n in range(count):
        text = f"Writer {name} reports item number {n} about the shared deploy plan."
        store.graph_remember([{"role": "user", "content": text}], sync=n % 2 == 0)
    store.graph_work()
"""


def test_writers_on_two_hosts_apply_every_task_once(tmp_path: Path, on_postgres: str) -> None:
    """Two processes with their own data directories remember into one graph at once,
    running the shared queue as they go: every task becomes its node exactly once,
    ids are unique, the queue ends empty and the focus holds the newest nodes."""
    import os
    import subprocess
    import sys

    count = 6
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _GRAPH_WRITER, str(tmp_path / name), name, str(count)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=os.environ.copy(),
        )
        for name in ("a", "b")
    ]
    for writer in writers:
        _, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err.decode()
    contents = [row[0] for row in _execute(on_postgres, "SELECT content FROM graph_nodes")]
    expected = [
        f"Writer {name} reports item number {n} about the shared deploy plan."
        for name in ("a", "b")
        for n in range(count)
    ]
    assert sorted(contents) == sorted(expected)  # each task applied once
    assert _execute(on_postgres, "SELECT COUNT(*) FROM graph_tasks") == [(0,)]
    newest = _execute(on_postgres, "SELECT node_id FROM graph_nodes ORDER BY node_id DESC LIMIT 5")
    focus = _execute(on_postgres, "SELECT node_id FROM graph_focus ORDER BY seq DESC")
    assert focus == newest


def test_the_fast_path_and_the_detached_worker_run_on_postgres(
    home: Path, on_postgres: str
) -> None:
    """A plain ``graph remember`` (the fast parser) queues on the database and starts
    the detached worker; the task is run once (by it, or by ``graph work --wait`` if
    it gets the lock first) and ``graph recall`` (fast too) finds it."""
    from tests.conftest import run_process

    queued = run_process("graph", "remember", input=json.dumps(contract.LOGIN).encode())
    assert queued.returncode == 0, queued.stderr
    assert json.loads(queued.stdout)["task_id"] == "1"
    done = run_process("--format", "json", "graph", "work", "--wait")  # waits for the worker
    assert done.returncode == 0 and json.loads(done.stdout)["queued"] == 0
    found = run_process("graph", "recall", "--keywords", "jwt", "--format", "text")
    assert found.stdout.decode() == "[记忆] 登录模块采用 JWT 方案，token 有效期 15 分钟。\n"
    assert not (home / "graph.db").exists()


@pytest.fixture
def both(pg_graph: Any) -> Any:
    """A fresh graph on each back end per call: graph.db in a new folder, and the
    database's tables emptied (ids restarting at 1)."""
    from contextlib import contextmanager

    @contextmanager
    def fresh():  # type: ignore[no-untyped-def]
        pg_graph.conn.execute(
            "TRUNCATE graph_nodes, graph_links, graph_focus, graph_tasks RESTART IDENTITY"
        )
        with props.fresh_graph() as sqlite:
            yield sqlite, pg_graph

    return fresh


def _shape(db: Any, edges: list[Any], keywords: list[list[str]], focus: list[int]) -> list[int]:
    ids = [
        add_node(db, f"memory {n}" + (" kiwi" if n % 4 == 0 else ""), keywords[n])
        for n in range(12)
    ]
    for a, b, strength, relation in edges:
        if a != b:
            link(db, ids[a], ids[b], strength, relation)
    set_focus(db, [ids[n] for n in focus])
    return ids


@props.SETTINGS
@given(
    props.GRAPHS,
    st.lists(props.KEYWORDS, min_size=12, max_size=12),
    st.lists(st.integers(0, 11), min_size=1, max_size=5, unique=True),
    st.sets(st.integers(0, 11), max_size=3),
    st.integers(0, 3),
    st.integers(0, 4),
    st.sampled_from([None, ["a"]]),
)
def test_recall_finds_the_same_on_both_back_ends(
    both: Any, edges, keywords, focus, deleted, depth, limit, relations
) -> None:  # type: ignore[no-untyped-def]
    """The same graph on graph.db and on PostgreSQL: recall gives the same nodes,
    matches, paths, relations, strengths and forgotten links, and both equal the plain
    reference search."""
    words = ["kiwi", "梨", "pear", 'pe"ar']
    answers = []
    with both() as graphs:
        for db in graphs:
            ids = _shape(db, edges, keywords, focus)
            with db.transaction():
                for n in deleted - set(focus):
                    db.delete_node(ids[n])
            result = props.recall(db, SCOPE, words, relations, depth, limit, 0.01)
            got = [(f.node, f.matched, f.path, f.relations, f.strength) for f in result.found]
            found, dangling = props.reference_recall(db, words, relations, depth, limit, 0.01)
            assert [(g[0].id, *g[1:]) for g in got] == found and result.dangling == dangling
            answers.append((got, result.dangling))
    assert answers[0] == answers[1]


def test_compression_and_the_queue_behave_the_same_on_both_back_ends(both: Any) -> None:
    """One script of remember, compression slices and queue moves through the storage
    interface on each back end: every read gives the same answer."""
    from soloqueue_mem.graph.compress import compress_slice

    def run(db: Any) -> list[Any]:
        seen: list[Any] = []
        for n in range(8):
            props.remember(db, [f"topic {n} " * (n + 2), f"detail {n} of the plan " * 3])
            seen.append(compress_slice(db, SCOPE, props.Echo(), props.PARAMS))
        task = db.head()
        assert task is None
        first = db.enqueue(SCOPE, [{"role": "user", "content": "x"}], "t", 9)
        moved = db.requeue(db.task(first))
        seen += [first, moved, db.pending(), db.depth(), db.take(moved), db.take(moved)]
        for _ in range(30):
            seen.append(compress_slice(db, SCOPE, props.Echo(), props.PARAMS))
        nodes = db.nodes_of(SCOPE)
        ids = [n.id for n in nodes]
        seen += [nodes, db.links_of(SCOPE), db.focus(SCOPE), db.scopes()]
        seen += [db.counts(SCOPE, 0.01), db.scan_order(SCOPE), db.dangling_from(ids)]
        seen += [(db.importance(i, 0.01), db.in_links(i), db.out_links(i)) for i in range(1, 20)]
        return seen

    with both() as (sqlite, postgres):
        assert run(sqlite) == run(postgres)


def test_context_compress_and_pre_compact_feed_the_database_graph(
    cli: Cli, home: Path, on_postgres: str
) -> None:
    from tests.cli import test_context_compress as compressing
    from tests.cli.test_offload import write_config
    from tests.e2e.test_claude_hooks import hook, payload

    write_config(home, "context_compress_feeds_graph = true\n")
    compressing.logged(cli)
    task = compressing.compress(cli, 2)["graph_task"]
    assert task["messages"] == 3
    cli.json("graph", "work", "--wait")
    found = cli.json("graph", "recall", "--keywords", "helix")["results"]
    assert [r["content"] for r in found] == ["My editor is helix."]
    assert not (home / "graph.db").exists()  # the database's graph, not a local file
    for name in ("UserPromptSubmit", "PostToolUse", "PreCompact"):
        assert hook(payload(name)) == ("", "")
    assert cli.json("graph", "work")["nodes"] >= 1
