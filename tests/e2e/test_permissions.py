"""RELIABILITY E3/E4: private modes whatever the umask, unsafe data directories refused,
and the store invisible to git.

Root ignores permission bits when opening files, but the modes we check are what a
second user on the machine would face, and the refusals are our own checks, so both
hold whoever runs the tests.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

EX_IOERR = 74


def run_under_umask(
    umask: int,
    args: str,
    input: bytes | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
):
    script = f'umask {umask:03o}; exec "$PY" -m soloqueue_mem {args}'
    return subprocess.run(
        ["sh", "-c", script],
        input=input,
        capture_output=True,
        cwd=cwd,
        env={**os.environ, "PY": sys.executable, **(env or {})},
        timeout=60,
        check=False,
    )


def modes(top: Path) -> dict[str, str]:
    """``{relative path: octal mode}`` of ``top`` and everything under it (lstat)."""
    found = {".": f"{stat.S_IMODE(os.lstat(top).st_mode):o}"}
    for path in sorted(top.rglob("*")):
        info = os.lstat(path)
        assert not stat.S_ISLNK(info.st_mode), f"unexpected symlink {path}"
        found[str(path.relative_to(top))] = f"{stat.S_IMODE(info.st_mode):o}"
    return found


def assert_private(top: Path) -> None:
    wrong = {}
    for rel, mode in modes(top).items():
        path = top / rel
        want = "700" if path.is_dir() else "600"
        if mode != want:
            wrong[rel] = mode
    assert not wrong, f"not private: {wrong}"


# -- E3: modes under umask 022 and 002 -------------------------------------------------------


@pytest.mark.parametrize("umask", [0o022, 0o002], ids=["umask-022", "umask-002"])
def test_everything_created_is_private_under_any_umask(
    umask: int, home: Path, tmp_path: Path
) -> None:
    created = tmp_path / "store"  # the product creates the root's parent too
    assert not created.exists()
    script = f'umask {umask:03o}; exec "$PY" -m soloqueue_mem log --batch --format jsonl'
    proc = subprocess.Popen(
        ["sh", "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PY": sys.executable},
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for event in (
            {"role": "user", "content": "one", "session": "s1"},
            {"role": "assistant", "content": "two", "session": "s2", "group": "g", "agent": "a"},
        ):
            proc.stdin.write(json.dumps(event).encode() + b"\n")
            proc.stdin.flush()
            ack = proc.stdout.readline()
            assert json.loads(ack)["content"] == event["content"], ack
        # The writer is alive and holds memory.db open: its -wal and -shm exist now.
        for name in ("memory.db-wal", "memory.db-shm"):
            assert (home / name).exists(), name
        assert_private(created)
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == 0

    # A torn tail set aside into <session>.jsonl.torn, and a plain log.
    killed = run_under_umask(
        umask,
        "log -s s1 torn",
        env={"SOLOQUEUE_TESTING": "1", "SOLOQUEUE_FAULT": "log.mid_write:kill"},
    )
    assert killed.returncode == -9
    done = run_under_umask(umask, "log -s s1 after")
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    assert (home / "groups/default/sessions/default/s1.jsonl.torn").exists()
    if umask == 0o002:  # building the segmentation lexicon (a Han query) writes cache/
        done = run_under_umask(umask, "trace 你好")
        assert done.returncode == 0, done.stderr
        assert any((home / "cache").iterdir())
    assert_private(created)
    assert (home / ".gitignore").exists()
    assert {p.name for p in home.glob("groups/*/sessions/*/*")} >= {
        "s1.jsonl",
        "s1.md",
        "s2.jsonl",
        "s2.md",
    }


# -- E3: an unsafe existing data directory is refused --------------------------------------


def _tree(top: Path) -> dict[str, tuple[str, bytes | None]]:
    return {
        str(p.relative_to(top)): (
            f"{stat.S_IMODE(os.lstat(p).st_mode):o}",
            None if p.is_dir() else p.read_bytes(),
        )
        for p in sorted(top.rglob("*"))
    }


def _refused(done: subprocess.CompletedProcess[bytes]) -> str:
    stderr = done.stderr.decode()
    assert done.returncode == EX_IOERR, (done.returncode, stderr)
    assert done.stdout == b""
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in stderr, lines
    return lines[0]


@pytest.mark.parametrize(
    "mode", [0o770, 0o720, 0o707, 0o702, 0o777, 0o1777], ids=lambda m: f"mode-{m:o}"
)
def test_group_or_world_writable_data_directory_is_refused(
    mode: int, home: Path, tmp_path: Path
) -> None:
    home.mkdir(parents=True)
    home.chmod(mode)
    before = _tree(tmp_path)
    for args in ("log -s s hi", "session list", "trace hi"):
        message = _refused(run_under_umask(0o022, args))
        assert str(home) in message
        assert f"chmod 700 {home}" in message, message  # the fix, ready to paste
    assert _tree(tmp_path) == before


def test_symlinked_data_directory_is_refused(home: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    home.parent.mkdir()
    home.symlink_to(target)
    before = _tree(tmp_path)
    for args in ("log -s s hi", "session list"):
        message = _refused(run_under_umask(0o022, args))
        assert "symlink" in message and str(home) in message
        # Naming the fix: the real directory to use instead, or what to do with the link.
        remedies = (str(target), "--root", "SOLOQUEUE_HOME", "remove", "rm ", "replace")
        assert any(r in message for r in remedies), f"no fix named: {message}"
    assert _tree(tmp_path) == before
    assert list(target.iterdir()) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another uid needs root")
def test_data_directory_owned_by_another_user_is_refused(home: Path, tmp_path: Path) -> None:
    home.mkdir(parents=True, mode=0o700)
    os.chown(home, 65534, 65534)
    before = _tree(tmp_path)
    message = _refused(run_under_umask(0o022, "log -s s hi"))
    assert "owned by uid 65534" in message and str(home) in message
    assert _tree(tmp_path) == before


# -- E4: git never sees the store --------------------------------------------------------------


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_store_inside_a_git_work_tree_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git_env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", *args],
            cwd=repo,
            env=git_env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    assert git("init", "-q").returncode == 0
    monkeypatch.delenv("SOLOQUEUE_HOME")  # the store is found as ./.soloqueue
    done = run_under_umask(0o022, "init", cwd=repo)
    assert done.returncode == 0, done.stderr
    done = run_under_umask(0o022, "log -s s hello", cwd=repo)
    assert done.returncode == 0, done.stderr
    store = repo / ".soloqueue"
    assert json.loads(done.stdout)["session"] == "s"
    assert (store / "groups/default/sessions/default/s.jsonl").exists()
    assert "*" in (store / ".gitignore").read_text().split()

    status = git("status", "--porcelain", "--untracked-files=all")
    assert status.returncode == 0, status.stderr
    assert status.stdout == "", status.stdout
    assert git("check-ignore", "-q", ".soloqueue/memory.db").returncode == 0
    added = git("add", "--dry-run", "-A")
    assert ".soloqueue" not in added.stdout
