"""A memory.db from before semantic memories (schema version 2: turns only) migrates
forward on open, keeps its turns, and then stores and recalls memories."""

from __future__ import annotations

import sqlite3

import pytest

from soloqueue_mem.memory.schema import m017_add_memories_replaced_value
from soloqueue_mem.storage.sqlite.schema_memory import MIGRATIONS

pytestmark = pytest.mark.sqlite_only("SQLite's schema migrations")


def tables(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    return {name for (name,) in rows if not name.startswith("sqlite_")}


def version_2_tables() -> set[str]:
    reference = sqlite3.connect(":memory:", isolation_level=None)
    for migration in MIGRATIONS[:2]:
        migration(reference)
    return tables(reference)


def downgrade_to_version_2(path) -> None:
    """Drop everything later migrations made, as a store written by the turns-only
    release would look."""
    keep = version_2_tables()
    with sqlite3.connect(path, isolation_level=None) as conn:
        later = tables(conn) - keep
        virtual = {
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL%'"
            )
        }
        for name in sorted(later & virtual) + sorted(later - virtual):  # shadow tables go too
            conn.execute(f'DROP TABLE IF EXISTS "{name}"')
        conn.execute("PRAGMA user_version = 2")
        assert tables(conn) == keep and "memories" not in keep
    conn.close()


def test_a_turns_only_store_migrates_and_keeps_its_turns(cli, home):
    cli.ok("log", "-s", "old", "the walrus log from the old release")
    cli.ok("log", "-s", "old", "--role", "assistant", "noted the walrus")
    downgrade_to_version_2(home / "memory.db")

    out = cli.json("remember", "a walrus likes cold water", "--type", "FACT")
    assert out["action"] == "created"
    stats = cli.json("stats")
    assert stats["databases"]["memory.db"]["schema_version"] == len(MIGRATIONS)
    assert stats["counts"]["turns"] == 2 and stats["counts"]["memories"] == 1
    with sqlite3.connect(home / "memory.db") as conn:
        assert "memories" in tables(conn)
    conn.close()

    assert sorted(t["content"] for t in cli.json("trace", "walrus")) == [
        "noted the walrus",
        "the walrus log from the old release",
    ]
    hits = cli.json("recall", "walrus")
    assert {h["kind"] for h in hits} == {"memory", "turn"} and len(hits) == 3
    assert cli.json("log", "-s", "old", "next")["turn_index"] == 2


def test_a_store_before_the_retired_indexes_gains_them_and_searches_alike(cli, home):
    """Migration 15 adds the indexes the memory search lists skipped memories by."""
    cli.ok("remember", "a walrus likes cold water")
    archived = cli.json("remember", "a walrus once lived here")["id"]
    with sqlite3.connect(home / "memory.db", isolation_level=None) as conn:
        conn.execute(
            "UPDATE memories SET archived_at = '2026-01-01T00:00:00.000Z' WHERE id = ?", (archived,)
        )
        conn.execute("DROP INDEX idx_memories_archived")
        conn.execute("DROP INDEX idx_memories_expires")
        drop_embedding_versions(conn)  # migration 16's, which comes after
        drop_replaced_value(conn)  # and 17's
        conn.execute("PRAGMA user_version = 14")
    conn.close()

    assert cli.json("stats")["databases"]["memory.db"]["schema_version"] == len(MIGRATIONS)
    with sqlite3.connect(home / "memory.db") as conn:
        indexes = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert {"idx_memories_archived", "idx_memories_expires"} <= indexes
    hits = cli.json("recall", "walrus")
    assert [h["content"] for h in hits] == ["a walrus likes cold water"]


def drop_embedding_versions(conn: sqlite3.Connection) -> None:
    """What migration 16 adds: the versions table and the triggers that set it."""
    for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%_versions'"
    ).fetchall():
        conn.execute(f'DROP TRIGGER "{name}"')
    conn.execute("DROP TABLE embedding_versions")


def test_a_store_before_the_embedding_versions_gains_them(cli, home):
    """Migration 16: a write to a model's vectors sets its version (the mapped copy's
    state, soloqueue_mem/semantic/mapped.py)."""
    cli.ok("remember", "a walrus likes cold water")
    with sqlite3.connect(home / "memory.db", isolation_level=None) as conn:
        drop_embedding_versions(conn)
        drop_replaced_value(conn)  # migration 17's, which comes after
        conn.execute("PRAGMA user_version = 15")
    conn.close()

    assert cli.json("stats")["databases"]["memory.db"]["schema_version"] == len(MIGRATIONS)
    with sqlite3.connect(home / "memory.db", isolation_level=None) as conn:
        link = "INSERT INTO embedded_items VALUES ('m', 'memory', ?, 'g', 'a', 'h')"
        conn.execute(link, ("x1",))
        first = conn.execute("SELECT version FROM embedding_versions WHERE model = 'm'").fetchone()
        conn.execute(link, ("x2",))
        second = conn.execute("SELECT version FROM embedding_versions WHERE model = 'm'").fetchone()
    conn.close()
    assert first and second and first != second


