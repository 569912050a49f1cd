"""A tool failure the user answers is kept as a lesson (``lifecycle/lessons.py``): the
attempt, the error's message line and the user's answer: a SKILL that replaces the
failure's ERROR memory and outlives its 7 days and the tool's next failure."""

from __future__ import annotations

import json

from tests.cli.test_consolidate import at, consolidate, listed, recalled

PSQL = "psql -h pg-replica-02 -U monitor -c 'select now() - pg_last_xact_replay_timestamp()'"
DENIED = (
    'psql: error: connection to server at "pg-replica-02" (10.0.3.12), port 5432 failed: '
    'FATAL:  password authentication failed for user "monitor"'
)
LESSON = f"{PSQL} failed: {DENIED} — Monitor 的密码上周轮换了，vault 里有"  # own words: capitalised


def shell(call_id: str, command: str, output: str) -> list[dict]:
    """The assistant's `shell` call and its result, as an OpenAI client sends them."""
    arguments = json.dumps({"cmd": command})
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": "shell", "arguments": arguments},
    }
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": output},
    ]


def a_day(cli, monkeypatch, day: str, session: str, messages: list[dict]) -> None:
    """``messages`` logged in the morning of ``day``, consolidated that night."""
    at(monkeypatch, f"{day}T10:00:00Z")
    cli.ok("log", "-s", session, input=json.dumps(messages))
    at(monkeypatch, f"{day}T23:00:00Z")
    consolidate(cli)


def test_an_answered_failure_is_a_lesson_that_outlives_its_error(cli, monkeypatch):
    answered = [
        {"role": "user", "content": "帮我看看复制延迟"},
        *shell("c1", PSQL, DENIED),
        {"role": "assistant", "content": "认证失败：monitor 用户的密码不对。"},
        {"role": "user", "content": "monitor 的密码上周轮换了，vault 里有。谢谢"},
    ]
    a_day(cli, monkeypatch, "2026-11-02", "s1", answered)
    lesson = listed(cli)[LESSON]
    assert lesson["type"] == "SKILL" and lesson["expires_at"] is None
    # it replaces the ERROR memory of the same failure
    history = cli.json("memory", "history", lesson["id"])
    assert [(m["type"], m["content"]) for m in history] == [
        ("ERROR", f"shell failed: {DENIED}"),
        ("SKILL", LESSON),
    ]

    # the tool's next failure replaces its ERROR, not the lesson
    failed = shell("c2", "psql -c 'select 1' reports", 'ERROR:  relation "reports" does not exist')
    a_day(cli, monkeypatch, "2026-11-03", "s2", failed)
    (error,) = cli.json("memory", "list", "--type", "ERROR")
    assert error["content"] == 'shell failed: ERROR:  relation "reports" does not exist'
    # eleven days on, that ERROR has expired (7 days); the lesson is kept
    at(monkeypatch, "2026-11-14T23:00:00Z")
    consolidate(cli)
    assert cli.json("memory", "list", "--type", "ERROR") == []
    assert [m["content"] for m in cli.json("memory", "list", "--type", "SKILL")] == [LESSON]
    (first, *_) = recalled(cli, "why did the replay timestamp query on pg-replica-02 fail?")
    assert first["content"] == LESSON


def test_only_the_failure_the_user_answers_with_a_statement_is_a_lesson(cli, monkeypatch):
    a_day(
        cli,
        monkeypatch,
        "2026-11-02",
        "s1",
        [
            {"role": "user", "content": "run the migration"},
            *shell("c1", "alembic upgrade head", "ERROR: could not connect to db"),
            {"role": "user", "content": "Is the database up?"},  # a question: no lesson
            *shell("c2", "alembic upgrade head", "ERROR: could not connect to db"),
            *shell("c3", "pg_isready", "accepting connections"),  # tried again, and it worked
            {"role": "user", "content": "Postgres was restarting, it is fine now."},
            *shell("c4", "alembic upgrade head", "ERROR: relation users already exists"),
            {"role": "user", "content": "The users table came from the old schema. Drop it."},
        ],
    )
    assert [m["content"] for m in cli.json("memory", "list", "--type", "SKILL")] == [
        "alembic upgrade head failed: ERROR: relation users already exists"
        " — The users table came from the old schema"
    ]
