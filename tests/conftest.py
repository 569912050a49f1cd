"""Shared fixtures: every test gets its own data directory, a pinned clock and no
inherited SOLOQUEUE_* settings; CLI helpers assert exit codes and parse JSON."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

NOW = "2026-11-26T08:00:00Z"


@pytest.fixture(scope="session")
def built_lexicon(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """jieba's dictionary copied into a lexicon once per test run (~1 s)."""
    from soloqueue_mem.text.lexicon import open_lexicon

    folder = tmp_path_factory.mktemp("lexicon")
    open_lexicon(folder).close()
    (path,) = folder.glob("lexicon-*.sqlite3")
    return path


@pytest.fixture(autouse=True)
def isolated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, built_lexicon: Path
) -> Iterator[Path]:
    """A fresh SOLOQUEUE_HOME (not yet created), HOME and cwd under tmp_path."""
    for name in list(os.environ):
        if name.startswith("SOLOQUEUE_"):
            monkeypatch.delenv(name)
    home = tmp_path / "store" / ".soloqueue"
    monkeypatch.setenv("SOLOQUEUE_HOME", str(home))
    monkeypatch.setenv("SOLOQUEUE_NOW", NOW)
    # language = "auto" follows the locale: the suite pins the Chinese one (the fixed
    # strings' original form); tests of English output set their own.
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    # In-process commands copy the prebuilt lexicon instead of rebuilding it.
    import soloqueue_mem.text.lexicon as lexicon

    monkeypatch.setattr(lexicon, "_build_file", lambda path: _copy_private(built_lexicon, path))
    yield home


def _copy_private(source: Path, target: str) -> None:
    from soloqueue_mem.home import make_private_dirs

    make_private_dirs(os.path.dirname(target))
    shutil.copyfile(source, target)
    os.chmod(target, 0o600)


@pytest.fixture
def home(isolated: Path) -> Path:
    return isolated


@pytest.fixture
def store(home: Path) -> Path:
    """``home`` created, as ``init`` or a first ``log`` leaves it: the commands that do
    not create a store refuse a data directory that does not exist (exit 66)."""
    from soloqueue_mem.home import Home

    Home(home).ensure()
    return home


class Cli:
    """Runs the app in-process; stdout and stderr are kept apart.

    Like ``soloqueue_mem.cli.main`` (less its Typer-free fast path), it builds the app
    with only the command being run: converting all of them to Click on every call
    would cost ~65 ms of CPU per call, most of the suite's time."""

    def __init__(self) -> None:
        self.runner = CliRunner()

    def __call__(
        self, *args: str, input: str | bytes | None = None, env: dict[str, str] | None = None
    ) -> Any:
        from soloqueue_mem.cli.app import build_app, command_named

        argv = list(args)
        return self.runner.invoke(
            build_app(command_named(argv)), argv, input=input, env=env, catch_exceptions=False
        )

    def ok(self, *args: str, input: str | bytes | None = None) -> Any:
        result = self(*args, input=input)
        assert result.exit_code == 0, (result.exit_code, result.stdout, result.stderr)
        return result

    def json(self, *args: str, input: str | bytes | None = None) -> Any:
        return json.loads(self.ok("--format", "json", *args, input=input).stdout)

    def jsonl(self, *args: str, input: str | bytes | None = None) -> list[Any]:
        out = self.ok("--format", "jsonl", *args, input=input).stdout
        return [json.loads(line) for line in out.splitlines()]


@pytest.fixture
def cli() -> Cli:
    return Cli()


def run_process(
    *args: str, input: bytes | None = None, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[bytes]:
    """The real program in a subprocess (``python -m soloqueue_mem``)."""
    return subprocess.run(
        [sys.executable, "-m", "soloqueue_mem", *args],
        input=input,
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
        check=False,
    )


def tree_snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (except SQLite's -shm) with its content."""
    if not root.exists():
        return {}
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.endswith("-shm")
    }


_HOLDER = (
    "import sqlite3, sys\n"
    "conn = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
    "if sys.argv[2] == 'exclusive':\n"
    "    conn.execute('PRAGMA locking_mode = EXCLUSIVE')\n"
    "conn.execute('BEGIN IMMEDIATE')\n"
    "conn.execute(sys.argv[3])\n"
    "if sys.argv[2] == 'exclusive':\n"
    "    conn.execute('COMMIT')  # exclusive mode keeps the lock after the commit\n"
    "print('held', flush=True)\n"
    "sys.stdin.read()\n"
)


class DbHolder:
    """Another process holding a write lock on a database until released."""

    def __init__(self, path: Path, mode: str = "immediate", sql: str = "SELECT 1") -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, str(path), mode, sql],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        line = self.proc.stdout.readline()  # type: ignore[union-attr]
        assert line == b"held\n", self.proc.stderr.read()  # type: ignore[union-attr]

    def release(self) -> None:
        if self.proc.returncode is None:
            self.proc.communicate(b"", timeout=10)
            assert self.proc.returncode == 0

    def __enter__(self) -> DbHolder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
