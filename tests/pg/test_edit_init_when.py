"""``memory edit``/``memory restore``, ``init``, ``identity``/``demo`` and recall's
``when``/``kinds`` channels on PostgreSQL: the SQLite contract tests run as they are,
then what the two back ends must do alike and what a second host sees."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from soloqueue_mem.config import Config
from soloqueue_mem.home import Home
from soloqueue_mem.memory.store import Changes
from soloqueue_mem.sessions.turns import Scope
from soloqueue_mem.storage import open_backend
from tests.cli import test_consolidate as consolidating
from tests.cli import test_memory as memory
from tests.cli import test_recall as recalling
from tests.cli import test_store as store
from tests.cli.test_memory import fixed_ids  # noqa: F401 - a fixture the contract uses
from tests.conftest import Cli, tree_snapshot

# The SQLite tests of these commands that touch nothing but the CLI: each runs as it is
CONTRACT: list[Callable[..., None]] = [
    memory.test_edit_changes_the_searchable_text,
    memory.test_edit_adds_and_removes_tags_and_changes_type_and_duration,
    memory.test_edit_rejects_nothing_to_change_and_bad_values_without_writing,
    memory.test_tags_added_by_restating_and_removed_by_edit_are_searched_correctly,
    memory.test_show_by_unique_prefix_and_id_errors,
    consolidating.test_an_unused_memory_is_archived_and_can_be_restored,
    recalling.test_a_time_in_the_query_brings_what_happened_then,
    store.test_init_creates_a_private_store_with_a_gitignore,
]
_FIXTURES = ("cli", "home", "monkeypatch", "tmp_path", "fixed_ids")


@pytest.mark.parametrize("test", CONTRACT, ids=lambda test: test.__name__)
def test_the_sqlite_contract_holds_on_postgres(
    test: Callable[..., None], request: pytest.FixtureRequest, home: Path, on_postgres: str
) -> None:
    names = test.__code__.co_varnames[: test.__code__.co_argcount]
    test(**{name: request.getfixturevalue(name) for name in names if name in _FIXTURES})
    assert not home.joinpath("memory.db").exists()


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "postgres":
        request.getfixturevalue("on_postgres")
    return str(request.param)


def _ids(memories: list[dict[str, Any]]) -> list[str]:
    return [m["id"] for m in memories]


def test_an_edit_keeps_the_history_chain_on_both_back_ends(
    cli: Cli, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sp = ("--subject", "team", "--predicate", "lead")
    old = cli.json("remember", "the team lead is Ana", *sp)
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-27T08:00:00Z")
    new = cli.json("remember", "the team lead is Bo", *sp)
    fixed = cli.json("memory", "edit", old["id"], "--content", "the team lead was Ana")
    assert fixed["superseded_by"] == new["id"]  # a correction, not a new version
    assert fixed["updated_at"] == "2026-11-27T08:00:00.000Z"
    chain = cli.json("memory", "history", new["id"])
    assert _ids(chain) == [old["id"], new["id"]]
    assert chain[0]["content"] == "the team lead was Ana"
    assert _ids(cli.json("memory", "list")) == [new["id"]]
    again = cli.json("memory", "edit", new["id"][:8], "--subject", "crew", "--tag", "org")
    assert (again["subject"], again["tags"], again["superseded_by"]) == ("crew", ["org"], None)
    assert [h["content"] for h in cli.json("recall", "crew org", "--channels", "memories")] == [
        "the team lead is Bo"
    ]


def test_restore_of_a_memory_never_archived_only_renews_it(
    cli: Cli, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = cli.json("remember", "the wiki lives on confluence")
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-27T09:00:00Z")
    restored = cli.json("memory", "restore", made["id"][:6])
    assert restored["archived_at"] is None
    assert restored["last_accessed_at"] == "2026-11-27T09:00:00.000Z"
    assert restored["content"] == made["content"]
    missing = cli("memory", "restore", "ffff")
    assert missing.exit_code == 3 and missing.stderr.startswith("error: ")


def test_kinds_finds_a_preference_said_in_chinese_on_both_back_ends(cli: Cli, backend: str) -> None:
    cli.ok("remember", "回答要简短，先给结论", "--type", "PREFERENCE")
    cli.ok("remember", "部署在周五进行", "--type", "RULE")
    hits = cli.json("recall", "how do I like my answers?", "--channels", "kinds")
    assert [h["content"] for h in hits] == ["回答要简短，先给结论"]
    assert hits[0]["channels"] == ["kinds"]


def test_a_second_host_sees_an_edit_and_a_restore(
    cli: Cli, home: Path, on_postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = cli.json("remember", "the build uses gradle", "--tag", "build")
    monkeypatch.setenv("SOLOQUEUE_HOME", str(home.parent / "host-b"))
    cli.ok("memory", "edit", made["id"][:8], "--content", "the build uses bazel")
    monkeypatch.setenv("SOLOQUEUE_HOME", str(home))
    assert cli.json("memory", "show", made["id"])["content"] == "the build uses bazel"
    hits = cli.json("recall", "bazel", "--channels", "memories")
    assert [h["content"] for h in hits] == ["the build uses bazel"]
    assert cli.json("recall", "gradle", "--channels", "memories") == []


def test_init_on_postgres_migrates_the_database_and_makes_the_local_folder(
    cli: Cli, home: Path, on_postgres: str
) -> None:
    import psycopg

    with psycopg.connect(on_postgres, autocommit=True) as conn:
        assert conn.execute("SELECT to_regclass('memories')").fetchone() == (None,)
    assert cli.json("init") == {"root": str(home), "created": True}
    assert (home / ".gitignore").read_text() == "*\n"
    assert os.stat(home).st_mode & 0o777 == 0o700
    assert not (home / "memory.db").exists()  # the memories are the database's
    with psycopg.connect(on_postgres, autocommit=True) as conn:
        assert conn.execute("SELECT to_regclass('memories')").fetchone() == ("memories",)
    assert cli.json("init")["created"] is False


def test_an_unreachable_database_fails_init_with_one_line(
    cli: Cli, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOLOQUEUE_DATABASE_URL", "postgresql://nobody@127.0.0.1:1/none")
    result = cli("init")
    assert result.exit_code == 74 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: ") and "cannot connect" in line
    assert not home.exists()


def test_demo_and_identity_run_with_a_database_url_and_touch_neither(
    cli: Cli, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both use local files only: the demo its own throw-away SQLite store."""
    monkeypatch.setenv("SOLOQUEUE_DATABASE_URL", "postgresql://nobody@127.0.0.1:1/none")
    assert len(cli.json("demo")["logged"]) > 3
    assert [f["status"] for f in cli.json("identity", "show")] == ["missing"] * 4
    assert tree_snapshot(home) == {}


