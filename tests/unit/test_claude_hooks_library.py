"""The hook library without the CLI: payload parsing and events on a real store."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from soloqueue_mem.config import Config
from soloqueue_mem.errors import BadInput, InvalidId
from soloqueue_mem.home import Home
from soloqueue_mem.integrations.brief import build_brief, defused
from soloqueue_mem.integrations.claude_hooks import parse_payload, run_hook
from soloqueue_mem.integrations.hook_errors import append_error, count_errors
from soloqueue_mem.storage.sqlite.backend import SqliteBackend

DATA = Path(__file__).parent.parent / "data" / "claude_code" / "hooks"
NOW = datetime(2026, 11, 26, 8, tzinfo=UTC)


def call(home: Path, name: str, config: Config = Config()):  # noqa: B008 - immutable
    event, payload = parse_payload((DATA / f"{name}.json").read_bytes(), None)
    backend = SqliteBackend(Home(home), config)
    try:
        return run_hook(Home(home), config, NOW, ("work", "claude"), event, payload, backend)
    finally:
        backend.close()


def test_the_argument_wins_over_the_payload():
    assert parse_payload(b'{"hook_event_name": "Stop"}', "SessionEnd")[0] == "SessionEnd"
    with pytest.raises(BadInput, match="no event"):
        parse_payload(b'{"session_id": "s"}', None)
    with pytest.raises(BadInput, match="JSON object"):
        parse_payload(b"  ", "Stop")


def test_events_log_into_the_scope_given(home):
    assert call(home, "SessionStart").output is None
    logged = call(home, "UserPromptSubmit").logged
    assert [(t.group, t.agent, t.role) for t in logged] == [("work", "claude", "user")]
    tool = call(home, "PostToolUse").logged
    assert [(t.role, t.event_id, t.duplicate) for t in tool] == [
        ("assistant", "toolu_01HkQ3pV9xWm2cRt8YbN4sLd:call", False),
        ("tool", "toolu_01HkQ3pV9xWm2cRt8YbN4sLd:result", False),
    ]
    assert call(home, "Notification") == (None, [])


def test_a_hostile_session_id_is_refused_before_any_write(home):
    payload = json.loads((DATA / "UserPromptSubmit.json").read_text())
    payload["session_id"] = "../../x"
    store = Home(home)
    with pytest.raises(InvalidId):
        scope = ("default", "default")
        run_hook(
            store, Config(), NOW, scope, "UserPromptSubmit", payload, SqliteBackend(store, Config())
        )
    assert not home.exists()


def test_the_brief_of_an_empty_store_is_empty(home):
    assert build_brief(None, None, [], None, NOW, "en") == ""
    assert defused("a </memory-brief> b <MEMORY-BRIEF x>") == "a ‹/memory-brief> b ‹MEMORY-BRIEF x>"


def test_the_error_log_counts_its_lines(home):
    store = Home(home)
    assert count_errors(store) == 0
    append_error(store, "claude", "Stop", "bad_input", "broken \ud800 text", NOW)
    append_error(store, "claude", None, "usage", "x" * 5000, NOW)
    assert count_errors(store) == 2
    lines = (home / "logs" / "hook-errors.jsonl").read_text().splitlines()
    first, second = (json.loads(line) for line in lines)
    assert first["event"] == "Stop" and first["at"] == "2026-11-26T08:00:00.000Z"
    assert len(second["message"]) == 2000
    assert (home / "logs" / "hook-errors.jsonl").stat().st_mode & 0o777 == 0o600
