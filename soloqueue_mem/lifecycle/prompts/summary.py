"""The episode summary (seed 003 §7.3: what the session's goal was, what was done,
how it ended), one paragraph."""

from __future__ import annotations

from typing import Any

from soloqueue_mem.lifecycle.prompts import text
from soloqueue_mem.text.strings import resolve

MAX_TURNS = 60  # the newest turns of a stretch are what a summary is sent
CHARS = 600
PROMPTS = {
    "zh": """用一段话 (不超过 200 字) 概括下面这段对话发生了什么:
用户的目标、做了什么、结果如何。只输出这段话。

{transcript}""",
    "en": """In one paragraph (at most 120 words), say what happened in this
conversation: the user's goal, what was done, and how it ended. Answer with the paragraph only.

{transcript}""",
}


def prompt(records: list[dict[str, Any]], language: str) -> str:
    lines = [f"[{r['role']}] {(r.get('content') or '')[:500]}" for r in records[-MAX_TURNS:]]
    return PROMPTS[resolve(language)].format(transcript="\n".join(lines))


def parse(answer: str) -> str:
    return text(" ".join(answer.split()), CHARS)
