"""The Typer-free parser for plain `log` calls behaves exactly like the Typer command."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from soloqueue_mem.cli.fast import LOG, parse_argv

TYPER_ONLY = (
    "import sys; from soloqueue_mem.cli.app import build_app;"
    " sys.argv[0] = 'soloqueue-mem'; build_app()()"
)


@pytest.mark.parametrize(
    "argv",
    [
        ["log", "--help"],
        ["log", "--role", "wizard", "x"],
        ["log", "--nope", "x"],
        ["log", "a", "b"],
        ["log", "--session"],
        ["-qf", "json", "log", "x"],
        ["trace", "x"],
        ["--version"],
        [],
        ["log", "-rs", "user", "x"],
        ["log", "-r=user", "x"],
        ["log", "--batch=1"],
    ],
)
def test_anything_unusual_goes_to_typer(argv):
    assert parse_argv(argv, LOG) is None


def run(prefix: list[str], argv: list[str], stdin: str | None, env: dict[str, str] | None = None):
    done = subprocess.run(
        [*prefix, *argv],
        input=(stdin or "").encode(),
        capture_output=True,
        check=False,
        timeout=60,
        env=env,
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


CASES = [
    (["log", "-s", "s1", "hello"], None),
    (["--format", "json", "log", "--session=s1", "--role=assistant", "--", "-not an option"], None),
    (
        ["-q", "log", "-s", "s1", "-r", "tool", "--event-id", "e1", "--metadata", '{"k": 1}', "x"],
        None,
    ),
    (["log", "-s", "s1", "--event-id", "e1", "again"], None),
    (["log", "-s", "s1", "--format", "JSONL", "-g", "g", "-a", "a", "text"], None),
    (["log", "-s", "s1"], '{"role": "user", "content": "from stdin"}'),
    (
        ["log", "--batch", "-f", "jsonl", "-s", "b"],
        '{"role": "user", "content": "one"}\n{"bad": 1}\n',
    ),
    (["log", "-s", "../x", "hostile"], None),
    (["log", "-s", "s1", "--metadata", "[1]", "x"], None),
    (["log", "-s", "s1", "-"], "text on stdin"),
    (["log", "x"], None),
    (["log", "--session", "", "x"], None),
    (["log", "--batch", "-s", "b"], '{"role": "user", "content": "one"}\n'),  # a summary
    (["log", "--batch", "--echo", "-s", "b"], '{"role": "user", "content": "one"}\n'),
]
# The scope variables, alone and beside the options that override them (issue 15 §23).
ENV_CASES = [
    ({"SOLOQUEUE_SESSION": "env-s"}, ["log", "hi"]),
    ({"SOLOQUEUE_SESSION": "env-s"}, ["log", "-s", "opt-s", "hi"]),
    ({"SOLOQUEUE_SESSION": ""}, ["log", "hi"]),
    ({"SOLOQUEUE_SESSION": "env-s"}, ["log", "--session", "", "hi"]),
    ({"SOLOQUEUE_GROUP": "g1", "SOLOQUEUE_AGENT": "a1"}, ["log", "-s", "s", "hi"]),
    ({"SOLOQUEUE_GROUP": "g1", "SOLOQUEUE_AGENT": "a1"}, ["log", "-s", "s", "-g", "g2", "hi"]),
    ({"SOLOQUEUE_AGENT": "../bad"}, ["log", "-s", "s", "hi"]),
]


@pytest.mark.parametrize(("argv", "stdin"), CASES)
def test_fast_and_typer_paths_agree(tmp_path, argv, stdin, monkeypatch):
    _agree(tmp_path, argv, stdin, {})


@pytest.mark.parametrize(("variables", "argv"), ENV_CASES)
def test_fast_and_typer_paths_agree_on_the_environment(tmp_path, variables, argv):
    _agree(tmp_path, argv, None, variables)


def _agree(tmp_path, argv: list[str], stdin: str | None, variables: dict[str, str]) -> None:
    assert parse_argv(argv, LOG) is not None, "this case should take the fast path"
    results = []
    for name, prefix in (
        ("fast", [sys.executable, "-m", "soloqueue_mem"]),
        ("typer", [sys.executable, "-c", TYPER_ONLY]),
    ):
        home = tmp_path / name / ".soloqueue"
        env = {**__import__("os").environ, **variables, "SOLOQUEUE_HOME": str(home)}
        code, out, err = run(prefix, argv, stdin, env)
        logs = (
            sorted(
                p.relative_to(home).as_posix() + ":" + p.read_text() for p in home.rglob("*.jsonl")
            )
            if home.exists()
            else []
        )
        results.append((code, out, err, logs))
    assert results[0] == results[1]


def run_main(argv: list[str], env: dict[str, str] | None = None) -> tuple[int, str, bool]:
    """The CLI's ``main`` in a fresh interpreter: (exit status, stdout, whether Typer
    was imported)."""
    probe = (
        "import json, sys; sys.argv = ['soloqueue-mem', *json.loads(sys.argv[1])]\n"
        "import soloqueue_mem.cli as c\ncode = 0\n"
        "try: c.main()\nexcept SystemExit as e: code = e.code\n"
        "sys.stderr.write('\\n' + json.dumps([code, 'typer' in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, json.dumps(argv)],
        capture_output=True,
        check=False,
        timeout=60,
        env=env,
    )
    code, typer_loaded = json.loads(done.stderr.decode().splitlines()[-1])
    return code, done.stdout.decode(), typer_loaded


def test_a_plain_log_never_imports_typer(home):
    assert run_main(["log", "-s", "s", "hi"])[2] is False


def test_version_takes_the_fast_path_and_prints_what_typer_prints():
    code, out, typer_loaded = run_main(["--version"])
    assert not typer_loaded
    assert (code, out, "") == run([sys.executable, "-c", TYPER_ONLY], ["--version"], None)
