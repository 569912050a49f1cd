"""The Typer-free parser for plain `graph remember` and `graph recall` calls behaves
exactly like the Typer commands: same stdout, stderr, exit status and queued tasks."""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from soloqueue_mem.cli.fast import GRAPH_RECALL, GRAPH_REMEMBER, parse_argv
from soloqueue_mem.home import Home
from tests.e2e.test_fast_artifact import run
from tests.e2e.test_fast_log import TYPER_ONLY

# Every test here works in a data directory that exists (see the store fixture).
pytestmark = pytest.mark.usefixtures("store")

MESSAGES = json.dumps([{"role": "user", "content": "The release is on Friday."}]).encode()


@pytest.mark.parametrize(
    "argv",
    [
        ["graph", "remember", "--help"],
        ["graph", "remember", "extra"],
        ["graph", "remember", "--sync=yes"],
        ["graph", "recall", "--keywords", "x"],
        ["graph", "remember", "--format", "yaml"],
        ["graph", "--root", "r", "remember"],
    ],
)
def test_anything_unusual_goes_to_typer(argv):
    assert parse_argv(argv, GRAPH_REMEMBER) is None


def tasks(home: Path) -> list[tuple]:
    if not (home / "graph.db").exists():
        return []
    with sqlite3.connect(home / "graph.db") as conn:
        return conn.execute(
            "SELECT task_id, group_id, agent_id, messages_json FROM graph_tasks"
        ).fetchall()


CASES = [
    ["--format", "json", "graph", "remember"],
    ["graph", "remember", "-a", "bob", "--group=g1", "-f", "jsonl"],
    ["graph", "remember", "--agent", "../x"],
    ["graph", "remember", "--session", "nope"],
]


# The scope variables, alone and beside the options that override them (issue 15 §23);
# remember never reads SOLOQUEUE_SESSION (stdin stays its input, as the README says).
ENV_CASES = [
    ({"SOLOQUEUE_SESSION": "s1"}, ["graph", "remember", "-f", "json"]),
    ({"SOLOQUEUE_GROUP": "g1", "SOLOQUEUE_AGENT": "a1"}, ["graph", "remember", "-f", "json"]),
    ({"SOLOQUEUE_AGENT": "a1"}, ["graph", "remember", "-a", "a2", "-f", "json"]),
    ({"SOLOQUEUE_AGENT": ""}, ["graph", "remember", "-f", "json"]),
    ({"SOLOQUEUE_GROUP": "../x"}, ["graph", "remember"]),
]


@pytest.mark.parametrize("argv", CASES)
def test_fast_and_typer_paths_agree(tmp_path, argv):
    _remember_agrees(tmp_path, argv, {})


@pytest.mark.parametrize(("variables", "argv"), ENV_CASES)
def test_fast_and_typer_paths_agree_on_the_environment(tmp_path, variables, argv):
    _remember_agrees(tmp_path, argv, variables)


def _remember_agrees(tmp_path: Path, argv: list[str], variables: dict[str, str]) -> None:
    assert parse_argv(argv, GRAPH_REMEMBER) is not None
    results = []
    for name, prefix in (
        ("fast", [sys.executable, "-m", "soloqueue_mem"]),
        ("typer", [sys.executable, "-c", TYPER_ONLY]),
    ):
        cwd = tmp_path / name
        cwd.mkdir()
        home = cwd / ".soloqueue"
        home.mkdir(mode=0o700)
        (home / ".graph.lock").touch()
        fd = os.open(home / ".graph.lock", os.O_RDWR)
        fcntl.flock(fd, fcntl.LOCK_EX)  # the worker each call starts leaves at once
        try:
            results.append((run(prefix, argv, MESSAGES, cwd, home, variables), tasks(home)))
        finally:
            os.close(fd)
    assert results[0] == results[1]


def test_a_plain_remember_never_imports_typer(home):
    probe = (
        "import sys, json; sys.argv = ['soloqueue-mem', 'graph', 'remember', '--sync'];"
        "import soloqueue_mem.cli as c\ntry: c.main()\nexcept SystemExit: pass\n"
        "sys.stderr.write(json.dumps('typer' in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], input=MESSAGES, capture_output=True, check=False, timeout=60
    )
    assert json.loads(done.stdout)["processed"]["nodes"] == 1
    assert json.loads(done.stderr.decode().splitlines()[-1]) is False


RECALLS = [
    ["--format", "json", "graph", "recall", "--keywords", "release"],
    ["graph", "recall", "--keywords", "RELEASE,friday", "--format", "text"],
    ["graph", "recall", "--keywords", "release", "--depth", "0", "-n", "1", "-f", "jsonl"],
    ["graph", "recall", "--keywords", "release", "--relation", "上文", "--limit=5"],
    ["graph", "recall", "--keywords", "release", "--depth", "-1"],
    ["graph", "recall", "--keywords", ",", "-a", "nobody"],
    ["graph", "recall", "--keywords", "x", "--agent", "../x"],
]


RECALL_ENV_CASES = [
    ({"SOLOQUEUE_AGENT": "nobody"}, ["graph", "recall", "--keywords", "release", "-f", "json"]),
    ({"SOLOQUEUE_AGENT": "nobody"}, ["graph", "recall", "--keywords", "release", "-a", "default"]),
    ({"SOLOQUEUE_GROUP": "", "SOLOQUEUE_SESSION": "s1"}, ["graph", "recall", "--keywords", "x"]),
]


@pytest.mark.parametrize("argv", RECALLS)
def test_fast_and_typer_recall_agree(tmp_path, argv):
    _recall_agrees(tmp_path, argv, {})


@pytest.mark.parametrize(("variables", "argv"), RECALL_ENV_CASES)
def test_fast_and_typer_recall_agree_on_the_environment(tmp_path, variables, argv):
    _recall_agrees(tmp_path, argv, variables)


def _recall_agrees(tmp_path: Path, argv: list[str], variables: dict[str, str]) -> None:
    parsed = parse_argv(argv, GRAPH_RECALL)
    assert parsed is not None
    results = []
    for name, prefix in (
        ("fast", [sys.executable, "-m", "soloqueue_mem"]),
        ("typer", [sys.executable, "-c", TYPER_ONLY]),
    ):
        cwd = tmp_path / name
        cwd.mkdir()
        home = cwd / ".soloqueue"
        Home(home).ensure()
        stored = run(prefix, ["graph", "remember", "--sync"], MESSAGES, cwd, home)
        assert stored[0] == 0, stored
        results.append(run(prefix, argv, b"", cwd, home, variables))
    assert results[0] == results[1]


@pytest.mark.parametrize(
    "argv",
    [
        ["graph", "recall"],
        ["graph", "recall", "--keywords", "x", "--depth", "two"],
        ["graph", "recall", "--keywords", "x", "--limit="],
        ["graph", "recall", "--keywords", "x", "extra"],
    ],
)
def test_recall_calls_typer_must_judge_go_to_typer(argv):
    from soloqueue_mem.cli.fast import _graph_recall_valid

    parsed = parse_argv(argv, GRAPH_RECALL)
    assert parsed is None or not _graph_recall_valid(parsed)