def test_the_backend_edits_restores_and_reads_a_window(home: Path, on_postgres: str) -> None:
    """The library's view: PostgresBackend's edit, restore and a time window's turns."""
    from datetime import UTC, datetime

    from soloqueue_mem.memory.store import Draft
    from soloqueue_mem.sessions.events import parse_event

    now = datetime(2026, 11, 26, 8, tzinfo=UTC)
    backend = open_backend(Home(home), Config())
    assert backend is not None
    try:
        made = backend.remember(Draft("cats sleep a lot"), "default", "default", now).memory
        edited = backend.edit(made.id, Changes(content="cats sleep all day"), now)
        assert backend.memory(made.id) == edited
        assert backend.restore(made.id[:5], now).content == "cats sleep all day"
        events = [{"role": "user", "content": f"turn {n}"} for n in range(3)]
        items = [
            (n, parse_event({**e, "timestamp": f"2026-11-2{n}T10:00:00Z"}))
            for n, e in enumerate(events)
        ]
        list(backend.log(items, ("default", "default", "s"), now, None))
        window = backend.newest_turns(
            Scope(since="2026-11-20T00:00:00.000Z", until="2026-11-22T00:00:00.000Z"), 5
        )
        assert [t.content for t in window] == ["turn 1", "turn 0"]
    finally:
        backend.close()  # type: ignore[attr-defined]


_EDITOR = """
import sys
from datetime import UTC, datetime
from pathlib import Path
from soloqueue_mem.config import Config
from soloqueue_mem.home import Home
from soloqueue_mem.memory.store import Changes
from soloqueue_mem.storage import open_backend
backend = open_backend(Home(Path(sys.argv[1])), Config())
backend.memory(sys.argv[2])  # connected: wait for the others, then edit at once
print("ready", flush=True)
sys.stdin.readline()
for n in range(int(sys.argv[3])):
    tag = f"w{sys.argv[4]}n{n}"
    backend.edit(sys.argv[2], Changes(add_tags=(tag,)), datetime.now(UTC))
backend.close()
print("done", flush=True)
"""


def test_edits_from_writers_on_two_hosts_lose_no_change(tmp_path: Path, on_postgres: str) -> None:
    """Each edit reads the memory under its row lock: concurrent tag additions all stay."""
    import subprocess
    import sys

    from soloqueue_mem import Store

    with Store(tmp_path / "host-0") as store:
        made = store.remember("the release train leaves on tuesdays").memory
    per_writer, writers = 40, 4
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _EDITOR, str(tmp_path / f"host-{n % 2}"), made.id]
            + [str(per_writer), str(n)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for n in range(writers)
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    for proc in procs:  # all are told to go before any is waited for
        assert proc.stdin is not None
        proc.stdin.write(b"go\n")
        proc.stdin.flush()
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    with Store(tmp_path / "host-1") as store:
        tags = store.memory(made.id).tags
    assert sorted(tags) == sorted(f"w{w}n{n}" for w in range(writers) for n in range(per_writer))
