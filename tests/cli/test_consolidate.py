"""`consolidate`, `episode` and `scratchpad` through the real CLI (SPEC §3.6, §3.8).

Time moves with SOLOQUEUE_NOW; memory.db is read directly (read-only) to check what
the commands wrote."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from soloqueue_mem import Store, lock
from soloqueue_mem.sessions.events import SessionKey
from soloqueue_mem.sessions.reader import end_session
from tests.conftest import NOW, store_db, table_rows, tree_snapshot

EX_USAGE, EX_DATAERR, EX_TEMPFAIL = 2, 65, 75
T0 = NOW  # 2026-11-26T08:00:00Z


def at(monkeypatch, when: str) -> None:
    monkeypatch.setenv("SOLOQUEUE_NOW", when)


def log(cli, session: str, events: list[dict], *flags: str) -> None:
    cli.ok("log", "--batch", "-s", session, *flags, input="\n".join(map(json.dumps, events)))


def say(cli, session: str, *texts: str) -> None:
    log(cli, session, [{"role": "user", "content": t} for t in texts])


def consolidate(cli, *args: str) -> dict:
    return cli.json("consolidate", *args)


def db_content(home: Path) -> dict[str, list[tuple]]:
    return {
        table: table_rows(home, f"SELECT * FROM {table} ORDER BY 1, 2, 3, 4")  # noqa: S608
        for table in ("memories", "episodes", "{turns}", "sessions", "scratchpad")
    }


def listed(cli, *args: str) -> dict[str, dict]:
    return {m["content"]: m for m in cli.json("memory", "list", *args)}


def recalled(cli, query: str, *args: str) -> list[dict]:
    return cli.json("recall", query, *args)


def remember(cli, text: str, *args: str) -> dict:
    return cli.json("remember", text, *args)


OPENAI_TURNS = [
    {"role": "user", "content": "Please run the tests in tests/unit. My editor is Helix."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "run_tests", "arguments": '{"path": "tests/unit"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "12 passed in 0.4s"},
]
EVENT_TURNS = [
    {
        "role": "assistant",
        "content": "Now reading the config.",
        "tool_calls": [{"id": "c2", "name": "read_file", "input": {"path": "/etc/app.toml"}}],
    },
    {
        "role": "tool",
        "content": "",
        "tool_results": [
            {
                "tool_use_id": "c2",
                "content": "PermissionError: /etc/app.toml\nmore detail",
                "is_error": True,
            }
        ],
    },
    {"role": "assistant", "content": "I cannot read /etc/app.toml. Run it with sudo?"},
]


def log_tool_session(cli, session: str = "work") -> None:
    cli.ok("log", "-s", session, input=json.dumps(OPENAI_TURNS))
    log(cli, session, EVENT_TURNS)


# --- idempotence ----------------------------------------------------------------------


def test_a_second_run_changes_nothing(cli, home, monkeypatch):
    log_tool_session(cli)
    remember(cli, "The user prefers dark mode in every editor", "--confidence", "0.9")
    remember(cli, "User prefers dark mode in every editor.")
    remember(cli, "Temporary staging token is abc123", "--duration", "24h")
    at(monkeypatch, "2026-11-27T09:00:00Z")
    first = consolidate(cli)
    assert first["sessions"] == {"sessions": 1, "turns": 6, "episodes": 1, "memories": 2}
    assert first["dedup"]["superseded"] == 1 and first["expire"]["deleted"] == 1
    assert first["daily_summary"] == {"path": "daily_summaries/2026-11-27.md", "written": True}
    before = db_content(home)
    summary = (home / "daily_summaries/2026-11-27.md").read_text(encoding="utf-8")
    identity = {p: (home / "identity" / p).read_bytes() for p in ("MEMORY.md", "USER.md")}

    for when in ("2026-11-27T09:00:00Z", "2026-11-27T09:05:00Z"):
        at(monkeypatch, when)
        second = consolidate(cli)
        assert second["sessions"] == {"sessions": 0, "turns": 0, "episodes": 0, "memories": 0}
        assert second["dedup"]["superseded"] == 0 and second["dedup"]["clusters"] == 0
        assert second["decay"] == {"archived": 0, "demoted": 0}
        assert second["expire"] == {"deleted": 0, "attachments": 0, "working": 0}
        assert second["daily_summary"]["written"] is False
        assert db_content(home) == before
        assert (home / "daily_summaries/2026-11-27.md").read_text(encoding="utf-8") == summary
        assert summary.count("## consolidate") == 1
        assert {p: (home / "identity" / p).read_bytes() for p in identity} == identity


# --- sessions -------------------------------------------------------------------------


def parse(hhmm: str):
    from soloqueue_mem.clock import parse_timestamp

    return parse_timestamp(f"2026-11-26T{hhmm}:00Z")


def extracted(home: Path, session: str) -> set[int]:
    return {
        flag
        for (flag,) in table_rows(
            home, "SELECT extracted FROM {turns} WHERE session_id = ?", session
        )
    }


def test_idle_and_ended_sessions_are_digested_an_active_one_waits(cli, home, monkeypatch):
    say(cli, "idle", "I live in Lisbon.")
    at(monkeypatch, "2026-11-26T09:55:00Z")
    say(cli, "ended", "我的时区是东八区")
    with store_db(home) as db:
        end_session(db.conn, SessionKey("default", "default", "ended"), parse("09:56"))
    say(cli, "active", "My editor is Helix.")

    at(monkeypatch, "2026-11-26T10:05:00Z")  # idle: 2 h 5 min, active: 10 min
    report = consolidate(cli)
    assert report["sessions"] == {"sessions": 2, "turns": 2, "episodes": 2, "memories": 2}
    assert (extracted(home, "idle"), extracted(home, "ended")) == ({1}, {1})
    assert extracted(home, "active") == {0}
    sources = dict(table_rows(home, "SELECT session_id, source FROM episodes"))
    assert sources == {"idle": "consolidate", "ended": "session_end"}
    assert set(listed(cli)) == {"User lives in Lisbon", "用户的时区是东八区"}

    at(monkeypatch, "2026-11-26T11:00:00Z")  # an hour later: still within 2 h
    assert consolidate(cli)["sessions"]["sessions"] == 0
    at(monkeypatch, "2026-11-26T12:00:00Z")
    assert consolidate(cli)["sessions"] == {
        "sessions": 1,
        "turns": 1,
        "episodes": 1,
        "memories": 1,
    }
    assert extracted(home, "active") == {1}


def test_session_end_digests_at_once_and_later_turns_follow(cli, home, monkeypatch):
    say(cli, "s", "I live in Lisbon.")
    ended = cli.json("session", "end", "s")
    (episode_id,) = ended["episodes"]
    assert len(ended["memories"]) == 1 and extracted(home, "s") == {1}
    assert consolidate(cli)["sessions"]["sessions"] == 0  # nothing left to digest
    at(monkeypatch, "2026-11-26T08:05:00Z")
    say(cli, "s", "My editor is Helix.")  # the session stays ended: no idle wait
    report = consolidate(cli)
    assert report["sessions"] == {"sessions": 1, "turns": 1, "episodes": 1, "memories": 1}
    episodes = {e["id"]: e for e in cli.json("episode", "list")}
    (later,) = set(episodes) - {episode_id}
    assert (episodes[later]["first_turn"], episodes[later]["last_turn"]) == (1, 1)
    assert episodes[later]["source"] == "session_end"
    assert set(listed(cli)) == {"User lives in Lisbon", "User's editor is Helix"}


def test_a_new_attribute_value_supersedes_the_old_one_across_sessions(cli, monkeypatch):
    say(cli, "monday", "my editor is helix", "I like Rust")
    at(monkeypatch, "2026-11-26T11:00:00Z")
    consolidate(cli)
    say(cli, "tuesday", "My editor is vim now. I like Go")
    at(monkeypatch, "2026-11-26T14:00:00Z")
    consolidate(cli)
    assert set(listed(cli)) == {"User's editor is vim now", "User likes Rust", "User likes Go"}
    newest = listed(cli)["User's editor is vim now"]
    assert (newest["subject"], newest["predicate"]) == ("user", "editor")
    history = cli.json("memory", "history", newest["id"])
    assert [m["content"] for m in history] == ["User's editor is helix", "User's editor is vim now"]
    assert [h["content"] for h in recalled(cli, "editor", "--type", "FACT")] == [
        "User's editor is vim now"
    ]


def stated_then_changed(cli, monkeypatch, stated: str, changed: str) -> None:
    """``stated`` on Monday and consolidated, then ``changed`` and consolidated again."""
    say(cli, "monday", stated)
    at(monkeypatch, "2026-11-26T11:00:00Z")
    consolidate(cli)
    say(cli, "tuesday", changed)
    at(monkeypatch, "2026-11-26T14:00:00Z")
    consolidate(cli)


def test_a_chinese_sentence_announcing_a_change_supersedes_what_it_changes(cli, monkeypatch):
    """A sentence like "打样这批转到捷配" names no attribute a pattern knows, and no name
    the rules see: a change verb with its result (转到) makes it a statement, and a
    correction of the memory sharing its topic (打样, 这批)."""
    stated_then_changed(
        cli,
        monkeypatch,
        "PCB 打样我们一直用嘉立创，三月这批样板也在那边下单。",
        "打样这批转到捷配，价格便宜些。",
    )
    assert set(listed(cli)) == {"打样这批转到捷配，价格便宜些"}
    hits = recalled(cli, "PCB 打样现在在哪家下单？")
    assert hits[0]["content"] == "打样这批转到捷配，价格便宜些"


def test_a_chinese_change_verb_with_le_supersedes_the_old_figures(cli, monkeypatch):
    """A change verb with 了 ("报销比例也调了") says the figures changed as 改成 would:
    a correction of the memory sharing its topic (报销, 比例, 交通, 餐补), which leaves
    recall."""
    stated_then_changed(
        cli,
        monkeypatch,
        "报销比例是这样的：交通 60%，餐补 40%。",
        "报销比例也调了，财务要求交通 70%，餐补 30%。",
    )
    assert set(listed(cli)) == {"报销比例也调了，财务要求交通 70%，餐补 30%"}
    hits = recalled(cli, "报销比例现在是多少？", "--channels", "memories")
    assert [h["content"] for h in hits] == ["报销比例也调了，财务要求交通 70%，餐补 30%"]


def test_a_handover_supersedes_the_rule_naming_who_left(cli, monkeypatch):
    """ "老周调去做网关了。代码 review 也交给小林" hands review from 老周 to 小林: the rule
    naming 老周 and review is what the statement of the handover replaces, though the
    name of who left is in another sentence. A memory naming 老周 in no role handed
    over (the name alone in common) stays."""
    rule = "任何时候都不要直接往 main 分支 push，一定走 merge request，让老周 review"
    mentor = "Dana Whitlock 和老周都是我以前的导师"
    say(cli, "monday", f"{rule}。", f"{mentor}。")
    at(monkeypatch, "2026-11-26T11:00:00Z")
    consolidate(cli)
    assert {rule, mentor.replace("我", "用户")} <= set(listed(cli))
    say(
        cli, "tuesday", "然后测试对接人换了，以后找小林，老周调去做网关了。代码 review 也交给小林。"
    )
    at(monkeypatch, "2026-11-26T14:00:00Z")
    consolidate(cli)
    now = listed(cli)
    assert rule not in now and mentor.replace("我", "用户") in now
    assert listed(cli, "--all")[rule]["superseded_by"] == now["代码 review 也交给小林"]["id"]
    hits = recalled(cli, "代码 review 现在找谁？", "--channels", "memories")
    assert hits[0]["content"] == "代码 review 也交给小林"


def test_a_handover_said_across_an_exchange_supersedes_who_left(cli, monkeypatch):
    """The user says who leaves ("阿杰下周调去做新品线了"), the assistant asks who takes
    over, and the user's next turn names them ("对，以后 OTA 的事找小林"): the handover's
    two halves are in two turns, and the statement of the taking over replaces the memory
    naming 阿杰 for OTA. The turns stating 阿杰 rank below it."""
    old = "OTA 发版现在是阿杰负责，有问题找他"
    say(cli, "monday", f"{old}。")
    at(monkeypatch, "2026-11-26T11:00:00Z")
    consolidate(cli)
    assert old in listed(cli)
    exchange = [
        {"role": "user", "content": "阿杰下周调去做新品线了"},
        {"role": "assistant", "content": "那 OTA 发版是不是交给小林负责？"},
        {"role": "user", "content": "对，以后 OTA 的事找小林"},
    ]
    log(cli, "tuesday", exchange)
    at(monkeypatch, "2026-11-26T14:00:00Z")
    consolidate(cli)
    now = listed(cli)
    assert old not in now
    assert listed(cli, "--all")[old]["superseded_by"] == now["对，以后 OTA 的事找小林"]["id"]
    hits = recalled(cli, "OTA 发版的事现在找谁？")
    assert hits[0]["content"] == "对，以后 OTA 的事找小林"
    assert next(h for h in hits if h["content"].startswith(old))["superseded_by"]


@pytest.mark.parametrize(
    ("old", "handover", "question"),
    [
        (
            "主图一直是阿杰在做，有问题找他",
            "主图以后交给 Kelly 吧，阿杰去专心做视频",
            "主图现在归谁做？",
        ),
        (
            "The supervising solicitor on Heron is Ciarán Doyle, ask him first",
            "Ciarán's gone on secondment to London, so Niamh Gallagher is supervising Heron",
            "Who's the supervising solicitor on Heron?",
        ),
        (
            "布展那边 install team 是 Leo 带队",
            "Leo 下周开始休陪产假，install 改由陈默带",
            "install team 现在谁带队？",
        ),
    ],
)
def test_a_handover_to_other_work_named_after_the_taker_supersedes_who_left(
    cli, monkeypatch, old, handover, question
):
    """The one taking over named first and the one leaving after, off to other work
    ("阿杰去专心做视频") or away for a while ("gone on secondment"): the handover replaces
    the memory naming who left, and the turn stating it ranks below the handover."""
    say(cli, "monday", old)
    at(monkeypatch, "2026-11-26T11:00:00Z")
    consolidate(cli)
    assert old in listed(cli)
    say(cli, "tuesday", handover)
    at(monkeypatch, "2026-11-26T14:00:00Z")
    consolidate(cli)
    now = listed(cli)
    assert old not in now
    assert listed(cli, "--all")[old]["superseded_by"] == now[handover]["id"]
    hits = recalled(cli, question)
    assert hits[0]["content"] == handover
    assert next(h for h in hits if h["content"].startswith(old))["superseded_by"]


def test_a_typo_taken_back_supersedes_the_value_it_had(cli, monkeypatch):
    """ "sorry 打错，是 3月18日 闭展" takes back the closing day just typed: the memory of
    3月8日 is superseded, and the turn that typed it ranks below the correction."""
    say(cli, "monday", "展期定了：12月5日开幕，3月8日闭展", "sorry 打错，是 3月18日 闭展")
    at(monkeypatch, "2026-11-26T11:00:00Z")
    consolidate(cli)
    assert not [content for content in listed(cli) if "3月8日" in content]
    hits = recalled(cli, "这个展哪天闭展？")
    assert "3月18日" in hits[0]["content"]
    first_stale = next(n for n, h in enumerate(hits) if "3月8日" in h["content"])
    assert all("3月18日" in h["content"] for h in hits[:first_stale])


def test_idle_threshold_is_an_option(cli, monkeypatch):
    say(cli, "s", "I live in Lisbon.")
    at(monkeypatch, "2026-11-26T08:10:00Z")
    assert consolidate(cli)["sessions"]["sessions"] == 0
    assert consolidate(cli, "--idle", "5m")["sessions"]["sessions"] == 1


def test_an_episode_records_tool_calls_errors_and_its_memories(cli, home, monkeypatch):
    log_tool_session(cli)
    at(monkeypatch, "2026-11-26T11:00:00Z")
    consolidate(cli)
    (listed_episode,) = cli.json("episode", "list")
    episode = cli.json("episode", "show", listed_episode["id"][:8])
    assert episode == listed_episode
    assert episode["session"] == "work" and episode["source"] == "consolidate"
    assert episode["goal"].startswith("Please run the tests in tests/unit.")
    assert (episode["first_turn"], episode["last_turn"]) == (0, 5)
    assert episode["tools_used"] == ["run_tests", "read_file"]
    assert episode["outcome"] == "failed"  # its last tool call failed
    run, read = episode["action_nodes"]
    assert run["tool_name"] == "run_tests" and run["key_params"] == {"path": "tests/unit"}
    assert run["success"] is True and run["error_message"] is None
    assert run["result_summary"] == "12 passed in 0.4s"
    assert read["tool_name"] == "read_file" and read["key_params"] == {"path": "/etc/app.toml"}
    assert read["success"] is False
    assert read["error_message"] == "PermissionError: /etc/app.toml"
    assert {"tests/unit", "/etc/app.toml"} <= set(episode["entities"])

    memories = listed(cli, "--all")
    assert set(memories) == {
        "User's editor is Helix",
        "read_file failed: PermissionError: /etc/app.toml",
    }
    assert sorted(episode["linked_memory_ids"]) == sorted(m["id"] for m in memories.values())
    assert {m["source_episode_id"] for m in memories.values()} == {episode["id"]}
    error = memories["read_file failed: PermissionError: /etc/app.toml"]
    assert (error["type"], error["subject"], error["predicate"]) == ("ERROR", "read_file", "error")
    turn_episodes = table_rows(home, "SELECT DISTINCT extracted, episode_id FROM {turns}")
    assert turn_episodes == [(1, episode["id"])]


# --- dedup ----------------------------------------------------------------------------


def test_near_duplicates_merge_into_the_best_one(cli, monkeypatch):
    english = [
        remember(cli, "The user prefers dark mode in every editor"),
        remember(cli, "User prefers dark mode in every editor.", "--confidence", "0.9"),
        remember(cli, "User prefers the dark mode in every editor", "--importance", "0.9"),
    ]
    chinese = [
        remember(cli, "用户每天早上九点在公司用 Rust 写后端服务代码", "--importance", "0.8"),
        remember(cli, "用户每天早上九点在公司用Rust写后端服务的代码。"),
    ]
    distinct = [
        "User likes Python",
        "User likes Rust",
        "The deploy window is 3 hours long",
        "The deploy window is 5 hours long",
        "项目的端口号是 8080",
        "项目的端口号是 9090",
    ]
    for text in distinct:
        remember(cli, text)
    at(monkeypatch, "2026-11-26T09:00:00Z")
    report = consolidate(cli)["dedup"]
    assert report["clusters"] == 2 and report["superseded"] == 3
    active = listed(cli)
    winners = {english[1]["id"], chinese[0]["id"]}  # confidence first, then importance
    assert {m["id"] for m in active.values()} == winners | {
        m["id"] for text, m in active.items() if text in distinct
    }
    assert set(distinct) <= set(active)
    for winner, group in ((english[1], english), (chinese[0], chinese)):
        chain = cli.json("memory", "history", winner["id"])
        assert {m["id"] for m in chain} == {m["id"] for m in group}
        assert chain[-1]["id"] == winner["id"]
        assert all(m["superseded_by"] == winner["id"] for m in chain[:-1])
    assert [h["content"] for h in recalled(cli, "dark mode editor", "--type", "FACT")] == [
        "User prefers dark mode in every editor."
    ]


def test_memories_of_another_type_group_or_agent_never_merge(cli, monkeypatch):
    text = "The user prefers dark mode in every editor"
    remember(cli, text)
    remember(cli, "User prefers dark mode in every editor", "--type", "PREFERENCE")
    remember(cli, "User prefers dark mode in every editor!", "--group", "work")
    remember(cli, "user prefers dark mode in every editor", "--agent", "coder")
    at(monkeypatch, "2026-11-26T09:00:00Z")
    report = consolidate(cli)["dedup"]
    assert (report["memories"], report["clusters"], report["superseded"]) == (4, 0, 0)
    assert len(cli.json("memory", "list")) == 4


# --- decay, archive, expiry ----------------------------------------------------------


def test_only_short_term_memories_the_user_did_not_state_decay(cli, monkeypatch):
    fading = remember(cli, "The nightly build runs on runner r7", "--duration", "3d",
                      "--source", "agent", "--importance", "0.32")  # fmt: skip
    stated = remember(cli, "The staging token rotates at noon", "--duration", "3d",
                      "--importance", "0.32")  # fmt: skip
    agents = remember(cli, "The weekly sync notes live in Notion", "--duration", "30d",
                      "--source", "agent", "--importance", "0.2")  # fmt: skip
    kept = remember(cli, "User prefers tabs", "--type", "PREFERENCE", "--importance", "0.2")
    assert [m["priority"] for m in (fading, stated, agents, kept)] == [
        "SHORT_TERM", "SHORT_TERM", "LONG_TERM", "PERMANENT"
    ]  # fmt: skip

    at(monkeypatch, "2026-11-27T08:00:00Z")  # a day: 0.32·0.9 = 0.288, below 0.3
    report = consolidate(cli)
    assert report["decay"] == {"archived": 0, "demoted": 1}
    shown = cli.json("memory", "show", fading["id"])
    assert shown["priority"] == "TRANSIENT" and shown["expires_at"] == "2026-11-28T08:00:00.000Z"
    for memory in (stated, agents, kept):  # user-stated, LONG_TERM and PERMANENT keep theirs
        same = cli.json("memory", "show", memory["id"])
        assert (same["priority"], same["expires_at"]) == (memory["priority"], memory["expires_at"])
    assert consolidate(cli)["decay"] == {"archived": 0, "demoted": 0}  # already TRANSIENT

    at(monkeypatch, "2026-11-28T08:00:00Z")  # the demoted one is gone, the stated one is not
    assert consolidate(cli)["expire"] == {"deleted": 1, "attachments": 0, "working": 0}
    assert set(listed(cli)) == {stated["content"], agents["content"], kept["content"]}
    at(monkeypatch, "2026-11-29T08:00:00Z")  # the stated one lives exactly its 3 days
    assert consolidate(cli)["expire"] == {"deleted": 1, "attachments": 0, "working": 0}
    assert set(listed(cli)) == {agents["content"], kept["content"]}
    at(monkeypatch, "2027-11-26T08:00:00Z")  # a year on, the permanent one is untouched
    report = consolidate(cli)
    assert report["decay"] == {"archived": 0, "demoted": 0}
    assert set(listed(cli)) == {kept["content"]}


def test_an_unused_memory_is_archived_and_can_be_restored(cli, monkeypatch):
    def short(text: str, *args: str) -> dict:
        return remember(cli, text, "--duration", "3d", "--importance", "0.12", *args)

    forgotten = short("The weekly sync notes live in Notion", "--source", "agent")
    used = short("The staging cluster is called kestrel", "--source", "agent")
    stated = short("The demo account password hint is teal")  # the user said it
    for _ in range(2):
        recalled(cli, "kestrel staging cluster")

    at(monkeypatch, "2026-11-28T08:00:00Z")  # 2 days, never accessed: 0.12·0.9² = 0.097
    report = consolidate(cli)
    assert report["decay"]["archived"] == 1
    assert set(listed(cli)) == {used["content"], stated["content"]}
    assert recalled(cli, "weekly sync notes Notion") == []
    everything = listed(cli, "--all")
    assert everything[forgotten["content"]]["archived_at"] == "2026-11-28T08:00:00.000Z"
    assert everything[used["content"]]["archived_at"] is None  # accessed twice
    assert everything[stated["content"]]["archived_at"] is None  # user-stated: no decay
    assert consolidate(cli)["decay"]["archived"] == 0  # archived once, not again
    assert (
        listed(cli, "--all")[forgotten["content"]]["archived_at"]
        == everything[forgotten["content"]]["archived_at"]
    )

    at(monkeypatch, "2026-11-28T09:00:00Z")
    restored = cli.json("memory", "restore", forgotten["id"])
    assert restored["archived_at"] is None
    assert restored["last_accessed_at"] == "2026-11-28T09:00:00.000Z"
    assert forgotten["content"] in listed(cli)
    assert [h["content"] for h in recalled(cli, "weekly sync notes Notion")] == [
        forgotten["content"]
    ]
    at(monkeypatch, "2026-11-28T09:01:00Z")
    assert consolidate(cli)["decay"]["archived"] == 0  # its decay starts again


def test_expired_memories_are_deleted_with_their_index_entries(
    cli, home, monkeypatch, store_backend
):
    doomed = remember(cli, "Temporary staging token is zebrafish", "--duration", "24h")
    remember(cli, "Production token rotates monthly", "--duration", "30d")
    at(monkeypatch, "2026-11-28T08:00:00Z")
    assert consolidate(cli)["expire"] == {"deleted": 1, "attachments": 0, "working": 0}
    assert doomed["content"] not in listed(cli, "--all")
    hits = recalled(cli, "zebrafish staging token")
    assert hits and not [h for h in hits if "zebrafish" in h["content"]]
    assert table_rows(home, "SELECT count(*) FROM memories WHERE id = ?", doomed["id"]) == [(0,)]
    if store_backend == "sqlite":  # PostgreSQL's index is a column of the row itself
        matches = "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?"
        assert table_rows(home, matches, "zebrafish") == []
        assert len(table_rows(home, matches, "monthly")) == 1


@pytest.mark.usefixtures("store")
def test_expired_working_memory_of_a_quiet_group_is_deleted(cli, home, monkeypatch):
    cli.ok("working", "add", "-g", "quiet", "热数据：用户刚刚讨论了架构选项。")
    at(monkeypatch, "2026-11-27T04:00:00Z")
    cli.ok("working", "add", "-g", "busy", "The user is comparing two queue designs today")
    at(monkeypatch, "2026-11-27T09:00:00Z")  # 25 h after the first entry, 5 h after the second
    assert consolidate(cli, "--dry-run")["expire"]["working"] == 1
    assert len(table_rows(home, "SELECT id FROM working_memory")) == 2
    assert consolidate(cli)["expire"]["working"] == 1
    assert table_rows(home, "SELECT group_id FROM working_memory") == [("busy",)]
    assert consolidate(cli)["expire"]["working"] == 0


# --- identity files -------------------------------------------------------------------


def test_memory_md_is_short_capped_per_type_and_ranked(cli, home, monkeypatch):
    lines = []
    for n in range(100):
        kind = ("FACT", "RULE", "PREFERENCE", "SKILL", "ERROR")[n % 5]
        importance = round(0.1 + (n % 9) / 10, 2)
        lines.append(
            json.dumps(
                {
                    "content": f"Memory number {n} about topic {n * 7919 % 1000}",
                    "type": kind,
                    "importance": importance,
                    "duration": "permanent",
                }
            )
        )
    cli.ok("remember", "--batch", input="\n".join(lines[:50]))
    at(monkeypatch, "2026-12-26T08:00:00Z")  # the rest 30 days newer: recency halves
    cli.ok("remember", "--batch", input="\n".join(lines[50:]))
    report = consolidate(cli)
    text = (home / "identity/MEMORY.md").read_text(encoding="utf-8")
    assert report["identity"]["MEMORY.md"]["chars"] == len(text) <= 1500
    sections = _sections(text)
    assert set(sections) == {
        "规则 Rules",
        "偏好 Preferences",
        "事实 Facts",
        "技能 Skills",
        "教训 Lessons",
    }
    memories = {m["content"]: m for m in cli.json("memory", "list", "--limit", "1000")}
    for title, items in sections.items():
        assert 1 <= len(items) <= 5, title
        scores = [_score(memories[i], "2026-12-26") for i in items]
        assert scores == sorted(scores, reverse=True), title
        kind = memories[items[0]]["type"]
        best_of_type = sorted(
            (_score(m, "2026-12-26") for m in memories.values() if m["type"] == kind),
            reverse=True,
        )
        assert scores == best_of_type[: len(scores)], title

    # rewritten on the next run
    remember(cli, "A very important rule", "--type", "RULE", "--importance", "1")
    consolidate(cli)
    rules = _sections((home / "identity/MEMORY.md").read_text(encoding="utf-8"))["规则 Rules"]
    assert rules[0] == "A very important rule"


def _score(memory: dict, day: str) -> float:
    age = 0 if memory["updated_at"].startswith(day) else 30
    return memory["importance"] * 0.5 ** (age / 30)


def _sections(text: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("## "):
            current = line[3:]
            found[current] = []
        elif line.startswith("- ") and current:
            found[current].append(line[2:])
    return found


def test_user_md_groups_what_the_user_said_by_category(cli, home, monkeypatch):
    say(
        cli,
        "intro",
        "My name is Priya. I'm using Python 3.11. My editor is Helix. "
        "I like dark themes. My project is a ledger app.",
    )
    remember(cli, "The CI runs on Fridays")  # not about the user
    at(monkeypatch, "2026-11-26T11:00:00Z")
    consolidate(cli)
    sections = _sections((home / "identity/USER.md").read_text(encoding="utf-8"))
    assert sections == {
        "基本信息 Basic info": ["User's name is Priya"],
        "技术栈 Tech stack": ["User is using Python 3.11"],
        "环境 Environment": ["User's editor is Helix"],
        "项目 Projects": ["User's project is a ledger app"],
        "偏好 Preferences": ["User likes dark themes"],
    }
    say(cli, "intro", "我住在杭州。")
    at(monkeypatch, "2026-11-26T14:00:00Z")
    consolidate(cli)
    sections = _sections((home / "identity/USER.md").read_text(encoding="utf-8"))
    assert "用户住在杭州" in sections["基本信息 Basic info"]


def test_identity_files_do_not_depend_on_memory_ids(cli, home, monkeypatch):
    """Equal scores at the per-type and budget cuts are broken by content, not by the
    random ids: the same memories, stored in another order in another store, give the
    same MEMORY.md and USER.md byte for byte."""
    topics = (
        "apples bridges compilers dolphins engines forests glaciers "
        "harbours islands jungles kernels lanterns meadows nebulae"
    ).split()

    def words(topic: str, kind: str) -> str:  # no two alike, so none merge as duplicates
        return " ".join(f"{topic}{kind}{n}" for n in range(8))

    memories = [
        {"content": words(t, "fact"), "type": "FACT", "importance": 0.6, "duration": "permanent"}
        for t in topics
    ] + [
        {"content": words(t, "like"), "type": "PREFERENCE", "subject": "user",
         "importance": 0.6, "duration": "permanent"}
        for t in topics
    ]  # fmt: skip
    files = []
    for name, order in (("first", memories), ("second", memories[::-1])):
        root = home.parent / name
        monkeypatch.setenv("SOLOQUEUE_HOME", str(root))
        cli.ok("remember", "--batch", input="\n".join(map(json.dumps, order)))
        consolidate(cli)
        files.append({n: (root / "identity" / n).read_bytes() for n in ("MEMORY.md", "USER.md")})
    assert files[0] == files[1]
    facts = _sections(files[0]["MEMORY.md"].decode())["事实 Facts"]
    assert len(facts) == 5 and facts == sorted(facts)  # cut at five, by content
    preferences = _sections(files[0]["USER.md"].decode())["偏好 Preferences"]
    assert len(preferences) < len(topics) and preferences == sorted(preferences)  # the budget


# --- dry run and lock -----------------------------------------------------------------


def test_dry_run_writes_nothing_and_reports_what_a_real_run_does(cli, home, monkeypatch):
    log_tool_session(cli)
    remember(cli, "The user prefers dark mode in every editor", "--confidence", "0.9")
    remember(cli, "User prefers dark mode in every editor.")
    remember(cli, "Temporary staging token is abc123", "--duration", "24h")
    remember(cli, "The release branch is cut on Mondays", "--duration", "30d")
    consolidate(cli)  # identity/ and the state file exist from now on
    say(cli, "later", "I live in Lisbon.")
    at(monkeypatch, "2026-12-02T08:00:00Z")  # an agent's SHORT_TERM note, decayed tomorrow
    remember(cli, "The nightly build runs on runner r7", "--duration", "3d",
             "--source", "agent", "--importance", "0.3")  # fmt: skip
    at(monkeypatch, "2026-12-03T08:00:00Z")
    before_tree, before_db = tree_snapshot(home), db_content(home)
    dry = consolidate(cli, "--dry-run")
    assert dry["dry_run"] is True and dry["daily_summary"]["written"] is False
    assert tree_snapshot(home) == before_tree
    assert db_content(home) == before_db
    real = consolidate(cli)
    assert real["daily_summary"]["written"] is True
    for step in ("sessions", "decay", "expire", "identity"):
        assert dry[step] == real[step], step
    assert {k: v for k, v in dry["dedup"].items() if k != "seconds"} == {
        k: v for k, v in real["dedup"].items() if k != "seconds"
    }
    assert real["sessions"]["episodes"] == 2 and real["decay"]["demoted"] >= 1


@pytest.mark.usefixtures("store")  # the lock file lives there
def test_a_second_consolidate_exits_75_while_one_runs(cli, home):
    remember(cli, "anything")  # the store exists
    with lock.exclusive(home / ".consolidate_state", "consolidate", note_holder=False):
        result = cli("consolidate")
        assert result.exit_code == EX_TEMPFAIL
        assert result.stderr.startswith("error: another consolidate is running")
        assert result.stdout == ""
    assert consolidate(cli)["dry_run"] is False


# --- episodes, scratchpad, recall ------------------------------------------------------


def test_episode_list_show_search_and_recall(cli, monkeypatch):
    log_tool_session(cli, "work")
    say(cli, "zh", "帮我把部署脚本改成用 Docker Compose 启动")
    assert cli.json("episode", "list") == []
    at(monkeypatch, "2026-11-26T11:00:00Z")
    consolidate(cli)
    listed_episodes = cli.json("episode", "list")
    assert [e["session"] for e in listed_episodes] == ["zh", "work"]  # newest first
    assert [e["session"] for e in cli.json("episode", "list", "--session", "work")] == ["work"]
    assert [e["session"] for e in cli.json("episode", "search", "run_tests")] == ["work"]
    assert [e["session"] for e in cli.json("episode", "search", "部署脚本")] == ["zh"]
    assert cli.json("episode", "search", "nothing-like-this") == []
    assert cli("episode", "show", "ffffffff").exit_code == 3
    refused = cli("episode", "show", "xyz")
    assert refused.exit_code == EX_DATAERR
    assert refused.stderr.startswith("error: not an episode id: 'xyz'")
    text = cli.ok("--format", "text", "episode", "show", listed_episodes[1]["id"]).stdout
    assert text.startswith("6 轮")  # the summary in the language setting's (zh: the suite's)

    hits = recalled(cli, "部署脚本 Docker Compose")
    episode_hits = [h for h in hits if h["kind"] == "episode"]
    assert episode_hits and episode_hits[0]["id"] == listed_episodes[0]["id"]
    assert episode_hits[0]["session"] == "zh" and episode_hits[0]["channel"] == "episodes"


@pytest.mark.usefixtures("store")
def test_scratchpad_show_set_and_limits(cli, home, monkeypatch):
    empty = cli.json("scratchpad", "show")
    assert empty["active_projects"] == [] and empty["updated_at"] is None
    assert os.listdir(home) == [".gitignore"]
    note = (
        "## 当前项目\n- ledger app\n- blog\n\n## 近期进展\n- fixed login\n\n"
        "## Open questions\n- which database?\n\n## 下一步\n- write tests\n- deploy\n"
    )
    pad = cli.json("scratchpad", "set", note)
    assert pad["content"] == note
    assert pad["active_projects"] == ["ledger app", "blog"]
    assert pad["current_focus"] == "ledger app"
    assert pad["recent_progress"] == ["fixed login"]
    assert pad["open_questions"] == ["which database?"]
    assert pad["next_steps"] == ["write tests", "deploy"]
    assert cli.json("scratchpad", "show") == pad
    assert cli.json("scratchpad", "show", "--agent", "other")["content"] != note
    from_stdin = cli.json("scratchpad", "set", "-", "--agent", "other", input="## 下一步\n- a\n")
    assert from_stdin["next_steps"] == ["a"]

    too_long = cli("scratchpad", "set", "x" * 2001)
    assert too_long.exit_code == EX_DATAERR
    assert "at most 2000 characters" in too_long.stderr
    assert cli.json("scratchpad", "show") == pad  # unchanged
    assert cli.json("scratchpad", "set", "y" * 2000)["content"] == "y" * 2000
    edit = cli("scratchpad", "edit")
    assert edit.exit_code == EX_USAGE and "needs a terminal" in edit.stderr

    # a digested session is noted under 近期进展, newest first
    cli.json("scratchpad", "set", note)
    say(cli, "s", "Refactor the payment module")
    at(monkeypatch, "2026-11-26T11:00:00Z")
    consolidate(cli)
    progress = cli.json("scratchpad", "show")["recent_progress"]
    assert progress == ["11/26: Refactor the payment module (success)", "fixed login"]


def test_a_second_run_changes_nothing_when_keepers_are_near_duplicates_again(cli, home):
    # Clusters whose keepers are near-duplicates of each other: one pass of clustering
    # leaves pairs that a second run would supersede.
    import random

    rng = random.Random(3)
    words = [f"w{i}" for i in range(40)]
    with Store(home, clock=lambda: parse("07:00")) as store:
        for _ in range(300):
            store.remember(" ".join(rng.sample(words[:12], 6) + [rng.choice(words)]))
    assert consolidate(cli)["dedup"]["superseded"] > 0
    before = db_content(home)
    second = consolidate(cli)
    assert second["dedup"]["superseded"] == 0 and second["dedup"]["clusters"] == 0
    assert second["decay"] == {"archived": 0, "demoted": 0}
    assert second["expire"] == {"deleted": 0, "attachments": 0, "working": 0}
    assert db_content(home)["memories"] == before["memories"]


def test_a_second_run_changes_nothing_after_decay_archives_a_crowd(cli, monkeypatch):
    # While 60 fading notes share the word "release", dedup leaves it out of the
    # signatures and these two near-duplicates land in no common bucket; once decay
    # has archived the notes, it would not. Dedup runs after decay and expiry, so the
    # first run already sees what a second would.
    notes = [
        {"content": f"Release note {i} lists ticket {1000 + i}", "source": "agent",
         "duration": "3d", "importance": 0.12}
        for i in range(60)
    ]  # fmt: skip
    cli.ok("remember", "--batch", input="\n".join(map(json.dumps, notes)))
    for day in ("friday", "saturday"):
        cli.ok(
            "remember", f"Release vault nightly region export report secrets kafka staging {day}"
        )
    at(monkeypatch, "2026-11-28T08:00:00Z")  # 0.12·0.9² = 0.097: the notes are archived
    first = consolidate(cli)
    assert first["decay"]["archived"] == 60 and first["dedup"]["superseded"] == 1
    second = consolidate(cli)
    assert second["dedup"]["superseded"] == 0 and second["decay"]["archived"] == 0
    assert len([m for m in listed(cli) if m.startswith("Release vault")]) == 1
