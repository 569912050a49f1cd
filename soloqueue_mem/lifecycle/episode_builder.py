"""An episode from a stretch of a session's records, without a model (seed 003 §4.2).

Action nodes pair each tool call with its result (success, error message, a short
result summary, the call's scalar parameters); entities are the file paths, URLs and
`backticked` names mentioned; the goal is the first user sentence; the summary says
what happened in one paragraph.
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from functools import cache
from typing import Any

from soloqueue_mem import jsonio
from soloqueue_mem.clock import iso
from soloqueue_mem.lifecycle import tool_failure
from soloqueue_mem.lifecycle.extract import sentences
from soloqueue_mem.memory.episodes import Episode
from soloqueue_mem.sessions.events import SessionKey
from soloqueue_mem.text.strings import text as fixed_text

MAX_ENTITIES = 20
RESULT_SUMMARY = 100
SUMMARY_CHARS = 600
GOAL_CHARS = 200  # the first thing the user said stands for the goal


@cache
def _entity() -> re.Pattern[str]:
    return re.compile(
        r"https?://[^\s\"'<>)]+"  # URLs
        # paths: rooted (/, ~/, ./, C:\), or relative with a separator (tests/unit), never
        # the tail of a longer word ("tests/unit" is not "/unit")
        r"|(?<![\w.\-/\\~])(?:(?:[A-Za-z]:\\|~/|\.{1,2}/|/)[\w.\-]+(?:[/\\][\w.\-]+)*"
        r"|[\w.\-]+(?:[/\\][\w.\-]+)+)"
        r"|\b[\w\-]+\.(?:py|js|ts|go|rs|java|md|toml|json|yaml|yml|txt|sql|sh|cfg|ini)\b"
        r"|`([^`\n]{2,60})`"  # `names`
    )


def entities(texts: list[str]) -> list[str]:
    found: dict[str, None] = {}
    for text in texts:
        for match in _entity().finditer(text):
            found.setdefault((match.group(1) or match.group(0)).rstrip(".,;:"), None)
            if len(found) >= MAX_ENTITIES:
                return list(found)
    return list(found)


def action_nodes(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One node per tool call, with its result when the stretch holds it."""
    results = {
        r.get("tool_use_id"): (r, record["timestamp"])
        for record in records
        for r in record.get("tool_results") or []
    }
    nodes = []
    for record in records:
        for call in record.get("tool_calls") or []:
            result, _ = results.get(call.get("id"), (None, None))
            content = str(result["content"]) if result else ""
            failed = result is not None and tool_failure.failed(result)
            nodes.append(
                {
                    "tool_name": call["name"],
                    "key_params": _key_params(call.get("input")),
                    "result_summary": content[:RESULT_SUMMARY],
                    "success": result is not None and not failed,
                    "error_message": content.splitlines()[0][:200] if failed and content else None,
                    "timestamp": record["timestamp"],
                }
            )
    return nodes


def _key_params(value: Any) -> dict[str, Any]:
    """The call's short scalar parameters (at most 5): what identifies the action."""
    if isinstance(value, str):
        try:
            value = jsonio.loads(value)
        except Exception:  # noqa: BLE001 - arguments that are not JSON are kept as text
            return {"input": value[:100]}
    if not isinstance(value, dict):
        return {}
    scalars = {
        k: v
        for k, v in value.items()
        if isinstance(v, int | float | bool) or (isinstance(v, str) and len(v) <= 200)
    }
    return dict(list(scalars.items())[:5])


def outcome(nodes: list[dict[str, Any]], ongoing: bool) -> str:
    if ongoing:
        return "ongoing"
    if not nodes or all(n["success"] for n in nodes):
        return "success"
    return "failed" if not nodes[-1]["success"] else "partial"


def _said(records: list[dict[str, Any]], role: str) -> list[str]:
    return [
        r["content"].strip()
        for r in records
        if r.get("role") == role and (r.get("content") or "").strip()
    ]


def _last_reply_opening(records: list[dict[str, Any]]) -> str:
    replies = _said(records, "assistant")
    return next(sentences(replies[-1]), replies[-1][:200]) if replies else ""


def summary(
    records: list[dict[str, Any]], goal: str, nodes: list[dict[str, Any]], language: str = "auto"
) -> str:
    """One paragraph: span, goal, tools, the last error and reply, in ``language``."""
    tools: dict[str, int] = {}
    for node in nodes:
        tools[node["tool_name"]] = tools.get(node["tool_name"], 0) + 1
    failed = [n for n in nodes if not n["success"] and n["error_message"]]

    def say(name: str, **values: Any) -> str:
        return fixed_text(language, name).format(**values)

    start, end = records[0]["timestamp"][:16], records[-1]["timestamp"][:16]
    parts = [say("episode_span", turns=len(records), start=start, end=end)]
    if goal:
        parts.append(say("episode_goal", goal=goal))
    if tools:
        names = ", ".join(f"{n} x{c}" if c > 1 else n for n, c in tools.items())
        parts.append(say("episode_tools", tools=names))
    if failed:
        last = failed[-1]
        parts.append(say("episode_errors", tool=last["tool_name"], error=last["error_message"]))
    reply = _last_reply_opening(records)
    if reply:
        parts.append(say("episode_reply", reply=reply))
    return " ".join(parts)[:SUMMARY_CHARS]


def build_episode(
    key: SessionKey,
    records: list[dict[str, Any]],
    source: str,
    now: datetime,
    ongoing: bool,
    language: str = "auto",
) -> Episode:
    """The episode of ``records`` (a non-empty stretch of one session, in order), its
    summary in ``language`` (the setting)."""
    nodes = action_nodes(records)
    asked = _said(records, "user")
    goal = " ".join(asked[0].split())[:GOAL_CHARS] if asked else ""
    texts = [str(r.get("content") or "") for r in records]
    texts += [jsonio.dumps(c.get("input")) for r in records for c in r.get("tool_calls") or []]
    return Episode(
        id=uuid.uuid4().hex,
        group=key.group,
        agent=key.agent,
        session=key.session,
        summary=summary(records, goal, nodes, language),
        goal=goal,
        outcome=outcome(nodes, ongoing),
        started_at=records[0]["timestamp"],
        ended_at=records[-1]["timestamp"],
        action_nodes=nodes,
        entities=entities(texts),
        tools_used=list(dict.fromkeys(n["tool_name"] for n in nodes)),
        linked_memory_ids=[],
        tags=[],
        importance=0.5,
        access_count=0,
        source=source,
        first_turn=records[0]["turn_index"],
        last_turn=records[-1]["turn_index"],
        created_at=iso(now),
    )