def drop_replaced_value(conn: sqlite3.Connection) -> None:
    """What migration 17 adds: ``memories.replaced_value``."""
    conn.execute("ALTER TABLE memories DROP COLUMN replaced_value")


def kept_at_expiry(cli, home, monkeypatch, named: str, plain: str, downgrade) -> None:
    """Remember ``named`` (a correction naming the value it replaced) and ``plain``,
    take the store back with ``downgrade`` (given the connection), and expire both
    40 days later: ``plain`` is deleted, ``named`` kept (out of recall)."""
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-09-10T08:00:00Z")
    kept = cli.json("remember", named)
    gone = cli.json("remember", plain)
    with sqlite3.connect(home / "memory.db", isolation_level=None) as conn:
        downgrade(conn)
    conn.close()

    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-10-20T03:43:00Z")
    assert cli.json("consolidate", "--format", "json")["expire"]["deleted"] == 1
    assert cli("memory", "show", gone["id"]).exit_code == 3  # not found
    assert cli.json("memory", "show", kept["id"])["content"] == named


def replaced_values(home) -> list[tuple[str]]:
    with sqlite3.connect(home / "memory.db") as conn:
        values = conn.execute("SELECT replaced_value FROM memories").fetchall()
    conn.close()
    return values


def test_a_store_before_replaced_values_keeps_a_correction_naming_one_at_its_expiry(
    cli, home, monkeypatch
):
    """Migration 17 gives every memory the value it says it replaced, which expiry
    reads: a correction stored before it that names one (".po") is kept out of recall
    at its expiry, as one stored after it is, and another memory still goes."""

    def before_17(conn: sqlite3.Connection) -> None:
        drop_replaced_value(conn)
        conn.execute(f"PRAGMA user_version = {MIGRATIONS.index(m017_add_memories_replaced_value)}")

    named = "The studio is dropping .po, everything moves to XLIFF 2.0"
    kept_at_expiry(
        cli, home, monkeypatch, named, "The studio ships strings every Friday", before_17
    )
    assert replaced_values(home) == [(".po",)]


@pytest.mark.parametrize(
    ("named", "value"),
    [
        ("48 小时太早了客户都忘了，改成提前 24 小时吧", "48 小时"),  # rule 2
        ("Also the trailer: not -16, it's -14 LUFS, I misread their spec", "-16"),  # rule 6
        ("主图以后交给 Kelly 吧，阿杰去专心做视频", "阿杰"),  # rule 7
        ("The consult fee is $175, not $150, I updated the site", "150"),  # rule 8
        ("Correction: the audit moved from June 26 to July 3", "June 26"),  # rule 9
        ("Leo 下周开始休陪产假，install 改由陈默带", "Leo"),  # rule 10
    ],
)
def test_a_correction_stored_under_the_older_replaced_value_rule_gets_the_newer_one(
    cli, home, monkeypatch, named, value
):
    """The last migration derives ``replaced_value`` again by the newest rule (rule 2
    named the earlier of two values of one kind around a change, rule 6 the X of "not
    X, it's Y"): a correction written when an older rule gave it nothing is kept at its
    expiry as one written now is. A second open derives nothing again."""

    def by_an_older_rule(conn: sqlite3.Connection) -> None:
        conn.execute("UPDATE memories SET replaced_value = ''")  # what the older rule gave
        conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) - 1}")

    kept_at_expiry(cli, home, monkeypatch, named, "提醒短信由客服组发送", by_an_older_rule)
    assert replaced_values(home) == [(value,)]
    with sqlite3.connect(home / "memory.db", isolation_level=None) as conn:
        conn.execute("UPDATE memories SET replaced_value = 'kept'")
    conn.close()

    cli.ok("stats")  # opened again: the schema is current, nothing is derived
    assert replaced_values(home) == [("kept",)]


def test_a_list_number_an_older_rule_named_is_named_no_more(cli, home):
    """Rule 11: the "1" an older rule named of "1) … 2) …" (a list's numbers read as a
    change from 1 to 2) is derived again as nothing on open."""
    cli.ok("remember", "结论：1) BOM 目标改为 ¥135；2) EVT build 推到 8月27日")
    with sqlite3.connect(home / "memory.db", isolation_level=None) as conn:
        conn.execute("UPDATE memories SET replaced_value = '1'")  # what rule 10 gave
        conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) - 1}")
    conn.close()

    cli.ok("stats")
    assert replaced_values(home) == [("",)]
