"""The optional model: an OpenAI-compatible chat-completions endpoint (for example a
local Ollama) for extraction and episode summaries.

Configured only by ``SOLOQUEUE_LLM_URL`` and ``SOLOQUEUE_LLM_MODEL`` (and
``SOLOQUEUE_LLM_API_KEY`` when the endpoint wants one); nothing is contacted
otherwise. Each call retries with exponential backoff (1 s doubling, capped at 30 s);
any failure — refused connection, timeout, HTTP error, an answer that is not the JSON
asked for — is an :class:`LlmError`, and callers fall back to the rules.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, TypeVar

from soloqueue_mem.errors import BadInput
from soloqueue_mem.memory.store import Draft, check_draft
from soloqueue_mem.text.strings import resolve

# Seed 003 §5.4's extraction prompt, tool-aware, asking for subject/predicate-shaped memories.
EXTRACTION_PROMPT = """分析这轮对话，提取值得记住的信息。

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
    "duration": "permanent|30d|7d|24h|session"
  }}
]

如果没有值得记录的信息, 只输出: NONE"""
SUMMARY_PROMPT = """用一段话 (不超过 200 字) 概括下面这段对话发生了什么:
用户的目标、做了什么、结果如何。只输出这段话。

{transcript}"""
# The same prompts for `language = "en"` (same fields, same answer format).
EXTRACTION_PROMPT_EN = """Analyse this turn of a conversation; extract what is worth remembering.

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
    "duration": "permanent|30d|7d|24h|session"
  }}
]

If nothing is worth keeping, answer only: NONE"""
SUMMARY_PROMPT_EN = """In one paragraph (at most 120 words), say what happened in this
conversation: the user's goal, what was done, and how it ended. Answer with the paragraph only.

{transcript}"""
PROMPTS = {
    "zh": (EXTRACTION_PROMPT, SUMMARY_PROMPT),
    "en": (EXTRACTION_PROMPT_EN, SUMMARY_PROMPT_EN),
}
SOURCE = "llm"
T = TypeVar("T")


class LlmError(Exception):
    pass


class Llm(NamedTuple):
    url: str
    model: str
    api_key: str | None
    timeout: float
    retries: int
    backoff_base: float
    backoff_cap: float


def from_env(
    env: Mapping[str, str], timeout: float, retries: int, base: float, cap: float
) -> Llm | None:
    url, model = env.get("SOLOQUEUE_LLM_URL"), env.get("SOLOQUEUE_LLM_MODEL")
    if not url or not model:
        return None
    if not url.startswith(("http://", "https://")):
        raise BadInput(f"SOLOQUEUE_LLM_URL must be an http(s) URL: {url!r}")
    endpoint = url.rstrip("/")
    if not endpoint.endswith("/chat/completions"):
        endpoint += "/chat/completions"
    return Llm(
        endpoint, model, env.get("SOLOQUEUE_LLM_API_KEY") or None, timeout, retries, base, cap
    )


def complete(
    llm: Llm,
    prompt: str,
    parse: Callable[[str], T],
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """The model's answer to ``prompt`` as ``parse`` reads it; a failed call or an
    answer ``parse`` rejects (LlmError) is retried with backoff."""
    error = LlmError("no attempt")
    for attempt in range(llm.retries):
        if attempt:
            sleep(min(llm.backoff_cap, llm.backoff_base * 2 ** (attempt - 1)))
        try:
            return parse(_call(llm, prompt))
        except LlmError as exc:
            error = exc
    raise error


def _call(llm: Llm, prompt: str) -> str:
    body = json.dumps(
        {"model": llm.model, "messages": [{"role": "user", "content": prompt}], "temperature": 0}
    ).encode()
    headers = {"Content-Type": "application/json"}
    if llm.api_key:
        headers["Authorization"] = f"Bearer {llm.api_key}"
    request = urllib.request.Request(llm.url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=llm.timeout) as response:  # noqa: S310
            payload = json.loads(response.read(8 * 1024 * 1024))
        return str(payload["choices"][0]["message"]["content"])
    except urllib.error.HTTPError as exc:
        exc.close()  # the error holds the response and its socket
        raise LlmError(f"HTTP {exc.code} from {llm.url}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise LlmError(f"cannot reach {llm.url}: {getattr(exc, 'reason', exc)}") from None
    except (ValueError, KeyError, IndexError, TypeError):
        raise LlmError(f"not a chat-completions answer from {llm.url}") from None


def extraction_prompt(record: dict[str, Any], language: str = "zh") -> str:
    tools = [
        f"tool call {c['name']}: {json.dumps(c.get('input'), ensure_ascii=False)[:500]}"
        for c in record.get("tool_calls") or []
    ]
    tools += [
        f"tool {'error' if r.get('is_error') else 'result'}: {str(r['content'])[:500]}"
        for r in record.get("tool_results") or []
    ]
    return PROMPTS[resolve(language)][0].format(
        role=record["role"],
        content=(record.get("content") or "")[:4000],
        tool_context="\n".join(tools),
    )


def parse_memories(answer: str) -> list[Draft]:
    """The drafts in an extraction answer; ``NONE`` is none. Anything else that is
    not a JSON array of memory objects raises LlmError (the call is retried)."""
    text = answer.strip()
    if text.upper().startswith("NONE"):
        return []
    fenced = re.search(r"\[.*\]", text, re.DOTALL)
    try:
        items = json.loads(fenced.group(0) if fenced else text)
    except ValueError:
        raise LlmError("the model's answer is not JSON") from None
    if not isinstance(items, list):
        raise LlmError("the model's answer is not a JSON array")
    drafts = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("content"), str):
            continue
        try:
            drafts.append(
                check_draft(
                    Draft(
                        content=item["content"],
                        type=str(item.get("type", "FACT")).split("|")[0],
                        subject=str(item.get("subject") or ""),
                        predicate=str(item.get("predicate") or ""),
                        importance=min(1.0, max(0.0, float(item.get("importance", 0.5)))),
                        duration=item.get("duration")
                        if isinstance(item.get("duration"), str)
                        else None,
                        source=SOURCE,
                    )
                )
            )
        except (BadInput, ValueError, TypeError):
            continue  # one bad item does not spoil the others
    return drafts
