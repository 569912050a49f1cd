"""`import claude-code`: a Claude Code transcript written for this project
(tests/data/claude_code/transcript.jsonl) through the CLI and the library; Anthropic
thinking blocks through `log`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from soloqueue_mem.config import Config
from soloqueue_mem.home import Home
from soloqueue_mem.integrations.claude_transcript import (
    import_transcripts,
    last_reply,
    transcript_event,
)
from soloqueue_mem.storage.sqlite.backend import SqliteBackend
from tests.conftest import tree_snapshot

DATA = Path(__file__).parent.parent / "data" / "claude_code"
TRANSCRIPT = DATA / "transcript.jsonl"
SESSION = "b1e5d0c2-6a3f-4f7e-8d21-93c4a7e5f601"
MESSAGES = 8  # user and assistant records that hold something (not meta, not redacted)


def uuid(n: int) -> str:
    return f"0d1f2a3b-0000-4000-8000-{n:012d}"


def test_a_transcript_becomes_a_session(cli):
    (row,) = cli.json("import", "claude-code", str(TRANSCRIPT))
    assert row == {
        "path": str(TRANSCRIPT),
        "imported": MESSAGES,
        "duplicates": 0,
        "rejected": 0,
        "sessions": [SESSION],
    }
    turns = cli.json("session", "show", SESSION)["turns"]
    assert [t["event_id"] for t in turns] == [uuid(n) for n in (2, 3, 4, 5, 6, 8, 9, 11)]
    assert turns[0]["timestamp"] == "2026-11-20T09:14:05.402Z"
    assert turns[0]["content"].endswith("请帮我查一下原因。")
    assert turns[1]["metadata"] == {
        "source": "claude-code",
        "message_id": "msg_01AbCdEf1",
        "model": "claude-sonnet-4-5-20250929",
        "parent_uuid": uuid(2),
    }


def test_tool_calls_results_and_thinking_are_searchable(cli):
    cli.ok("import", "claude-code", str(TRANSCRIPT))
    call = cli.json("trace", "orders_coupon_id_idx")[0]
    assert call["tool_calls"][0]["name"] == "Edit"
    result = cli.json("trace", "QueryCanceled")[0]
    assert result["tool_results"][0]["is_error"] is True
    thought = cli.json("trace", "smells like a missing index")[0]
    assert thought["event_id"] == uuid(3)


def test_the_messages_export_in_openai_form(cli):
    cli.ok("import", "claude-code", str(TRANSCRIPT))
    exported = json.loads(cli.ok("session", "export", SESSION, "--as", "openai").stdout)
    roles = ["user", "assistant", "assistant", "tool", "assistant", "tool", "assistant"]
    assert [m["role"] for m in exported] == roles  # the reasoning-only reply is left out
    records = [json.loads(line) for line in TRANSCRIPT.read_text().splitlines()]
    by_uuid = {r.get("uuid"): r for r in records}
    assert exported[0] == by_uuid[uuid(2)]["message"]  # plain text as it was sent
    assert exported[2]["tool_calls"][0]["id"] == exported[3]["tool_call_id"] == "toolu_01Vx8RkLq3"


def test_importing_again_adds_only_what_is_new(cli, tmp_path):
    cli.ok("import", "claude-code", str(TRANSCRIPT))
    (again,) = cli.json("import", "claude-code", str(TRANSCRIPT))
    assert (again["imported"], again["duplicates"]) == (0, MESSAGES)
    longer = tmp_path / f"{SESSION}.jsonl"
    record = json.loads(TRANSCRIPT.read_text().splitlines()[3])
    record.update(uuid=uuid(12), message={"role": "user", "content": "Thanks, ship it."})
    longer.write_text(TRANSCRIPT.read_text() + json.dumps(record) + "\n")
    (grown,) = cli.json("import", "claude-code", str(longer))
    assert (grown["imported"], grown["duplicates"]) == (1, MESSAGES)
    (session,) = cli.json("session", "list")
    assert session["turn_count"] == MESSAGES + 1


def test_a_folder_imports_every_transcript_in_it(cli, tmp_path):
    project = tmp_path / "projects" / "-home-dev-shop"
    project.mkdir(parents=True)
    shutil.copy(TRANSCRIPT, project / f"{SESSION}.jsonl")
    (project / "notes.txt").write_text("not a transcript")
    rows = cli.json("import", "claude-code", str(tmp_path / "projects"))
    assert [row["imported"] for row in rows] == [MESSAGES]


def test_bad_lines_are_reported_and_the_good_ones_imported(cli, tmp_path):
    lines = TRANSCRIPT.read_text().splitlines()
    lines[4] = lines[4][:40]  # cut short, as a crash would leave it
    lines.insert(6, json.dumps({"type": "user", "uuid": "x", "sessionId": "../etc"}))
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join(lines) + "\n")
    result = cli("--format", "json", "import", "claude-code", str(broken))
    assert result.exit_code == 65
    reported = [json.loads(line)["error"] for line in result.stderr.splitlines()]
    assert [(e["code"], e["message"].split(":")[0]) for e in reported[:2]] == [
        ("bad_input", f"{broken} line 5"),
        ("bad_input", f"{broken} line 7"),
    ]
    assert reported[-1]["code"] == "partial"
    (row,) = json.loads(result.stdout)
    assert (row["imported"], row["rejected"]) == (MESSAGES - 1, 2)


def test_a_missing_file_writes_nothing(cli, home, tmp_path):
    result = cli("import", "claude-code", str(TRANSCRIPT), str(tmp_path / "gone.jsonl"))
    assert result.exit_code == 3 and "no such transcript" in result.stderr
    assert tree_snapshot(home) == {}


def test_an_unknown_kind_is_a_usage_error(cli, home):
    result = cli("import", "chatgpt", str(TRANSCRIPT))
    assert result.exit_code == 2 and "unknown import kind" in result.stderr


def test_the_library_imports_into_a_real_store(home):
    store = Home(home)
    store.ensure()
    backend = SqliteBackend(store, Config())
    from datetime import UTC, datetime

    now = datetime(2026, 11, 26, tzinfo=UTC)
    try:
        done = []
        (result,) = import_transcripts(
            backend, [TRANSCRIPT], ("work", "claude"), Config(), now, progress=done.append
        )
        conn = backend.connection("memory", create=False)
        assert conn is not None
        count = conn.execute(
            "SELECT COUNT(*) FROM conversation_turns WHERE group_id = ? AND agent_id = ?",
            ("work", "claude"),
        ).fetchone()[0]
    finally:
        backend.close()
    assert (result.imported, count, len(done)) == (MESSAGES, MESSAGES, MESSAGES)
    assert (home / "groups" / "work" / "sessions" / "claude" / f"{SESSION}.jsonl").exists()


def test_records_that_are_not_messages_give_no_event():
    assert transcript_event({"type": "summary", "summary": "x"}, None) is None
    assert transcript_event({"type": "user", "isMeta": True, "message": {}}, None) is None
    redacted = {"role": "assistant", "content": [{"type": "redacted_thinking", "data": "x"}]}
    assert transcript_event({"type": "assistant", "message": redacted}, "s") is None
    event = transcript_event({"type": "user", "message": {"role": "user", "content": "hi"}}, "s")
    assert event is not None and (event.session, event.content) == ("s", "hi")


def test_the_last_reply_is_the_last_text_an_assistant_wrote(tmp_path):
    reply = last_reply(TRANSCRIPT)
    assert reply is not None and reply.event_id == uuid(11)
    assert last_reply(tmp_path / "missing.jsonl") is None


def test_log_indexes_anthropic_thinking_blocks(cli):
    message = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "The flaky fixture shares a port.", "signature": "s"},
            {"type": "text", "text": "Use a free port per test."},
        ],
    }
    cli.ok("log", "-s", "t", input=json.dumps(message))
    hit = cli.json("trace", "shares a port")[0]
    assert hit["content"] == "The flaky fixture shares a port.\nUse a free port per test."
    exported = json.loads(cli.ok("session", "export", "t", "--as", "openai").stdout)
    assert exported == [{"role": "assistant", "content": "Use a free port per test."}]
