"""The Typer-free parser for plain `trace` and `recall` calls behaves exactly like the
Typer commands: same stdout, stderr and exit status on the same store."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from soloqueue_mem.cli.fast import RECALL, TRACE, parse_argv
from tests.e2e.test_fast_log import TYPER_ONLY, run_main

NOW = "2026-03-02T10:00:00Z"
TURNS = [
    ("s1", "user", "I moved the deploy to Friday because the database migration is slow"),
    ("s1", "assistant", "好的，数据库迁移改到周五，部署也顺延"),
    ("s2", "user", "my sister booked the flight to Chengdu for the holiday"),
    ("s2", "tool", "error: connection refused while querying the database server"),
]


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["trace", "--help"], TRACE),
        (["trace"], TRACE),
        (["trace", "a", "b"], TRACE),
        (["trace", "x", "--limit", "ten"], TRACE),
        (["trace", "x", "-n5"], TRACE),
        (["trace", "x", "--role", "wizard"], TRACE),
        (["trace", "x", "--role", "USER"], TRACE),
        (["trace", "x", "--format", "yaml"], TRACE),
        (["trace", "x", "--traces"], TRACE),
        (["recall", "x", "--max-tokens", "1.5"], RECALL),
        (["recall", "x", "--traces=1"], RECALL),
        (["recall", "x", "--no-traces"], RECALL),
        (["recall", "x", "--since"], RECALL),
        (["recall", "x", "--type", "NOPE"], RECALL),  # a Click choice: Typer's exit 2
        (["-qf", "json", "recall", "x"], RECALL),
    ],
)
def test_anything_unusual_goes_to_typer(argv, command):
    assert parse_argv(argv, command) is None


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    home = tmp_path_factory.mktemp("search") / ".soloqueue"
    env = {**os.environ, "SOLOQUEUE_HOME": str(home), "SOLOQUEUE_NOW": NOW}
    for session, role, text in TURNS:
        done = subprocess.run(
            [sys.executable, "-m", "soloqueue_mem", "log", "-s", session, "-r", role, text],
            env=env,
            capture_output=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    done = subprocess.run(
        [sys.executable, "-m", "soloqueue_mem", "-f", "json", "remember", "我的编辑器是 Helix"],
        env=env,
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return home


CASES = [
    (["trace", "database"], {}),
    (["--format", "json", "trace", "database", "--limit", "2"], {}),
    (["trace", "数据库迁移", "-f", "jsonl", "-s", "s1", "-r", "assistant"], {}),
    (["trace", "flight", "--since", "1d", "--format=text"], {}),
    (["trace", "flight", "-g", "other", "-f", "json"], {}),
    (["trace", "flight", "-f", "json"], {"SOLOQUEUE_GROUP": "other"}),
    (["trace", "flight", "-f", "json", "--group", ""], {"SOLOQUEUE_GROUP": "other"}),
    (["trace", "database", "-f", "json"], {"SOLOQUEUE_AGENT": "nobody"}),
    (["trace", "database", "-f", "json", "-a", "default"], {"SOLOQUEUE_AGENT": "nobody"}),
    (["trace", "database", "-f", "json"], {"SOLOQUEUE_SESSION": "s2"}),  # trace ignores it
    (["trace", "database", "-f", "json"], {"SOLOQUEUE_GROUP": "", "SOLOQUEUE_AGENT": ""}),
    (["trace", "database", "-n", "0", "-f", "json"], {}),
    (["trace", "x", "-s", "../up", "-f", "json"], {}),
    (["trace", "-", "-f", "json"], {"STDIN": "database"}),
    (["recall", "database migration", "-f", "json"], {}),
    (["recall", "编辑器", "--format", "json", "--explain"], {}),
    (["recall", "database", "--traces", "-f", "jsonl", "-n", "2"], {}),
    (["recall", "database", "--channels", "traces,hot", "--max-tokens", "20", "-f", "json"], {}),
    (["-q", "recall", "database", "--max-tokens", "5", "-f", "text"], {}),
    (["recall", "database", "--max-tokens", "5", "-f", "text"], {}),
    (["recall", "database", "--traces", "--channels", "hot"], {}),
    (["recall", "Helix", "--type", "fact", "-f", "json", "--since", "2026-01-01"], {}),
    (["recall", "flight", "-f", "json", "--agent", "a1"], {}),
    (["recall", "database", "-f", "json"], {"SOLOQUEUE_GROUP": "other"}),
    (["recall", "database", "-f", "json", "-g", "default"], {"SOLOQUEUE_GROUP": "other"}),
    (["recall", "database", "-f", "json"], {"SOLOQUEUE_AGENT": "nobody"}),
    (["recall", "database", "-f", "json"], {"SOLOQUEUE_SESSION": "s1"}),
    (["recall", "database", "-f", "json"], {"SOLOQUEUE_AGENT": "../x"}),
    (["--root", "ROOT", "recall", "flight", "-f", "json", "--channels", "nope"], {}),
]


@pytest.mark.parametrize(("argv", "extra"), CASES)
def test_fast_and_typer_paths_agree(store, tmp_path, argv, extra):
    command = TRACE if "trace" in argv else RECALL
    assert parse_argv(argv, command) is not None, "this case should take the fast path"
    extra = dict(extra)
    stdin = extra.pop("STDIN", "")
    results = []
    for name, prefix in (
        ("fast", [sys.executable, "-m", "soloqueue_mem"]),
        ("typer", [sys.executable, "-c", TYPER_ONLY]),
    ):
        home = tmp_path / name / ".soloqueue"  # recall counts accesses: a copy each
        shutil.copytree(store, home)
        env = {**os.environ, "SOLOQUEUE_HOME": str(home), "SOLOQUEUE_NOW": NOW, **extra}
        for variable in ("SOLOQUEUE_GROUP", "SOLOQUEUE_AGENT", "SOLOQUEUE_SESSION"):
            if variable not in extra:
                env.pop(variable, None)
        done = subprocess.run(
            [*prefix, *[str(home) if a == "ROOT" else a for a in argv]],
            input=stdin.encode(),
            env=env,
            capture_output=True,
            check=False,
        )
        results.append(
            (done.returncode, done.stdout.decode(), done.stderr.decode().replace(name, "NAME"))
        )
    assert results[0] == results[1]
    assert results[0][1] or results[0][2] or "-q" in argv  # no vacuous agreement


def test_a_plain_trace_or_recall_never_imports_typer(store):
    env = {**os.environ, "SOLOQUEUE_HOME": str(store), "SOLOQUEUE_NOW": NOW}
    for argv in (["trace", "database"], ["recall", "database"]):
        code, out, typer_loaded = run_main(argv, env)
        assert (code, typer_loaded) == (0, False) and out
