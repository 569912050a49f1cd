"""The model tasks of seed 002 §6 behind one interface: the offline rules
(:mod:`.rules`), or the optional model (SOLOQUEUE_LLM_URL/_MODEL) when configured.

With a model, every call retries with exponential backoff (1 s doubling, capped at
30 s) up to ``graph_max_retries`` attempts (§6.5). A segmentation that still fails
raises :class:`SegmentationFailed` (the task goes back to the queue's tail and nothing
is created); content processing that fails keeps the rules' result; a relation name
that fails is left out.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

from soloqueue_mem.graph import rules
from soloqueue_mem.graph.rules import MAX_PIECE, Processed
from soloqueue_mem.lifecycle.llm import Llm, LlmError, complete
from soloqueue_mem.text.lexicon import Lexicon
from soloqueue_mem.text.strings import resolve

SEGMENT_PROMPT = """把下面的聊天记录切分成语义完整的小段，每段不超过 200 字。
把代词（他/她/它/they/it 等）替换为明确的指代对象。只输出 JSON 字符串数组。

{transcript}"""
CONTENT_PROMPT = """处理下面的文本。{target}输出 JSON 对象:
{{"content": "处理后的内容", "phrase": "10-20 字的短语摘要", "keywords": ["3-5 个关键词"]}}

{text}"""
RELATION_PROMPT = """用 2-4 个字说出新记忆与关注点之间的关系（如 属于、关于、涉及、讨论、提到）。
只输出关系名称。

新记忆: {node}
关注点: {focus}"""
KEEP, SHORTEN = "内容保持原文。", "把内容压缩到不超过 {target} 字。"
# The same prompts for `language = "en"` (same answer formats).
SEGMENT_PROMPT_EN = """Split this chat log into small self-contained pieces of at most 200
characters each. Replace pronouns (he/she/it/they …) with what they refer to. Answer with
a JSON array of strings only.

{transcript}"""
CONTENT_PROMPT_EN = """Process this text. {target}Answer with a JSON object:
{{"content": "the processed text", "phrase": "a 3-6 word summary phrase", \
"keywords": ["3-5 keywords"]}}

{text}"""
RELATION_PROMPT_EN = """Name the relation between the new memory and the focus in one to three
words (such as: part of, about, involves, discusses, mentions). Answer with the name only.

New memory: {node}
Focus: {focus}"""
KEEP_EN, SHORTEN_EN = "Keep the text as it is. ", "Shorten it to at most {target} characters. "
PROMPTS = {
    "zh": (SEGMENT_PROMPT, CONTENT_PROMPT, RELATION_PROMPT, KEEP, SHORTEN),
    "en": (SEGMENT_PROMPT_EN, CONTENT_PROMPT_EN, RELATION_PROMPT_EN, KEEP_EN, SHORTEN_EN),
}


class SegmentationFailed(Exception):
    pass


class Steps:
    """Segmentation, content processing and relation naming for the worker; the
    model's prompts in the ``language`` setting's language."""

    def __init__(
        self,
        lexicon: Callable[[], Lexicon],
        llm: Llm | None = None,
        sleep: Callable[[float], None] = time.sleep,
        language: str = "auto",
    ) -> None:
        self.lexicon = lexicon
        self.llm = llm
        self.sleep = sleep
        self.prompts = PROMPTS[resolve(language)]

    def segment(self, messages: list[dict[str, str]]) -> list[str]:
        if self.llm is None:
            return rules.segment(messages, self.lexicon)
        transcript = "\n".join(f"[{m['role']}]: {m['content']}" for m in messages)
        try:
            pieces = complete(
                self.llm, self.prompts[0].format(transcript=transcript), _pieces, self.sleep
            )
        except LlmError as exc:
            raise SegmentationFailed(str(exc)) from None
        return [part for piece in pieces for part in _within_limit(piece)]

    def process(self, text: str, target: int | None = None) -> Processed:
        if self.llm is None:
            return rules.process(text, self.lexicon, target)
        keep, shorten = self.prompts[3:]
        wanted = shorten.format(target=target) if target is not None else keep
        prompt = self.prompts[1].format(target=wanted, text=text)
        try:
            answer = complete(self.llm, prompt, _processed, self.sleep)
        except LlmError:
            answer = None
        if answer is None or (target is not None and len(answer.content) > target):
            return rules.process(text, self.lexicon, target)  # §6.5: the rules, and carry on
        return answer if target is not None else answer._replace(content=text)

    def relation(self, node: Processed, focus: Any) -> str | None:
        if self.llm is None:
            return rules.relation(node, focus.keywords)
        prompt = self.prompts[2].format(node=node.content, focus=focus.content)
        try:
            return complete(self.llm, prompt, _relation, self.sleep)
        except LlmError:
            return None


def _json(answer: str, opening: str) -> Any:
    closing = "]" if opening == "[" else "}"
    found = re.search(re.escape(opening) + r".*" + re.escape(closing), answer, re.DOTALL)
    try:
        return json.loads(found.group(0) if found else answer)
    except ValueError:
        raise LlmError("the model's answer is not JSON") from None


def _pieces(answer: str) -> list[str]:
    value = _json(answer, "[")
    if not isinstance(value, list) or not value:
        raise LlmError("expected a non-empty JSON array of strings")
    pieces = [item.strip() for item in value if isinstance(item, str) and item.strip()]
    if len(pieces) != len(value):
        raise LlmError("expected a non-empty JSON array of strings")
    return pieces


def _within_limit(piece: str) -> list[str]:
    return [piece[n : n + MAX_PIECE] for n in range(0, len(piece), MAX_PIECE)]


def _processed(answer: str) -> Processed:
    value = _json(answer, "{")
    if not isinstance(value, dict):
        raise LlmError("expected a JSON object")
    content, phrase, words = value.get("content"), value.get("phrase"), value.get("keywords")
    if not isinstance(content, str) or not content.strip() or not isinstance(phrase, str):
        raise LlmError("content and phrase must be non-empty strings")
    if not isinstance(words, list) or not all(isinstance(w, str) and w.strip() for w in words):
        raise LlmError("keywords must be a list of strings")
    return Processed(content.strip(), phrase.strip()[:40], [w.strip() for w in words][:5])


def _relation(answer: str) -> str:
    name = answer.strip().strip("\"'「」“”。.")
    if not name or len(name) > 12 or "\n" in name:
        raise LlmError("expected a short relation name")
    return name
