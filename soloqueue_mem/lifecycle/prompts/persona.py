"""PERSONA_TRAIT promotion (seed 003 §6.4, §7.4 step 6): the user's traits stated
with high confidence become ``identity/personas/user_custom.md``, the persona the agent
adapts to; the model writes them as a short persona description."""

from __future__ import annotations

from soloqueue_mem.lifecycle.prompts import text
from soloqueue_mem.text.strings import resolve

CHARS = 2000
PROMPTS = {
    "zh": """以下是用户反复表达过的偏好和习惯:

{traits}

把它们整理成一份简短的用户画像 (Markdown 列表), 供助手调整自己的风格。
只写上面出现过的内容, 不要编造。只输出这份画像。""",
    "en": """These are preferences and habits the user has stated more than once:

{traits}

Write them up as a short user persona (a Markdown list) for the assistant to adapt its
style to. Use only what is above; invent nothing. Answer with the persona only.""",
}


def prompt(traits: list[str], language: str) -> str:
    return PROMPTS[resolve(language)].format(traits="\n".join(f"- {t}" for t in traits))


def parse(answer: str) -> str:
    return text(answer, CHARS) + "\n"
