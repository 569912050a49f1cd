"""Human output: tables and text never pass terminal control sequences through (E9)."""

from __future__ import annotations

import json

import pytest

PAYLOADS = [
    "\x1b[2J",
    "\x1b[10A",
    "\x1b]0;title\x07",
    "\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\",
    "\x1b]52;c;aGVsbG8=\x07",
    "\x1bPdcs\x1b\\",
    "\x1b_apc",
    "\x1bc",
    "\x1b[6n",
    "\x9b31m",
    "\x9d0;x",
    "\x07bell\x08\r",
    "\u202eevil",
    "zero\u200bwidth",
    "[link=http://evil]x[/link]",
    "[/]",
    "[bold",
]


@pytest.fixture
def hostile(cli):
    events = [{"role": "user", "content": f"payload {p} end", "session": "e9"} for p in PAYLOADS]
    events.append(
        {
            "role": "assistant",
            "content": "",
            "session": "e9",
            "tool_calls": [
                {"id": "\x1b[2J", "name": "x\x1b]0;t\x07", "input": {"k": "\x1b[31mred"}}
            ],
        }
    )
    cli.ok("log", "--batch", input="\n".join(json.dumps(e) for e in events))


@pytest.mark.parametrize(
    "args",
    [
        ["session", "show", "e9", "--format", "table"],
        ["session", "show", "e9", "--format", "text"],
        ["session", "list", "--format", "table"],
        ["trace", "payload", "--format", "table", "--limit", "50"],
        ["trace", "payload", "--format", "text", "--limit", "50"],
        ["log", "-s", "e9", "--format", "table", "\x1b[2Jagain"],
    ],
)
def test_no_control_sequences_reach_the_terminal(cli, hostile, args):
    result = cli(*args, env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "\x1b" not in out and not any(0x80 <= ord(c) <= 0x9F for c in out)
    assert "\u202e" not in out and "\x07" not in out and "\x08" not in out


def test_escapes_are_shown_as_visible_placeholders(cli, hostile):
    out = cli.ok("session", "show", "e9", "--format", "text").stdout
    assert "payload \u241b[2J end" in out
    assert "[link=http://evil]x[/link]" in out  # markup is printed literally, not interpreted


def test_json_output_escapes_controls(cli, hostile):
    out = cli.ok("session", "show", "e9", "--format", "json").stdout
    assert "\x1b" not in out and "\\u001b[2J" in out


@pytest.fixture
def hostile_memory(cli):
    """Memories, an episode and a scratchpad holding every payload (issue 15 §2)."""
    text = " ".join(f"payload {p} end" for p in PAYLOADS)
    first = cli.json("remember", text, "--subject", "user", "--predicate", "motto")["id"]
    cli.ok("remember", text + " again", "--subject", "user", "--predicate", "motto")
    cli.ok("session", "end", "e9")
    cli.ok("scratchpad", "set", f"## Current focus\n- {text}\n")
    episode = cli.json("episode", "list")[0]["id"]
    return first, episode


def test_memory_episode_and_scratchpad_text_is_terminal_safe(cli, hostile, hostile_memory):
    memory, episode = hostile_memory
    for args in (
        ["memory", "list"],
        ["memory", "show", memory],
        ["memory", "history", memory],
        ["episode", "list"],
        ["episode", "search", "payload"],
        ["episode", "show", episode],
        ["scratchpad", "show"],
        ["recall", "payload"],
    ):
        result = cli(*args, "--format", "text", env={"NO_COLOR": "1"})
        assert result.exit_code == 0, (args, result.stderr)
        out = result.stdout
        assert "payload" in out, args
        assert "\x1b" not in out and not any(0x80 <= ord(c) <= 0x9F for c in out), args
        assert "\u202e" not in out and "\x07" not in out and "\x08" not in out, args


@pytest.mark.usefixtures("store")
def test_tables_fit_an_80_column_terminal_without_breaking_words(cli):
    cli.ok("remember", "User prefers short answers, always with the command to run first",
           "--type", "PREFERENCE")  # fmt: skip
    cli.ok("remember", "The staging host is stage-2", "--duration", "30d")
    cli.ok("log", "-s", "s1", "--role", "user", "The deploy keeps timing out")
    cli.ok("session", "set", "s1", "next_step", "raise the timeout")
    wide = {"NO_COLOR": "1", "COLUMNS": "80"}
    tables = {
        args: cli(*args, "--format", "table", env=wide).stdout
        for args in [("memory", "list"), ("session", "list"), ("scratchpad", "show")]
    }
    for out in tables.values():
        assert out and all(len(line) <= 80 for line in out.splitlines()), out
    memories = tables[("memory", "list")]
    assert "│ PREFERENCE │" in memories  # a type, an id, a time: whole, on one line
    assert "2026-12-26 08:00Z" in memories and "08:00:00.000Z" not in memories
    assert "│ 2026-11-26 08:00Z │" in tables[("session", "list")]
    pad = tables[("scratchpad", "show")]
    assert "- raise the timeout" in pad and '["' not in pad  # the Markdown, not JSON lists
