"""Per-turn extraction (seed 003 §5.4, v2 of seed 001): tool-aware, subject/predicate
shaped, and saying whether a memory updates a known fact (``is_update``) and which one
(``update_hint``): the store supersedes that fact by its topic
(:mod:`soloqueue_mem.memory.correction`)."""

from __future__ import annotations

import json
from typing import Any

from soloqueue_mem.errors import BadInput
from soloqueue_mem.lifecycle.prompts import json_value
from soloqueue_mem.memory.store import Draft, check_draft
from soloqueue_mem.text.strings import resolve

SOURCE = "llm"
PROMPTS = {
    "zh": """分析这轮对话，提取值得记住的信息。

对话内容:
[{role}]: {content}
{tool_context}

对于每条值得记录的信息，用 JSON 输出:
[
  {{
    "type": "FACT|PREFERENCE|RULE|SKILL|ERROR",
    "subject": "实体主语 (谁/什么)",
    "predicate": "属性/关系 (偏好/版本/位于/...)",
    "content": "完整描述",
    "importance": 0.5-1.0,
    "duration": "permanent|30d|7d|24h|session",
    "is_update": false,
    "update_hint": "如果是对已知事实的更新, 描述哪个事实被更新了"
  }}
]

如果没有值得记录的信息, 只输出: NONE""",
    "en": """Analyse this turn of a conversation; extract what is worth remembering.

Turn:
[{role}]: {content}
{tool_context}

For each piece of information worth keeping, answer in JSON:
[
  {{
    "type": "FACT|PREFERENCE|RULE|SKILL|ERROR",
    "subject": "the entity it is about (who/what)",
    "predicate": "the attribute or relation (prefers/version/located_in/...)",
    "content": "the full statement",
    "importance": 0.5-1.0,
    "duration": "permanent|30d|7d|24h|session",
    "is_update": false,
    "update_hint": "if it updates a known fact, which fact it updates"
  }}
]

If nothing is worth keeping, answer only: NONE""",
}


def prompt(record: dict[str, Any], language: str = "zh") -> str:
    tools = [
        f"tool call {c['name']}: {json.dumps(c.get('input'), ensure_ascii=False)[:500]}"
        for c in record.get("tool_calls") or []
    ]
    tools += [
        f"tool {'error' if r.get('is_error') else 'result'}: {str(r['content'])[:500]}"
        for r in record.get("tool_results") or []
    ]
    return PROMPTS[resolve(language)].format(
        role=record["role"],
        content=(record.get("content") or "")[:4000],
        tool_context="\n".join(tools),
    )


def parse(answer: str) -> list[Draft]:
    """The drafts in an extraction answer; ``NONE`` is none. Anything else that is
    not a JSON array of memory objects raises LlmError (the call is retried)."""
    if answer.strip().upper().startswith("NONE"):
        return []
    drafts = []
    for item in json_value(answer, "["):
        if not isinstance(item, dict) or not isinstance(item.get("content"), str):
            continue
        try:
            drafts.append(check_draft(_draft(item)))
        except (BadInput, ValueError, TypeError):
            continue  # one bad item does not spoil the others
    return drafts


def _draft(item: dict[str, Any]) -> Draft:
    hint = item.get("update_hint") if item.get("is_update") is True else ""
    duration = item.get("duration")
    return Draft(
        content=item["content"],
        type=str(item.get("type", "FACT")).split("|")[0],
        subject=str(item.get("subject") or ""),
        predicate=str(item.get("predicate") or ""),
        importance=min(1.0, max(0.0, float(item.get("importance", 0.5)))),
        duration=duration if isinstance(duration, str) else None,
        source=SOURCE,
        update_hint=hint if isinstance(hint, str) else "",
    )
