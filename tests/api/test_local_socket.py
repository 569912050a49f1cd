"""``serve``'s unix socket, bound safely, and what a ``recall`` client makes of answers
(the whole hand-over on PostgreSQL: tests/pg/test_forward.py)."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from soloqueue_mem.api.local_socket import fingerprint, listen, post, relayed, socket_path
from soloqueue_mem.config import Config


@pytest.fixture
def root() -> Iterator[Path]:
    """A private folder with a short path (a unix socket's path holds 107 bytes)."""
    folder = Path(tempfile.mkdtemp(prefix="sqsock-"))
    os.chmod(folder, 0o700)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_stale_socket_is_replaced_a_live_one_is_left_to_its_server(root: Path) -> None:
    path = socket_path(root)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(path)  # never listened on, as after a kill -9
    stale.close()
    first, why = listen(root)
    assert first is not None and why is None
    second, why = listen(root)
    assert second is None and why == f"another serve listens on {path}; recall forwards to that one"
    first.sock.close()
    first.remove()
    assert not os.path.exists(path)


def test_a_socket_file_is_removed_only_by_the_server_that_bound_it(root: Path) -> None:
    first, _ = listen(root)
    assert first is not None
    first.sock.close()  # stale now: the next server replaces it
    second, _ = listen(root)
    assert second is not None
    first.remove()
    assert os.path.exists(second.path)
    second.sock.close()
    second.remove()
    assert not os.path.exists(second.path)


def test_a_symlink_or_a_file_there_is_left_alone(root: Path, tmp_path: Path) -> None:
    path = socket_path(root)
    target = tmp_path / "elsewhere"
    target.write_text("keep")
    os.symlink(target, path)
    made, why = listen(root)
    assert made is None and why == (
        f"{path} exists and is not a socket: left alone, recall will not forward here"
    )
    os.unlink(path)
    Path(path).write_text("a file")
    assert listen(root)[0] is None
    assert target.read_text() == "keep" and Path(path).read_text() == "a file"


def test_no_socket_in_a_folder_others_can_enter_or_behind_a_long_path(root: Path) -> None:
    os.chmod(root, 0o750)
    made, why = listen(root)
    assert made is None and why == f"data directory {root} is not private (0700): no serve.sock"
    os.chmod(root, 0o700)
    deep = root / ("d" * 100)
    deep.mkdir(mode=0o700)
    made, why = listen(deep)
    assert made is None and why == (
        f"{deep}/serve.sock is too long for a unix socket; recall will not forward here"
    )
    assert not os.listdir(root / ("d" * 100))


def test_the_fingerprint_changes_with_config_url_locale_and_a_pinned_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SOLOQUEUE_NOW", raising=False)
    url = "postgresql://h/db"
    base = fingerprint(Config(), url)
    assert base == fingerprint(Config(), url)
    others = {
        fingerprint(Config(busy_timeout_ms=9000), url),
        fingerprint(Config(), "postgresql://h/other"),
    }
    monkeypatch.setenv("LANG", "en_US.UTF-8")  # language = "auto": the locale's
    others.add(fingerprint(Config(), url))
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-26T08:00:00Z")
    others.add(fingerprint(Config(), url))
    assert base not in others and len(others) == 4


def test_only_the_users_own_mistakes_are_relayed() -> None:
    error = {"error": {"code": "bad_input", "message": "--limit must be…", "exit_code": 65}}
    made = relayed(422, error)
    assert made is not None
    assert (made.code, str(made), made.exit_code) == ("bad_input", "--limit must be…", 65)
    assert relayed(400, {"error": {**error["error"], "code": "usage", "exit_code": 2}})
    for status in (409, 413, 404, 500, 503):
        assert relayed(status, error) is None
    assert relayed(422, {"error": {"code": "bad_input", "message": "x"}}) is None
    assert relayed(422, ["not", "an", "object"]) is None


def test_no_server_no_answer(root: Path) -> None:
    assert post(socket_path(root), "/api/v1/recall", {"query": "x"}, "print") is None
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(socket_path(root))
    stale.close()
    assert post(socket_path(root), "/api/v1/recall", {"query": "x"}, "print") is None


def test_a_server_that_accepts_but_never_answers_is_given_up_on(root: Path) -> None:
    """A stopped serve (kill -STOP): the kernel still accepts, nobody answers. The
    client gives up after the second it waits for 100 Continue, not the 120 s an
    answer may take (the join's 30 s only keeps a failure from hanging the run)."""
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    silent.bind(socket_path(root))
    silent.listen(1)
    answers: list[object] = []
    try:
        asking = threading.Thread(
            target=lambda: answers.append(post(socket_path(root), "/api/v1/recall", {}, "p")),
            daemon=True,
        )
        asking.start()
        asking.join(timeout=30)
        assert answers == [None]
    finally:
        silent.close()
