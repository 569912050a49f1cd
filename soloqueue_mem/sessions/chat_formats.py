"""Events as the chat messages of OpenAI's and Anthropic's APIs, whatever form they
were logged in.

OpenAI: tool calls are an assistant message's ``tool_calls``; each result is its own
``role: "tool"`` message. Anthropic: tool calls are ``tool_use`` blocks of an
assistant message; results are ``tool_result`` blocks of the next user message; the
system prompt is not a message. An event logged as an OpenAI message gives that
message back as it was; one logged with Anthropic blocks (or imported from Claude
Code) is converted, its reasoning (``thinking`` blocks) left out of the reply text.
"""

from __future__ import annotations

from typing import Any

from soloqueue_mem.sessions.events import Event, reply_text


def to_anthropic(events: list[Event]) -> dict[str, Any]:
    """``{"system": ..., "messages": [...]}``: the request body's two fields for the
    Messages API. System events join the system text; tool results go in user
    messages; consecutive messages of one role are merged, as the API expects."""
    system: list[str] = []
    messages: list[dict[str, Any]] = []
    for event in events:
        if event.role == "system":
            system.append(reply_text(event))
            continue
        for role, blocks in _anthropic_blocks(event):
            if not blocks:
                continue
            if messages and messages[-1]["role"] == role:
                messages[-1]["content"].extend(blocks)
            else:
                messages.append({"role": role, "content": blocks})
    return {"system": "\n\n".join(t for t in system if t), "messages": messages}


def _anthropic_blocks(event: Event) -> list[tuple[str, list[dict[str, Any]]]]:
    """``(role, blocks)`` of one event: results (a user's), then text and tool uses."""
    if event.role == "thought":
        return []
    results = [
        {
            "type": "tool_result",
            "tool_use_id": r["tool_use_id"],
            "content": r["content"],
            "is_error": r["is_error"],
        }
        for r in event.tool_results
    ]
    text = reply_text(event)
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text.strip() else []
    blocks += [
        {"type": "tool_use", "id": c["id"], "name": c["name"], "input": _input(c["input"])}
        for c in event.tool_calls
    ]
    role = "assistant" if event.role == "assistant" else "user"
    return [("user", results), (role, blocks)]


def _input(value: Any) -> dict[str, Any]:
    """A tool call's input as Anthropic wants it, an object (text that was not JSON
    is kept under ``input``)."""
    return value if isinstance(value, dict) else {"input": value}
