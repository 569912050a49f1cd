"""The scratchpad, kv, session variables, context, artifacts, attachments and the Claude
Code hooks on SQLite and on PostgreSQL: one script of commands prints the same JSON and exits
the same way on both (see ``test_parity.py`` for what is normalised, and why)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli
from tests.pg.test_parity import _normalised

PAD = "## 当前项目\n- 编译器\n\n## 下一步\n- 写测试\n"
SCRIPT: list[tuple[list[str], str | None]] = [
    (["scratchpad", "show"], None),
    (["scratchpad", "set", "-"], PAD),
    (["scratchpad", "show"], None),
    (["scratchpad", "show", "-g", "other"], None),
    (["scratchpad", "set", "x" * 2001], None),
    (["kv", "set", "editor", '"vim"'], None),
    (["kv", "set", "width", "120"], None),
    (["kv", "set", "editor", "emacs", "--text"], None),
    (["kv", "set", "Bad Key", "1"], None),
    (["kv", "get", "editor"], None),
    (["kv", "get", "missing"], None),
    (["kv", "list"], None),
    (["kv", "list", "-a", "nobody"], None),
    (["kv", "rm", "width"], None),
    (["kv", "rm", "width"], None),
    (["log", "-s", "s1", "Please build the parser in Rust"], None),
    (["session", "set", "s1", "current_task", "write the parser"], None),
    (["session", "set", "s1", "current_task", "test the parser"], None),
    (["session", "set", "s1", "next_step", "benchmark it"], None),
    (["session", "set", "s1", "budget", '{"hours": 3}', "--json"], None),
    (["session", "get", "s1"], None),
    (["session", "get", "s1", "budget"], None),
    (["session", "get", "s1", "nothing"], None),
    (["scratchpad", "show"], None),
    (["session", "unset", "s1", "budget"], None),
    (["session", "unset", "s1", "budget"], None),
    (["session", "get", "s1"], None),
    (["log", "--batch", "-s", "s2"], "{conversation}"),
    (["context", "build", "-s", "s2", "--max-context", "8000", "--manifest"], None),
    (["context", "build", "-s", "s2", "--max-context", "60"], None),
    (
        ["context", "build", "-s", "s1", "--max-context", "8000", "--with-memory"]
        + ["--query", "editor", "--manifest"],
        None,
    ),
    (["context", "build", "-s", "nope", "--max-context", "8000"], None),
    (["context", "compress", "-s", "s2", "--keep", "2", "--manifest"], None),
    (["context", "compress", "-s", "s2", "--keep", "1", "--manifest"], None),
    (["context", "compress", "-s", "s2", "--keep", "-1"], None),
    (["context", "compress", "-s", "nope"], None),
    (["episode", "list"], None),
    (["memory", "list"], None),
    (["artifact", "save", "-", "--title", "notes", "--tag", "a"], "some bytes"),
    (["artifact", "list"], None),
    (["artifact", "read", "1"], None),
    (["artifact", "tag", "1", "b"], None),
    (["artifact", "rm", "1"], None),
    (["artifact", "show", "1"], None),
    (["attach", "-", "--name", "plan.md", "--tag", "p", "-d", "计划"], "# 计划\n迁移到 Postgres\n"),
    (["attach", "-", "--name", "x.txt", "--direction", "sideways"], "x"),
    (["attachment", "list"], None),
    (["attachment", "list", "--tag", "p", "--direction", "outbound"], None),
]
CONVERSATION = [
    {"role": "user", "content": "What is the timeout in config.toml?"},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "read", "arguments": "{\"path\": \"config.toml\"}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "timeout = 5"},
    {"role": "assistant", "content": "The timeout is 5 seconds."},
    {"role": "user", "content": "My editor is helix. Raise it to 30."},
    {"role": "assistant", "content": "Done."},
]  # fmt: skip
_ID = re.compile(r"\b[0-9a-f]{32}\b")


def _run(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    printed: list[Any] = []
    ids: list[str] = []
    for step, (args, stdin) in enumerate(SCRIPT):
        monkeypatch.setenv("SOLOQUEUE_NOW", f"2026-11-26T08:{step:02d}:00Z")
        if stdin == "{conversation}":
            stdin = "\n".join(json.dumps(m) for m in CONVERSATION) + "\n"
        result = cli("--format", "json", *args, input=stdin)
        out = result.stdout
        ids += [i for i in _ID.findall(out) if i not in ids]
        value = json.loads(out) if out.strip().startswith(("[", "{")) else out
        error = json.loads(result.stderr) if result.exit_code else None
        printed.append({"exit": result.exit_code, "out": value, "error": error})
    return _normalised(printed, ids)


def test_the_same_script_prints_the_same_json_on_both_back_ends(
    cli: Cli, home: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli.ok("init")  # on SQLite the data directory is the store
    on_sqlite = _run(cli, monkeypatch)
    monkeypatch.setenv("SOLOQUEUE_HOME", str(home.parent / "other-host"))
    monkeypatch.setenv("SOLOQUEUE_DATABASE_URL", database_url)
    on_postgres = _run(cli, monkeypatch)
    for (args, _), lite, pg in zip(SCRIPT, on_sqlite, on_postgres, strict=True):
        assert lite == pg, (args, lite, pg)
    assert {r["exit"] for r in on_postgres} == {0, 3, 65}
    other = home.parent / "other-host"
    assert not (other / "memory.db").exists() and not (other / "state.db").exists()
