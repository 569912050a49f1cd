"""Issue 30, "Smaller" (L2, L3, L4, L7, L8, L12): each defect through the real program.

NaN and infinities are refused wherever a number is parsed; a save's staging file
survives a ``gc --deep --grace 0s``; nothing stored drives a terminal; the hook queues
a prompt when memory.db is busy and never recalls the prompt it logs; a bad option value
is exit 2 everywhere; ``log --batch`` is idempotent without event ids and says what it
committed when interrupted; a data directory that does not exist is exit 66.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli, DbHolder, run_process

EX_USAGE, EX_NOINPUT = 2, 66
SESSION = "7f3c2a9e-1b4d-4c8e-9a51-2d6f0e8b4c17"
HOOKS = Path(__file__).parent.parent / "data" / "claude_code" / "hooks"
HOSTILE = "see \x1b]52;c;ZXZpbA==\x07 then \x1b[2J and \u009b31m and \x9b end"
RAW = (b"\x1b]52", b"\x1b[2J", "\u009b".encode())


def ok(*args: str, input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    done = run_process(*args, input=input)
    assert done.returncode == 0, (args, done.stderr.decode())
    return done


def one_error_line(done: subprocess.CompletedProcess[bytes]) -> str:
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]


def leaf_commands() -> list[tuple[list[str], Any, list[str]]]:
    """Every command of the app: its words, its Click command, and values for its
    required parameters."""
    import typer.main

    from soloqueue_mem.cli.app import build_app

    found = []

    def walk(command: Any, words: list[str]) -> None:
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk(sub, [*words, name])
            return
        required = []
        for param in command.params:
            if param.required:
                value = "1" if param.type.name == "int" else "x"
                required += [param.opts[0], value] if param.opts[0].startswith("-") else [value]
        found.append((words, command, required))

    walk(typer.main.get_command(build_app()), [])
    return found


def float_options() -> list[tuple[list[str], str, list[str]]]:
    """Every float option of every command: (command words, option, required args)."""
    return [
        (words, param.opts[0], required)
        for words, command, required in leaf_commands()
        for param in command.params
        if "float" in type(param.type).__name__.lower()
    ]


# -- L2 ---------------------------------------------------------------------------------


def test_l2_nan_refused(home: Path, cli: Cli) -> None:
    ok("init")
    options = float_options()
    assert {option for _, option, _ in options} >= {
        "--ephemeral-days",
        "--time-budget",
        "--importance",
        "--confidence",
        "--margin",
    }
    for words, option, required in options:
        for value in ("nan", "inf", "-inf", "NaN"):
            result = cli(*words, *required, option, value)
            assert result.exit_code == EX_USAGE, (words, option, value, result.stderr)
            assert result.stdout == "" and result.stderr.count("\n") == 1
            assert result.stderr.startswith(f"error: Invalid value for '{option}'"), result.stderr
    # config values: refused as the bad input they are (exit 65), one line naming the key
    for setting in (
        "gc_ephemeral_days = nan",
        "graph_time_slice = inf",
        "recall_weight_relevance = nan",
    ):
        (home / "config.toml").write_text(setting + "\n")
        done = run_process("gc")
        assert done.returncode == 65 and setting.split()[0] in one_error_line(done)


# -- L3 ---------------------------------------------------------------------------------


def test_l3_save_survives_deep_gc_with_no_grace(home: Path) -> None:
    ok("init")
    # With redaction on, text is read whole before it is staged: the race needs a save
    # that streams.
    (home / "config.toml").write_text("redact = false\n")
    save = subprocess.Popen(
        [sys.executable, "-m", "soloqueue_mem", "--format", "json", "artifact", "save", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert save.stdin is not None
    save.stdin.write(b"first half\n")
    save.stdin.flush()
    staging = home / "artifacts" / "tmp"
    deadline = time.monotonic() + 60
    while not (staging.exists() and any(staging.iterdir())):  # the save is staging
        assert save.poll() is None, save.stderr.read()  # type: ignore[union-attr]
        assert time.monotonic() < deadline, "the save never staged its input"
    later = {"SOLOQUEUE_NOW": "2030-01-01T00:00:00Z"}  # the staging file is old to gc
    gc = run_process("--format", "json", "gc", "--deep", "--grace", "0s", "--force", env=later)
    assert gc.returncode == 0, gc.stderr.decode()
    assert json.loads(gc.stdout)["phase2"]["temp_files"] == 0  # the live one is left
    out, err = save.communicate(b"second half\n", timeout=60)
    assert save.returncode == 0, err.decode()
    saved = json.loads(out)
    assert ok("artifact", "read", saved["id"]).stdout == b"first half\nsecond half\n"
    assert list(staging.iterdir()) == []


# -- L4 ---------------------------------------------------------------------------------


def on_a_terminal(*args: str) -> tuple[int, bytes]:
    """The program with stdout on a pseudo-terminal: its exit status and what it printed."""
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "soloqueue_mem", *args],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=subprocess.PIPE,
        env={**os.environ, "COLUMNS": "200"},
    )
    os.close(slave)
    printed = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the program closed the terminal
            break
        if not chunk:
            break
        printed += chunk
    os.close(master)
    proc.communicate(timeout=60)
    return proc.returncode, printed


def test_l4_terminal_output_sanitised(home: Path) -> None:
    event = {"role": "user", "content": HOSTILE, "metadata": {"note": HOSTILE}}
    ok("log", "--session", "s1", input=json.dumps(event).encode())
    ok("remember", "--type", "FACT", HOSTILE)
    ok("kv", "set", "k", json.dumps(HOSTILE))
    ok("artifact", "save", "-", "--title", HOSTILE, input=HOSTILE.encode())
    commands = [
        ("session", "export", "s1", "--as", "md"),
        ("session", "export", "s1"),
        ("session", "export", "s1", "--as", "openai"),
        ("session", "show", "s1"),
        ("trace", "see"),
        ("recall", "see"),
        ("memory", "list"),
        ("kv", "get", "k"),
        ("artifact", "list"),
        ("artifact", "read", "1"),
    ]
    for command in commands:
        for fmt in ("auto", "json", "jsonl", "text"):
            code, printed = on_a_terminal("--format", fmt, *command)
            assert code == 0, (command, fmt)
            assert not [raw for raw in RAW if raw in printed], (command, fmt, printed)
    # JSON escapes C1 controls in a pipe too, and stays valid JSON with the text intact
    done = ok("--format", "json", "trace", "see")
    assert b"\\u009b31m" in done.stdout and "\u009b".encode() not in done.stdout
    assert json.loads(done.stdout)[0]["content"] == HOSTILE


# -- L7 ---------------------------------------------------------------------------------


def hook(name: str, **changes: Any) -> subprocess.CompletedProcess[bytes]:
    payload = {**json.loads((HOOKS / f"{name}.json").read_text()), **changes}
    # the default group, where `remember` and `session show` look (not the project's)
    done = run_process("hook", "claude", "--group", "default", input=json.dumps(payload).encode())
    assert done.returncode == 0
    return done


def test_l7_busy_store_queues_the_prompt(home: Path) -> None:
    ok("init")
    (home / "config.toml").write_text("busy_timeout_ms = 200\n")
    with DbHolder(home / "memory.db"):
        done = hook("UserPromptSubmit", prompt="the staging deploy needs a rollback plan")
        assert done.stdout == b""
        found = json.loads(ok("--format", "json", "trace", "rollback").stdout)
        assert [hit["content"] for hit in found] == ["the staging deploy needs a rollback plan"]
    hook("UserPromptSubmit", prompt="and a smoke test after it")
    shown = json.loads(ok("--format", "json", "session", "show", SESSION).stdout)["turns"]
    assert [(t["turn_index"], t["content"]) for t in shown] == [
        (0, "the staging deploy needs a rollback plan"),
        (1, "and a smoke test after it"),
    ]
    assert ok("--format", "json", "verify").returncode == 0


def test_l7_hook_recall_skips_its_own_prompt(home: Path) -> None:
    ok("remember", "--type", "FACT", "the checkout service runs on PostgreSQL 16")
    (home / "config.toml").write_text("hook_recall = true\n")
    prompt = "why does the checkout service time out on PostgreSQL?"
    done = hook("UserPromptSubmit", prompt=prompt)
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "runs on PostgreSQL 16" in context
    assert "time out" not in context
    again = hook("UserPromptSubmit", prompt="checkout PostgreSQL again")
    assert "time out" in json.loads(again.stdout)["hookSpecificOutput"]["additionalContext"]


# -- L8 ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("trace", "x", "--limit", "-5"),
        ("trace", "x", "--limit", "5000"),
        ("recall", "x", "--limit", "0"),
        ("recall", "x", "--max-tokens", "0"),
        ("recall", "x", "--channels", "nosuch"),
        ("artifact", "list", "--limit", "-1"),
        ("attachment", "list", "--limit", "0"),
        ("memory", "list", "--limit", "-1"),
        ("working", "list", "--limit", "0"),
    ],
)
def test_l8_bad_option_values_exit_2(home: Path, args: tuple[str, ...]) -> None:
    ok("init")
    done = run_process(*args)
    assert done.returncode == EX_USAGE and done.stdout == b""
    one_error_line(done)
    as_json = run_process("--format", "json", *args)
    assert as_json.returncode == EX_USAGE
    assert json.loads(as_json.stderr)["error"]["code"] == "usage"


def test_l8_session_export_takes_the_global_format(home: Path) -> None:
    ok("log", "--session", "s1", "hello")
    records = [
        json.loads(line) for line in ok("session", "export", "s1", "-f", "json").stdout.splitlines()
    ]
    assert [r["content"] for r in records] == ["hello"]
    missing = run_process("session", "export", "nope", "-f", "json")
    assert missing.returncode == 3 and json.loads(missing.stderr)["error"]["code"] == "not_found"
    old = ok("session", "export", "s1", "-f", "md")  # the old spelling of --as still works
    assert old.stdout.startswith(b"# Session s1") and b"deprecated" in old.stderr


# -- L12 --------------------------------------------------------------------------------


def test_l12_batch_rerun_adds_nothing(home: Path) -> None:
    lines = [
        {"role": "user", "content": "yes"},
        {"role": "user", "content": "yes"},  # said twice: two turns
        {"role": "assistant", "content": "done", "timestamp": "2026-11-20T10:00:00Z"},
        {"role": "user", "content": "thanks", "session": "other"},
    ]
    batch = "".join(json.dumps(line) + "\n" for line in lines).encode()
    first = json.loads(ok("log", "--batch", "--session", "s1", input=batch).stdout)
    assert (first["logged"], first["duplicates"]) == (4, 0)
    again = json.loads(ok("log", "--batch", "--session", "s1", input=batch).stdout)
    assert (again["logged"], again["duplicates"]) == (4, 4)
    longer = batch + json.dumps({"role": "user", "content": "yes"}).encode() + b"\n"
    grown = json.loads(ok("log", "--batch", "--session", "s1", input=longer).stdout)
    assert (grown["logged"], grown["duplicates"]) == (5, 4)
    turns = json.loads(ok("--format", "json", "session", "show", "s1").stdout)["turns"]
    assert [t["content"] for t in turns] == ["yes", "yes", "done", "yes"]
    elsewhere = json.loads(ok("log", "--batch", "--session", "s2", input=batch).stdout)
    assert elsewhere["duplicates"] == 1  # only the line naming its own session "other"


def test_l12_ctrl_c_reports_committed_lines(home: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "soloqueue_mem", "--format", "jsonl", "log", "--batch", "-s", "s1"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # as at a terminal: a suite started in the background inherits SIGINT ignored
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdin is not None and proc.stdout is not None
    for text in ("one", "two"):
        proc.stdin.write(json.dumps({"role": "user", "content": text}).encode() + b"\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["content"] == text  # committed
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err.decode().splitlines() == [
        "interrupted: 2 line(s) committed (logging the same file again adds only the others)"
    ]


MAY_CREATE = {"init", "log", "hook", "remember", "mcp", "serve", "import", "path", "demo"}
NO_STORE_AT_ALL = {"completion", "context build"}  # they never look for one
NEEDED = {"index": ["--embed"]}  # what a command needs besides its required parameters


def test_l12_missing_store_refused(tmp_path: Path, cli: Cli) -> None:
    typo = tmp_path / "typo" / ".soloqueue"
    refused = 0
    for words, _, required in leaf_commands():
        name = " ".join(words)
        if words[0] in MAY_CREATE or name in NO_STORE_AT_ALL:
            continue
        argv = [*words, *required, *NEEDED.get(name, [])]
        result = cli("--root", str(typo), *argv, env={"EDITOR": "false"})
        assert result.exit_code == EX_NOINPUT, (name, result.exit_code, result.stderr)
        assert result.stdout == "" and result.stderr.count("\n") == 1, name
        assert result.stderr.startswith(f"error: no data directory at {typo} "), name
        refused += 1
    assert refused > 50
    for command in (("trace", "x"), ("recall", "x"), ("graph", "recall", "--keywords", "x")):
        done = run_process("--root", str(typo), "--format", "json", *command)  # fast paths
        assert done.returncode == EX_NOINPUT
        assert json.loads(done.stderr)["error"]["code"] == "no_store"
    assert not (tmp_path / "typo").exists()
    assert ok("--root", str(typo), "path").stdout.decode().strip() == str(typo)
    assert ok("demo").returncode == 0
    ok("--root", str(typo), "log", "--session", "s1", "hello")  # a writer creates it
    assert ok("--root", str(typo), "--format", "json", "stats").returncode == 0
