"""`log`: every input form, idempotency, and the JSON it prints."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest

from tests.conftest import NOW, rewrite, tree_snapshot

LOGGED_KEYS = {
    "id",
    "group",
    "agent",
    "session",
    "turn_index",
    "role",
    "event_id",
    "timestamp",
    "content",
    "offloaded",
    "duplicate",
    "tool_results",
}


def jsonl_records(
    home: Path, session: str, group: str = "default", agent: str = "default"
) -> list[dict]:
    path = home / "groups" / group / "sessions" / agent / f"{session}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_log_text_argument_prints_the_stored_turn(cli, home):
    turn = cli.json("log", "--session", "s1", "--role", "user", "你好 world")
    assert set(turn) == LOGGED_KEYS
    assert turn["turn_index"] == 0 and turn["role"] == "user" and turn["content"] == "你好 world"
    assert turn["timestamp"] == "2026-11-26T08:00:00.000Z"
    assert isinstance(turn["id"], str) and turn["duplicate"] is False
    assert jsonl_records(home, "s1") == [
        {
            "turn_index": 0,
            "timestamp": "2026-11-26T08:00:00.000Z",
            "role": "user",
            "content": "你好 world",
        }
    ]
    assert "你好 world" in (home / "groups/default/sessions/default/s1.md").read_text(
        encoding="utf-8"
    )


def test_turn_indexes_count_up_per_session(cli):
    for expected in range(3):
        assert cli.json("log", "-s", "a", f"turn {expected}")["turn_index"] == expected
    assert cli.json("log", "-s", "b", "other")["turn_index"] == 0


def test_session_comes_from_the_environment(cli, monkeypatch):
    monkeypatch.setenv("SOLOQUEUE_SESSION", "from-env")
    monkeypatch.setenv("SOLOQUEUE_AGENT", "coder")
    turn = cli.json("log", "hello")
    assert (turn["session"], turn["agent"], turn["group"]) == ("from-env", "coder", "default")


def test_missing_session_is_a_clear_error(cli, home):
    result = cli("log", "hello")
    assert result.exit_code == 65
    assert "no session" in result.stderr
    assert not home.exists() or not list(home.rglob("*.jsonl"))


def test_one_json_event_on_stdin_with_tool_calls(cli, home):
    event = {
        "role": "assistant",
        "content": "reading",
        "event_id": "e1",
        "metadata": {"step": 3},
        "tool_calls": [{"id": "c1", "name": "read_file", "input": {"path": "a.py"}}],
    }
    turn = cli.json("log", "-s", "s", input=json.dumps(event))
    assert turn["event_id"] == "e1"
    (record,) = jsonl_records(home, "s")
    assert record["tool_calls"] == event["tool_calls"] and record["metadata"] == {"step": 3}


def test_event_id_makes_a_retried_call_idempotent(cli, home):
    event = json.dumps({"role": "user", "content": "once", "event_id": "hook-42"})
    first = cli.json("log", "-s", "s", input=event)
    again = cli.json("log", "-s", "s", input=event)
    assert again["duplicate"] is True and again["id"] == first["id"]
    assert len(jsonl_records(home, "s")) == 1


def test_a_chunk_asks_for_its_event_ids_once_and_repeats_stay_duplicates(home):
    """Each event id of a batch's chunk was looked up with its own query (a batch keys
    every line): now one query per session asks for them all, and what comes back is
    the same, a repeated id within the chunk or from before reported as the duplicate
    of the turn it logged first."""
    from datetime import datetime

    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.sessions.events import parse_event
    from soloqueue_mem.sessions.writer import log_events
    from soloqueue_mem.storage.sqlite.stores import open_memory

    now = datetime.fromisoformat(NOW)
    conn = open_memory(Home(home), Config())
    asked: list[str] = []
    conn.set_trace_callback(lambda sql: asked.append(sql) if "event_id IN" in sql else None)

    def logged(ids: list[str]) -> list[tuple[int, bool]]:
        events = [
            (n, parse_event({"role": "user", "content": i, "event_id": i}))
            for n, i in enumerate(ids)
        ]
        turns = list(log_events(Home(home), conn, events, ("g", "a", "s"), Config(), now))
        return [(turn.id, turn.duplicate) for turn in turns]

    first = logged(["e1", "e2", "e1"])
    assert first == [(1, False), (2, False), (1, True)]
    assert logged(["e3", "e2", "e4"]) == [(3, False), (2, True), (4, False)]
    assert len(asked) == 2
    conn.close()


def test_batch_routes_events_to_their_own_sessions(cli, home):
    lines = [
        {"role": "user", "content": "a1", "session": "a"},
        {"role": "user", "content": "b1", "session": "b", "agent": "bot", "group": "g2"},
        {"role": "assistant", "content": "a2", "session": "a"},
    ]
    out = cli.jsonl("log", "--batch", input="\n".join(json.dumps(x) for x in lines) + "\n")
    assert [(t["session"], t["turn_index"], t["line"]) for t in out] == [
        ("a", 0, 1),
        ("b", 0, 2),
        ("a", 1, 3),
    ]
    assert [r["content"] for r in jsonl_records(home, "b", group="g2", agent="bot")] == ["b1"]


def test_batch_turn_ids_count_up_and_never_reuse_a_deleted_one(cli, home):
    """A chunk's turns are inserted together with the ids AUTOINCREMENT would give:
    each row and its full-text entry share the printed id (trace finds a turn through
    that entry), and the id of a deleted last turn is not given again."""
    lines = "".join(
        json.dumps({"role": "user", "content": f"词{i} word{i}"}) + "\n" for i in range(5)
    )
    first = cli.jsonl("log", "--batch", "-s", "s", input=lines)
    assert [int(t["id"]) for t in first] == [1, 2, 3, 4, 5]
    rewrite(home, "DELETE FROM {turns} WHERE id = 5")
    again = cli.jsonl("log", "--batch", "-s", "t", input=lines[: lines.index("\n") + 1])
    assert [int(t["id"]) for t in again] == [6]
    (found,) = cli.json("trace", "word3")
    assert (found["id"], found["content"]) == ("4", "词3 word3")


def test_batch_reports_bad_lines_and_logs_the_rest(cli, home):
    stream = (
        "\n".join(
            [
                json.dumps({"role": "user", "content": "good 1"}),
                "{not json",
                json.dumps({"role": "wizard", "content": "x"}),
                json.dumps({"role": "user", "content": 5}),
                json.dumps({"role": "user", "content": "good 2"}),
            ]
        )
        + "\n"
    )
    result = cli("log", "--batch", "-s", "s", "--format", "jsonl", input=stream)
    assert result.exit_code == 65
    assert [json.loads(x)["content"] for x in result.stdout.splitlines()] == ["good 1", "good 2"]
    errors = [json.loads(line)["error"] for line in result.stderr.splitlines()]
    assert [(e["line"], e["code"], e["exit_code"]) for e in errors[:3]] == [
        (2, "bad_input", 65),
        (3, "bad_input", 65),
        (4, "bad_input", 65),
    ]
    assert errors[0]["message"].startswith("line 2: malformed JSON")
    assert errors[1]["message"].startswith("line 3: unknown role 'wizard'")
    assert errors[3]["code"] == "partial"
    assert [r["content"] for r in jsonl_records(home, "s")] == ["good 1", "good 2"]


def test_batch_errors_are_plain_lines_without_an_explicit_json_format(cli):
    result = cli("log", "--batch", "-s", "s", input='{"role": "user", "content": "ok"}\n[]\n')
    assert result.exit_code == 65
    assert result.stderr.splitlines() == [
        "error: line 2: expected a JSON object, got list",
        "error: 1 line(s) rejected, the others were logged",
    ]


def test_openai_messages_are_accepted_as_they_are(cli, home):
    messages = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": [{"type": "text", "text": "list files"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_9",
                    "type": "function",
                    "function": {"name": "ls", "arguments": '{"dir":"."}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_9", "content": "a.txt\nb.txt"},
        {"role": "assistant", "content": "Two files.", "refusal": None},
    ]
    out = cli.jsonl("log", "-s", "oa", input=json.dumps(messages))
    assert [t["role"] for t in out] == ["system", "user", "assistant", "tool", "assistant"]
    exported = json.loads(cli.ok("session", "export", "oa", "--as", "openai").stdout)
    assert exported == messages


def test_a_bad_item_rejects_the_whole_document(cli, home):
    result = cli(
        "log", "-s", "s", input=json.dumps([{"role": "user", "content": "ok"}, {"role": 3}])
    )
    assert result.exit_code == 65
    assert result.stderr.startswith("error: item 2: missing 'role'")
    assert result.stdout == ""
    assert tree_snapshot(home) == {}


def test_text_from_stdin_with_dash(cli, home):
    turn = cli.json("log", "-s", "s", "--role", "tool", "-", input="line one\n第二行\n")
    assert turn["content"] == "line one\n第二行\n"


def test_metadata_option_must_be_a_json_object(cli):
    assert cli.json("log", "-s", "s", "--metadata", '{"k": 1}', "x")["turn_index"] == 0
    result = cli("log", "-s", "s", "--metadata", "[1]", "x")
    assert result.exit_code == 65 and "'metadata' must be a JSON object" in result.stderr


def test_timestamps_default_to_the_pinned_clock_and_are_normalised(cli, home):
    cli.ok(
        "log",
        "-s",
        "s",
        input=json.dumps(
            {"role": "user", "content": "x", "timestamp": "2025-01-02T03:04:05+08:00"}
        ),
    )
    cli.ok("log", "-s", "s", "y")
    stamps = [r["timestamp"] for r in jsonl_records(home, "s")]
    assert stamps == ["2025-01-01T19:04:05.000Z", NOW.replace("Z", ".000Z")]


def test_thoughts_are_logged_but_not_exported_as_chat_messages(cli):
    cli.ok("log", "-s", "t", "--role", "thought", "considering options")
    cli.ok("log", "-s", "t", "--role", "assistant", "done")
    exported = json.loads(cli.ok("session", "export", "t", "--as", "openai").stdout)
    assert exported == [{"role": "assistant", "content": "done"}]


@pytest.mark.sqlite_only(
    "a documented difference, not a gap: PostgreSQL text cannot hold NUL (U+0000), so the"
    " line is refused there with its reason (tests/pg/test_sessions.py checks that)"
)
def test_nul_in_content_round_trips(cli, home):
    text = "before\x00after"
    cli.ok("log", "-s", "n", input=json.dumps({"role": "user", "content": text}))
    assert jsonl_records(home, "n")[0]["content"] == text
    shown = cli.json("session", "show", "n")
    assert shown["turns"][0]["content"] == text


def test_a_torn_tail_that_cannot_be_set_aside_fails_and_unlocks_the_log(cli, home):
    """Opening a session log locks it, then moves a torn tail to ``<log>.torn``. If that
    fails, the write is a storage error (exit 74) and the log's lock is let go: a
    long-lived process (``serve``) that kept it would hang every later write to the
    session."""
    cli.ok("log", "-s", "s", "first")
    path = home / "groups" / "default" / "sessions" / "default" / "s.jsonl"
    with open(path, "ab") as log:
        log.write(b'{"torn')
    aside = path.with_name("s.jsonl.torn")
    aside.mkdir()  # the fragment cannot be written there
    result = cli("log", "-s", "s", "second")
    assert result.exit_code == 74, (result.exit_code, result.stderr)
    assert result.stderr.startswith("error: ") and "s.jsonl.torn" in result.stderr
    probe = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError if still held
    finally:
        os.close(probe)
    aside.rmdir()
    assert cli.json("log", "-s", "s", "second")["turn_index"] == 1
