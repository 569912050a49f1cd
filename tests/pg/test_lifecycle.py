"""Episodes, session end and consolidate on the PostgreSQL back end."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.pg.conftest import let_go

STATED = [
    ("user", "I prefer tabs over spaces in every project"),
    ("assistant", "Noted: tabs it is. Running the formatter now."),
    ("user", "My name is Ada and I work on the billing service"),
]


def _log(cli: Cli, session: str) -> None:
    for role, text in STATED:
        cli.ok("log", "-s", session, "-r", role, text)


def test_session_end_digests_into_episodes_and_memories(
    cli: Cli, home: Path, on_postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-26T08:00:00Z")
    _log(cli, "s1")
    ended = cli.json("session", "end", "s1")
    assert len(ended["episodes"]) == 1 and ended["memories"]
    (episode,) = cli.json("episode", "list")
    assert episode["id"] == ended["episodes"][0] and episode["linked_memory_ids"]
    assert cli.json("episode", "show", episode["id"][:10])["session"] == "s1"
    assert [e["id"] for e in cli.json("episode", "search", "tabs")] == [episode["id"]]
    again = cli.json("session", "end", "s1")  # nothing new: no second episode
    assert again["episodes"] == [] and again["memories"] == []
    hits = cli.json("recall", "tabs over spaces", "--channels", "episodes")
    assert [h["id"] for h in hits] == [episode["id"]]
    assert cli("session", "end", "never-logged").exit_code == 3
    assert not (home / "memory.db").exists()


def test_consolidate_digests_idle_sessions_once_and_dry_runs_write_nothing(
    cli: Cli, home: Path, on_postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-26T08:00:00Z")
    _log(cli, "s1")
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-26T12:00:00Z")
    dry = cli.json("consolidate", "--dry-run")
    assert dry["dry_run"] and dry["sessions"]["episodes"] == 1
    assert cli.json("episode", "list") == [] and cli.json("memory", "list") == []
    report = cli.json("consolidate")
    assert report["sessions"] == dry["sessions"]
    assert report["embed"]["skipped"] and report["graph"]["graphs"] == 0  # an empty graph
    assert dry["graph"] == {"skipped": "dry run"}
    assert len(cli.json("episode", "list")) == 1
    assert cli.json("consolidate")["sessions"]["episodes"] == 0  # idempotent
    assert (home / "identity" / "USER.md").is_file()


def test_hosts_digesting_at_once_build_each_episode_once(
    cli: Cli, tmp_path: Path, on_postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from soloqueue_mem import Store

    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-26T08:00:00Z")
    sessions = [f"s{n}" for n in range(6)]
    for session in sessions:
        _log(cli, session)
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-26T12:00:00Z")

    def host(name: str) -> int:
        made = 0
        with Store(tmp_path / name) as store:
            for session in sessions:  # session end on every host, then a consolidate
                made += len(store.session_end(session).episodes)
            made += store.consolidate(wait=True)["sessions"]["episodes"]
        return made

    with ThreadPoolExecutor(4) as pool:
        made = sum(pool.map(host, ["a", "b", "c", "d"]))
    assert made == len(sessions)
    episodes = cli.json("episode", "list", "-n", "0")
    assert sorted(e["session"] for e in episodes) == sessions
    memories = cli.json("memory", "list", "--all", "--limit", "1000")
    assert len({m["content"] for m in memories}) == len(memories)  # no memory twice


def test_a_migrated_store_keeps_its_episodes_and_digests_nothing_twice(
    cli: Cli, home: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-26T08:00:00Z")
    _log(cli, "s1")
    (made,) = cli.json("session", "end", "s1")["episodes"]
    _log(cli, "s2")  # not digested yet
    report = cli.json("migrate", "--to", database_url)
    assert report["verified"] and report["tables"]["episodes"]["copied"] == 1
    again = cli.json("migrate", "--to", database_url)
    assert again["tables"]["episodes"]["existing"] == 1 and again["verified"]
    monkeypatch.setenv("SOLOQUEUE_DATABASE_URL", database_url)
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-26T12:00:00Z")
    assert cli.json("episode", "show", made)["session"] == "s1"
    digested = cli.json("consolidate")["sessions"]
    assert (digested["sessions"], digested["episodes"]) == (1, 1)  # s2 only
    assert sorted(e["session"] for e in cli.json("episode", "list")) == ["s1", "s2"]


def test_a_consolidate_running_on_another_host_is_exit_75(cli: Cli, on_postgres: str) -> None:
    import psycopg

    from soloqueue_mem.storage.postgres.lifecycle import RUN_LOCK

    with psycopg.connect(on_postgres, autocommit=True) as other_host:
        other_host.execute("SELECT pg_advisory_lock(%s)", (RUN_LOCK,))
        result = cli("consolidate")
        assert result.exit_code == 75 and "another consolidate" in result.stderr
        let_go(other_host, RUN_LOCK)
    assert cli.json("consolidate")["sessions"]["sessions"] == 0  # free again


def test_consolidate_deletes_expired_working_memory_of_quiet_groups(
    cli: Cli, on_postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg

    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-26T08:00:00Z")
    cli.ok("working", "add", "-g", "quiet", "热数据：用户刚刚讨论了架构选项。")
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-27T04:00:00Z")
    cli.ok("working", "add", "-g", "busy", "The user is comparing two queue designs today")
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-27T09:00:00Z")
    assert cli.json("consolidate", "--dry-run")["expire"]["working"] == 1
    assert cli.json("consolidate")["expire"]["working"] == 1
    with psycopg.connect(on_postgres) as conn:
        left = conn.execute("SELECT group_id FROM working_memory").fetchall()
    assert left == [("busy",)]
