"""Messages that OpenAI's and Anthropic's own SDK types accept, whatever form the
session was logged in: OpenAI messages, Anthropic content blocks, or a Claude Code
transcript imported. The SDKs (test extra) validate; nothing is sent anywhere."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from anthropic.types import MessageParam
from openai.types.chat import ChatCompletionMessageParam
from pydantic import TypeAdapter

TRANSCRIPT = Path(__file__).parent.parent / "data" / "claude_code" / "transcript.jsonl"
CLAUDE_SESSION = "b1e5d0c2-6a3f-4f7e-8d21-93c4a7e5f601"
OPENAI_CHECK = TypeAdapter(list[ChatCompletionMessageParam])
ANTHROPIC_CHECK = TypeAdapter(list[MessageParam])

ANTHROPIC_FORM = [
    {"role": "user", "content": "Why does the deploy fail?"},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Probably the registry.", "signature": "sig"},
            {"type": "text", "text": "Let me read the log."},
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "tail x"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "403 from registry"},
            {"type": "text", "text": "Is it the token?"},
        ],
    },
    {"role": "assistant", "content": [{"type": "text", "text": "Yes: the token expired."}]},
]
OPENAI_FORM = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "List the files."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "a.py b.py"},
    {"role": "assistant", "content": "a.py and b.py."},
]


def validated(adapter: TypeAdapter[Any], messages: list[dict[str, Any]]) -> list[Any]:
    """The SDK type's validation of ``messages``, every lazy part (the SDKs type content
    as ``Iterable``) read, so that an unknown block or a missing field fails here."""
    return _read(adapter.validate_python(messages))


def _read(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _read(item) for key, item in value.items()}
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return value
    return [_read(item) for item in value]


def _log_sessions(cli: Any) -> list[str]:
    cli.ok("log", "-s", "anthropic", input=json.dumps(ANTHROPIC_FORM))
    cli.ok("log", "-s", "openai", input=json.dumps(OPENAI_FORM))
    cli.ok("import", "claude-code", str(TRANSCRIPT))
    return ["anthropic", "openai", CLAUDE_SESSION]


def _pairs_hold(messages: list[dict[str, Any]]) -> None:
    """Each tool message answers a call an earlier assistant message made."""
    called: set[str] = set()
    for message in messages:
        called |= {c["id"] for c in message.get("tool_calls", [])}
        if message["role"] == "tool":
            assert message["tool_call_id"] in called


def test_every_form_exports_and_builds_as_valid_openai_and_anthropic_messages(cli):
    for session in _log_sessions(cli):
        openai = json.loads(cli.ok("session", "export", session, "--as", "openai").stdout)
        assert validated(OPENAI_CHECK, openai) == openai, session  # no key the SDK drops
        _pairs_hold(openai)
        built = cli.json("context", "build", "--model", "gpt-4o", "-s", session)
        assert validated(OPENAI_CHECK, built) == built, session
        assert all(m["content"] for m in built if m["role"] == "system"), session
        body = json.loads(cli.ok("session", "export", session, "--as", "anthropic").stdout)
        assert validated(ANTHROPIC_CHECK, body["messages"]) == body["messages"], session
        roles = [m["role"] for m in body["messages"]]
        assert roles[0] == "user" and all(roles[i] != roles[i + 1] for i in range(len(roles) - 1))


def test_anthropic_blocks_become_openai_tool_calls_and_back(cli):
    _log_sessions(cli)
    openai = json.loads(cli.ok("session", "export", "anthropic", "--as", "openai").stdout)
    assert openai == [
        {"role": "user", "content": "Why does the deploy fail?"},
        {
            "role": "assistant",
            "content": "Let me read the log.",  # the reasoning stays out of the reply
            "tool_calls": [
                {
                    "id": "toolu_1",
                    "type": "function",
                    "function": {"name": "Bash", "arguments": '{"command": "tail x"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_1", "content": "403 from registry"},
        {"role": "user", "content": "Is it the token?"},
        {"role": "assistant", "content": [{"type": "text", "text": "Yes: the token expired."}]},
    ]
    body = json.loads(cli.ok("session", "export", "openai", "--as", "anthropic").stdout)
    assert body == {
        "system": "You are terse.",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "List the files."}]},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "call_1", "name": "ls", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "call_1",
                        "content": "a.py b.py",
                        "is_error": False,
                    }
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "a.py and b.py."}]},
        ],
    }
