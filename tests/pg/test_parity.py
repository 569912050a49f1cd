"""The same script of commands on SQLite and on PostgreSQL prints the same JSON.

What may differ is normalised first, and only that: scores (BM25 in SQLite, the
share of the query held on PostgreSQL), random memory ids (replaced by their order of
appearance), a recall hit's ``tokens`` (the separator is counted from the second hit
on, so it follows the order), and ``wal_cleared`` of ``memory forget`` (PostgreSQL
cannot promise it).
The hits of ``trace`` and ``recall`` are compared as sets: scored differently, they
may come in another order (and ``memory list`` breaks ties of ``updated_at`` by the
random ids).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli

BATCH = "\n".join(
    json.dumps(line, ensure_ascii=False)
    for line in [
        {"role": "user", "content": "Please build the parser in Rust", "event_id": "e1"},
        {"role": "assistant", "content": "我会用 Rust 写这个解析器", "event_id": "e2"},
        {"role": "user", "content": "Please build the parser in Rust", "event_id": "e1"},
        {"role": "user", "content": "然后在上海开会讨论编译器"},
    ]
)
PROMOTED = "Deploys go out on Fridays.\n\nThe compiler is tested in 上海."

SCRIPT: list[tuple[list[str], str | None]] = [
    (["log", "-s", "s1", "I moved to 上海 last year and work on the compiler"], None),
    (["log", "-s", "s1", "-r", "assistant", "Nice, 上海 is a great city for that"], None),
    (["log", "--batch", "-s", "s2"], BATCH),
    (["trace", "上海"], None),
    (["session", "list"], None),
    (["session", "show", "s2"], None),
    (["session", "export", "s1", "--as", "openai"], None),
    (["trace", "compiler parser", "--role", "user"], None),
    (["trace", "解析器", "-s", "s2"], None),
    (["remember", "--subject", "user", "--predicate", "city", "The user lives in 上海"], None),
    (["remember", "--subject", "user", "--predicate", "city", "The user lives in 北京"], None),
    (["remember", "--type", "PREFERENCE", "--tag", "editor", "The user prefers vim"], None),
    (["remember", "--type", "PREFERENCE", "--tag", "tools", "the user prefers VIM!"], None),
    (["remember", "--type", "ERROR", "--importance", "0.9", "cargo build fails offline"], None),
    (["memory", "list"], None),
    (["memory", "list", "--all"], None),
    (["memory", "list", "--tag", "editor", "--type", "PREFERENCE"], None),
    (["recall", "where does the user live"], None),
    (["recall", "vim", "--channels", "memories"], None),
    (["recall", "compiler", "--traces"], None),
    (["recall", "cargo build", "--type", "ERROR"], None),
    (["working", "add", "-g", "team", "The deploy pipeline now runs on Fridays"], None),
    (["working", "add", "-g", "team", "ok"], None),
    (["working", "add", "-g", "team", "the deploy pipeline now runs on fridays!"], None),
    (["working", "add", "-g", "team", "编译器的新版本在上海测试通过了"], None),
    (["working", "list", "-g", "team"], None),
    (
        ["promote", "-g", "team", "-"],
        "Deploys go out on Fridays.\n\nThe compiler is tested in 上海.",
    ),
    (
        ["promote", "-g", "team", "-"],
        "Deploys go out on Fridays.\n\nThe compiler is tested in 上海.",
    ),
    (["query", "-g", "team", "deploy compiler"], None),
    (["recall", "pipeline Fridays", "-g", "team"], None),
    (["working", "clear", "-g", "team"], None),
    (["query", "-g", "team", "Fridays"], None),
    (["memory", "show", "{m1}"], None),
    (["memory", "history", "{m1}"], None),
    (["memory", "edit", "{m1}", "--tag", "home", "--importance", "0.7"], None),
    (["memory", "restore", "{m1}"], None),
    (["recall", "how do I like my tools", "--channels", "kinds"], None),
    (["recall", "what did we say today about 上海", "--channels", "when"], None),
    (["memory", "forget", "{m1}"], None),
    (["memory", "list", "--all"], None),
    (["recall", "user lives"], None),
    (["remember", "--duration", "session", "a note for this session only"], None),
    (["session", "end", "s1"], None),
    (["episode", "list"], None),
    (["episode", "search", "compiler"], None),
    (["consolidate", "--idle", "1m"], None),
    (["episode", "list", "--session", "s2"], None),
    (["episode", "show", "{episode}"], None),
    (["recall", "compiler 上海", "--channels", "episodes,memories"], None),
    (["memory", "list", "--all"], None),
    (["consolidate", "--idle", "1m"], None),
]
# What a consolidate report holds on both back ends alike (timings and the steps
# PostgreSQL skips are left out).
CONSOLIDATED = ("dry_run", "sessions", "model", "dedup", "decay", "expire", "identity")
_ID = re.compile(r"\b[0-9a-f]{32}\b")


def _run(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    printed: list[Any] = []
    ids: list[str] = []
    episode = ""  # the one `session end` made
    for step, (args, stdin) in enumerate(SCRIPT):
        monkeypatch.setenv("SOLOQUEUE_NOW", f"2026-11-26T08:{step:02d}:00Z")  # a clear order
        named = {f"m{n}": i for n, i in enumerate(ids)}
        filled = [a.format(**named, episode=episode) for a in args]
        result = cli.ok("--format", "json", *filled, input=stdin)
        out = result.stdout
        ids += [i for i in _ID.findall(out) if i not in ids]
        printed.append(
            json.loads(out)
            if out.strip().startswith(("[", "{"))
            else [json.loads(line) for line in out.splitlines()]
        )
        if args[:2] == ["session", "end"]:
            (episode,) = printed[-1]["episodes"]
    return _normalised(printed, ids)


def _normalised(value: Any, ids: list[str]) -> Any:
    if isinstance(value, dict):
        return {
            k: _normalised(v, ids)
            for k, v in value.items()
            if k not in ("score", "tokens", "wal_cleared", "seconds")
        }
    if isinstance(value, list):
        return [_normalised(v, ids) for v in value]
    if isinstance(value, str) and value in ids:
        return f"m{ids.index(value)}"
    return value


def test_the_same_script_prints_the_same_json_on_both_back_ends(
    cli: Cli, home: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    on_sqlite = _run(cli, monkeypatch)
    monkeypatch.setenv("SOLOQUEUE_HOME", str(home.parent / "other-host"))
    monkeypatch.setenv("SOLOQUEUE_DATABASE_URL", database_url)
    on_postgres = _run(cli, monkeypatch)
    assert len(on_sqlite) == len(on_postgres)
    for step, (args, _), lite, pg in zip(
        range(len(SCRIPT)), SCRIPT, on_sqlite, on_postgres, strict=True
    ):
        if args[0] == "consolidate":
            lite, pg = ({k: v[k] for k in CONSOLIDATED} for v in (lite, pg))
        if args[0] in ("trace", "recall") or args[:2] == ["memory", "list"]:
            key = lambda hit: json.dumps(hit, sort_keys=True)  # noqa: E731
            lite, pg = sorted(lite, key=key), sorted(pg, key=key)
        if lite != pg:
            print(step, args, _diff(lite, pg))
        assert lite == pg, (step, args, _diff(lite, pg))
    assert not (home.parent / "other-host" / "memory.db").exists()


def _diff(lite: Any, pg: Any) -> str:
    import difflib

    dump = lambda v: json.dumps(v, indent=1, sort_keys=True, ensure_ascii=False).splitlines()  # noqa: E731
    return "\n".join(difflib.unified_diff(dump(lite), dump(pg), "sqlite", "postgres", n=2))
