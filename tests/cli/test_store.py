"""The data directory: resolution, `init`, `path`, `stats`, safety refusals, exit codes."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from soloqueue_mem.home import find_root
from soloqueue_mem.storage.sqlite.schema_memory import MIGRATIONS
from tests.conftest import act_after_listing, missing_store_is_sqlite


def test_root_resolution_order(tmp_path):
    nested = tmp_path / "project" / "src"
    nested.mkdir(parents=True)
    (tmp_path / "project" / ".soloqueue").mkdir()
    assert find_root("/explicit", "/from-env", str(nested)) == "/explicit"
    assert find_root(None, "/from-env", str(nested)) == "/from-env"
    assert find_root("~/x", None, str(nested)) == os.path.expanduser("~/x")
    assert find_root(None, None, str(nested)) == str(tmp_path / "project" / ".soloqueue")
    default = find_root(None, None, str(tmp_path))  # nothing nearer: the platform's folder
    assert os.path.basename(default) == ".soloqueue" and os.path.isabs(default)


def test_init_creates_a_private_store_with_a_gitignore(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("SOLOQUEUE_HOME")
    out = cli.json("init")
    root = tmp_path / ".soloqueue"
    assert out == {"root": str(root), "created": True}
    assert (root / ".gitignore").read_text() == "*\n"
    assert os.stat(root).st_mode & 0o777 == 0o700
    assert cli.json("init")["created"] is False
    assert cli.json("path") == {"root": str(root), "exists": True}


def test_global_options_work_before_and_after_the_command(cli, tmp_path):
    other = tmp_path / "elsewhere"
    assert cli.json("--root", str(other), "path")["root"] == str(other)
    assert json.loads(cli.ok("path", "--root", str(other), "--format", "json").stdout)[
        "root"
    ] == str(other)
    assert cli.ok("path", "--format", "text").stdout == f"{os.environ['SOLOQUEUE_HOME']}\n"


@missing_store_is_sqlite
def test_read_only_commands_create_nothing(cli, home):
    cli.ok("--format", "json", "path")
    for args in (["stats"], ["session", "list"], ["trace", "x"]):
        assert cli("--format", "json", *args).exit_code == 66  # no data directory
    assert not home.exists()
    home.mkdir(parents=True, mode=0o700)
    for args in (["stats"], ["path"], ["session", "list"], ["trace", "x"]):
        cli.ok("--format", "json", *args)
    assert list(home.iterdir()) == []


def test_stats_counts_and_schema_version(cli, home, store_backend):
    cli.ok("log", "-s", "a", "one")
    cli.ok("log", "-s", "b", "two")
    stats = cli.json("stats")
    assert stats["counts"] == {
        "turns": 2, "sessions": 2, "memories": 0, "artifacts": 0, "attachments": 0
    }  # fmt: skip
    if store_backend == "sqlite":  # each of SQLite's files, or the one database
        assert stats["databases"]["memory.db"]["schema_version"] == len(MIGRATIONS)
    else:
        from soloqueue_mem.storage.postgres.schema import MIGRATIONS as POSTGRES_MIGRATIONS

        assert stats["databases"]["postgresql"]["schema_version"] == len(POSTGRES_MIGRATIONS)
    assert stats["session_logs"]["files"] == 2


def test_a_blob_a_gc_deletes_while_stats_walks_the_store_is_not_counted(cli, store, monkeypatch):
    """stats takes no gc lock: a blob a gc deletes between stats listing its folder and
    reading its size is left out (stats exited 1 with an unexpected FileNotFoundError)."""
    cli.json("artifact", "save", "-", input=b"kept")
    gone = cli.json("artifact", "save", "-", input=b"deleted by a gc")
    blob = store / gone["path"]
    act_after_listing(monkeypatch, blob.parent, blob.unlink)  # the gc, right after it
    assert cli.json("stats")["blobs"] == {"files": 1, "bytes": len(b"kept")}


def test_a_world_writable_root_is_refused(cli, home):
    home.mkdir(parents=True)
    os.chmod(home, 0o777)
    result = cli("log", "-s", "s", "x")
    assert result.exit_code == 74
    assert "writable by group or others" in result.stderr and "chmod 700" in result.stderr
    assert list(home.iterdir()) == []


def test_a_symlinked_root_is_refused(cli, home, tmp_path):
    target = tmp_path / "real"
    target.mkdir(mode=0o700)
    home.parent.mkdir(parents=True)
    home.symlink_to(target)
    result = cli("log", "-s", "s", "x")
    assert result.exit_code == 74 and "symlink" in result.stderr
    assert list(target.iterdir()) == []


@pytest.mark.sqlite_only(
    "sets memory.db's user_version (tests/pg checks PostgreSQL's schema version)"
)
def test_a_newer_schema_is_refused(cli, home):
    cli.ok("log", "-s", "s", "x")
    with sqlite3.connect(home / "memory.db") as conn:
        conn.execute("PRAGMA user_version = 99")
    result = cli("log", "-s", "s", "y")
    assert result.exit_code == 74
    newest = f"newer than this soloqueue-mem understands ({len(MIGRATIONS)})"
    assert f"schema version 99, {newest}" in result.stderr


def test_a_bad_config_file_is_reported(cli, home):
    home.mkdir(parents=True, mode=0o700)
    (home / "config.toml").write_text("durabilty = 'full'\n")
    result = cli("log", "-s", "s", "x")
    assert result.exit_code == 65 and "unknown setting 'durabilty'" in result.stderr


def test_durability_full_is_accepted(cli, home):
    home.mkdir(parents=True, mode=0o700)
    (home / "config.toml").write_text("durability = 'full'\n")
    assert cli.json("log", "-s", "s", "x")["turn_index"] == 0


@pytest.mark.parametrize(
    "args",
    [
        ["log", "-s", "../x", "hi"],
        ["log", "--group", "a/b", "-s", "s", "hi"],
        ["session", "show", ".."],
        ["trace", "x", "--agent", "~"],
    ],
)
@pytest.mark.usefixtures("store")
def test_hostile_ids_are_rejected_before_any_file_is_touched(cli, home, args):
    result = cli(*args)
    assert result.exit_code == 65
    assert result.stderr.startswith("error: invalid ")
    assert os.listdir(home) == [".gitignore"]


@pytest.mark.usefixtures("store")
def test_json_errors_when_json_is_asked_for(cli):
    result = cli("--format", "json", "session", "show", "missing")
    assert result.exit_code == 3
    assert json.loads(result.stderr) == {
        "error": {
            "code": "not_found",
            "exit_code": 3,
            "message": "session default/default/missing not found"
            " (try: soloqueue-mem session list)",
        }
    }


def test_usage_errors_exit_2(cli):
    assert cli("log", "--role", "wizard", "-s", "s", "x").exit_code == 2
    assert cli("no-such-command").exit_code == 2


def test_version(cli):
    from soloqueue_mem import __version__

    assert cli.ok("--version").stdout == f"soloqueue-mem {__version__}\n"


def test_demo_runs_offline_and_finds_its_turns(cli):
    out = cli.json("demo")
    assert len(out["logged"]) == 7
    (offloaded,) = [t for t in out["logged"] if t["offloaded"]]
    assert offloaded["role"] == "tool"
    assert out["searches"]["数据库超时"][0]["turn_index"] == 0
    assert out["openai"][1]["tool_calls"][0]["function"]["name"] == "read_file"
    assert out["episode"]["source"] == "session_end"
    assert out["episode"]["tools_used"] == ["read_file", "run_shell"]
    assert [m["content"] for m in out["memories"]] == [
        "User prefers timeouts of at least 5 seconds"
    ]
    kinds = {hit["kind"] for hit in out["recall"]}
    assert {"memory", "episode"} <= kinds
    assert not Path(out["root"]).exists()  # the throw-away store is gone
