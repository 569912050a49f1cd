"""The Typer-free parser for plain `artifact save` calls behaves exactly like the Typer
command: same stdout, stderr, exit status and stored blobs and rows."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from soloqueue_mem.cli.fast import SAVE, parse_argv
from soloqueue_mem.home import Home
from tests.e2e.test_fast_log import TYPER_ONLY

# Every test here works in a data directory that exists (see the store fixture).
pytestmark = pytest.mark.usefixtures("store")

PAYLOAD = b"artifact payload \x00\xff\n" * 300


@pytest.mark.parametrize(
    "argv",
    [
        ["artifact", "save"],
        ["artifact", "save", "a", "b"],
        ["artifact", "save", "--help"],
        ["artifact", "save", "-h", "f"],
        ["artifact", "--root", "r", "save", "f"],
        ["artifact", "list"],
        ["artifact", "save", "f", "--tag"],
        ["artifact", "save", "--nope", "f"],
        ["artifact", "save", "-tfoo", "f"],
        ["artifact", "save", "-t=foo", "f"],
        ["artifact", "save", "--quiet", "f"],
        ["artifact", "save", "--format", "yaml", "f"],
        ["-t", "x", "artifact", "save", "f"],
        ["save", "f"],
    ],
)
def test_anything_unusual_goes_to_typer(argv):
    assert parse_argv(argv, SAVE) is None


def run(
    prefix: list[str],
    argv: list[str],
    stdin: bytes,
    cwd: Path,
    home: Path,
    variables: dict[str, str] | None = None,
):
    env = {**os.environ, **(variables or {}), "SOLOQUEUE_HOME": str(home)}
    done = subprocess.run(
        [*prefix, *argv],
        input=stdin,
        capture_output=True,
        check=False,
        timeout=60,
        env=env,
        cwd=cwd,
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def stored(home: Path) -> tuple[list[str], list[tuple]]:
    """The blob files and the catalog rows: what the call left in the store."""
    blobs = sorted(
        p.relative_to(home).as_posix() for p in (home / "artifacts").rglob("*") if p.is_file()
    )
    if not (home / "artifacts.db").exists():
        return blobs, []
    with sqlite3.connect(home / "artifacts.db") as conn:
        rows = conn.execute("SELECT * FROM artifacts ORDER BY id").fetchall()
        tags = conn.execute("SELECT * FROM artifact_tags ORDER BY artifact_id, tag").fetchall()
    return blobs, rows + tags


CASES = [
    [["artifact", "save", "payload.bin"]],
    [
        [
            "--format",
            "json",
            "artifact",
            "save",
            "--title",
            "标题 title",
            "--tag",
            "b:two",
            "-t",
            "a:one",
            "-g",
            "grp",
            "--author",
            "me",
            "--mime",
            "text/plain",
            "payload.bin",
        ]
    ],
    [["artifact", "save", "--format=JSONL", "--tag=user:persistent", "--title=", "payload.bin"]],
    [["-q", "artifact", "save", "-"]],
    [["--format", "json", "artifact", "save", "--", "-dash.bin"]],
    [["artifact", "save", "--title", "--tag", "payload.bin"]],
    [["artifact", "save", "payload.bin", "--root", "elsewhere", "-f", "jsonl"]],
    [["artifact", "save", "payload.bin"], ["artifact", "save", "-t", "x", "copy.bin"]],
    [["--format", "table", "artifact", "save", "payload.bin"]],
    [["--format", "text", "artifact", "save", "payload.bin"]],
    [["artifact", "save", "no-such-file"]],
    [["artifact", "save", "."]],
    [["--format", "json", "artifact", "save", "--tag", "has space", "payload.bin"]],
    [["artifact", "save", "--group", "../x", "payload.bin"]],
    [["artifact", "save", "-g", "", "payload.bin"]],
]


@pytest.mark.parametrize("calls", CASES)
def test_fast_and_typer_paths_agree(tmp_path, calls):
    _agree(tmp_path, calls)


@pytest.mark.parametrize(
    ("variables", "argv"),
    [
        ({"SOLOQUEUE_GROUP": "env-g"}, ["--format", "json", "artifact", "save", "payload.bin"]),
        ({"SOLOQUEUE_GROUP": "env-g"}, ["artifact", "save", "-g", "opt-g", "payload.bin"]),
        ({"SOLOQUEUE_GROUP": ""}, ["artifact", "save", "payload.bin"]),
        ({"SOLOQUEUE_GROUP": "../x"}, ["artifact", "save", "payload.bin"]),
    ],
)
def test_fast_and_typer_paths_agree_on_the_environment(tmp_path, monkeypatch, variables, argv):
    """The scope variable as in every other command (issue 15 §14, §23)."""
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    _agree(tmp_path, [argv])


def _agree(tmp_path: Path, calls: list[list[str]]) -> None:
    for argv in calls:
        assert parse_argv(argv, SAVE) is not None, f"{argv} should take the fast path"
    results = []
    for name, prefix in (
        ("fast", [sys.executable, "-m", "soloqueue_mem"]),
        ("typer", [sys.executable, "-c", TYPER_ONLY]),
    ):
        cwd = tmp_path / name
        cwd.mkdir()
        for file in ("payload.bin", "copy.bin", "-dash.bin"):
            (cwd / file).write_bytes(PAYLOAD)
        home = cwd / ".soloqueue"
        for store in (home, cwd / "elsewhere"):
            Home(store).ensure()
        outputs = [run(prefix, argv, PAYLOAD, cwd, home) for argv in calls]
        results.append((outputs, stored(home), stored(cwd / "elsewhere")))
    assert results[0] == results[1]
    assert results[0][0][0][0] in (0, 3, 65), results[0]


def test_a_plain_save_never_imports_typer(tmp_path):
    source = tmp_path / "payload.bin"
    source.write_bytes(PAYLOAD)
    probe = (
        "import sys, json; sys.argv = ['soloqueue-mem', '--format', 'json', 'artifact', 'save',"
        f" {str(source)!r}];"
        "import soloqueue_mem.cli as c\ntry: c.main()\nexcept SystemExit: pass\n"
        "sys.stderr.write(json.dumps('typer' in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, check=False, timeout=60
    )
    assert json.loads(done.stdout)["size"] == len(PAYLOAD)
    assert json.loads(done.stderr.decode().splitlines()[-1]) is False
