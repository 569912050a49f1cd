"""The human-readable Markdown twin of a session's JSONL log."""

from __future__ import annotations

from soloqueue_mem import jsonio
from soloqueue_mem.sessions.events import SessionKey

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import Any


def render_turns(key: SessionKey, records: list[dict[str, Any]], first: bool) -> str:
    """Markdown for appended records; ``first`` adds the session heading."""
    parts = [f"# Session {key.session} ({key.group}/{key.agent})\n\n"] if first else []
    for record in records:
        parts.append(f"## {record['turn_index']} · {record['role']} · {record['timestamp']}\n\n")
        if record.get("content"):
            parts.append(record["content"].rstrip("\n") + "\n\n")
        for call in record.get("tool_calls", []):
            tool_input = (
                call["input"] if isinstance(call["input"], str) else jsonio.dumps(call["input"])
            )
            parts.append(f"**tool call** `{call['name']}` ({call.get('id') or '-'})\n\n")
            parts.append(f"```json\n{tool_input}\n```\n\n")
        for result in record.get("tool_results", []):
            label = "tool error" if result.get("is_error") else "tool result"
            parts.append(f"**{label}** ({result.get('tool_use_id') or '-'})\n\n")
            parts.append(f"```\n{result['content'].rstrip(chr(10))}\n```\n\n")
    return "".join(parts)
