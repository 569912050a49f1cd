"""A store written in the old character form (memory.db at schema 12) is re-indexed in
the bigram form on first open (m013, m014): search finds what a store written by this
version finds, a memory indexed before the upgrade can still be forgotten, and
``verify --repair`` rebuilds the indexes in the new form."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from soloqueue_mem import Store
from soloqueue_mem.memory import attachments, episodes
from soloqueue_mem.memory import store as memory_store
from soloqueue_mem.memory.model import content_key
from soloqueue_mem.sessions import turns
from soloqueue_mem.storage.sqlite import schema_memory
from soloqueue_mem.text import cjk

OLD_VERSION = 12  # memory.db before the bigram index
TURNS = [
    ("user", "我们下周去北京开会，讨论数据库迁移的项目"),
    ("assistant", "好的，北京的会议定在周三。数据库迁移先在预发布环境测试"),
    ("user", "remember the staging cluster runs PostgreSQL 16"),
    ("assistant", "noted: staging uses PostgreSQL 16, prod is still on 15"),
    ("user", "东京的天气怎么样？京都呢"),
]
MEMORIES = ["用户住在北京海淀区", "项目的数据库是 PostgreSQL", "the user prefers tea over coffee"]
TOOL_CALL = {
    "role": "assistant",
    "content": "",
    "tool_calls": [{"id": "c1", "name": "查询日志", "input": {"关键词": "支付超时"}}],
}
TOOL_RESULT = {
    "role": "tool",
    "content": "",
    "tool_results": [{"tool_use_id": "c1", "content": "支付网关超时 3 次"}],
}
QUERIES = ["北京", "数据库迁移", "京", "PostgreSQL staging", "东京天气", "海淀", "tea"]
QUERIES += ["查询日志", "支付超时", "网关"]  # in a tool call's name and input, a result
QUERIES += ["宠物猫", "年糕"]  # a memory's tag, its content


def fill(store: Store) -> list[str]:
    for role, text in TURNS:
        store.log(text, role=role, session="s1")
    store.log([TOOL_CALL, TOOL_RESULT], session="s1")
    store.session_end("s1")  # an episode, and memories digested from the turns
    ids = [store.remember(text).memory.id for text in MEMORIES]
    store.remember("用户的猫叫年糕", subject="用户", predicate="宠物", tags=["宠物猫"])
    return ids


def answers(store: Store) -> dict[str, tuple[list[str], list[str]]]:
    return {
        query: (
            [hit.turn.content for hit in store.trace(query)],
            [hit.text for hit in store.recall(query, max_tokens=100_000).hits],
        )
        for query in QUERIES
    }


@pytest.fixture
def old_store(home: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A store as the previous version wrote it: its migrations, its index form."""
    with monkeypatch.context() as old:
        old.setattr(schema_memory, "MIGRATIONS", schema_memory.MIGRATIONS[:OLD_VERSION])
        for module in (turns, memory_store, episodes, attachments):
            old.setattr(module, "index_form", cjk.spaced_form)
        old.setattr(memory_store, "DERIVED", "content_key")  # replaced_value: version 17
        old.setattr(memory_store, "derived_values", lambda content: (content_key(content),))
        store = Store()
        ids = fill(store)
        store.close()
    conn = sqlite3.connect(home / "memory.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == OLD_VERSION
    count = "SELECT COUNT(*) FROM conversation_turns_fts WHERE conversation_turns_fts MATCH ?"
    assert conn.execute(count, ('"北 京"',)).fetchone()[0] == 2  # characters, not bigrams
    conn.close()
    return ids


def test_an_old_store_is_reindexed_and_finds_what_a_new_one_finds(old_store, tmp_path):
    migrated = Store()
    found = answers(migrated)
    fresh = Store(tmp_path / "fresh")
    fill(fresh)
    assert found == answers(fresh)
    assert all(
        found[query][0] for query in QUERIES if query not in ("海淀", "tea", "宠物猫", "年糕")
    )
    assert found["海淀"][1] and found["tea"][1] and found["宠物猫"][1]  # memories
    migrated.close()
    fresh.close()


def test_a_memory_indexed_before_the_upgrade_can_be_forgotten(old_store, home):
    store = Store()
    store.forget(old_store[0])
    assert all("海淀" not in hit.text for hit in store.recall("海淀").hits)
    store.close()
    conn = sqlite3.connect(home / "memory.db")
    for table in ("memories_fts", "conversation_turns_fts"):
        conn.execute(f"INSERT INTO {table} ({table}) VALUES ('integrity-check')")
    conn.close()


def test_verify_repair_rebuilds_in_the_bigram_form(cli, home):
    fill(Store())
    before = cli.json("trace", "数据库迁移")
    repaired = cli.json("verify", "--repair")["repaired"]
    assert repaired["fts_rows"] == len(TURNS) + 2
    assert repaired["memory_fts_rows"] >= len(MEMORIES) + 1
    assert repaired["episode_fts_rows"] == 1
    assert cli.json("trace", "数据库迁移") == before != []
    conn = sqlite3.connect(home / "memory.db")
    bigram = "SELECT COUNT(*) FROM conversation_turns_fts WHERE conversation_turns_fts MATCH ?"
    assert conn.execute(bigram, ('"北京"',)).fetchone()[0] == 2  # one token, not a phrase
    conn.close()
