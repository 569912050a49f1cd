"""The identity compile (seed 003 §6.2, the "user" target): the rules' USER.md made
into a compact list of what is known, for ``identity/compiled/user.md``."""

from __future__ import annotations

from soloqueue_mem.lifecycle.prompts import text
from soloqueue_mem.text.strings import resolve

CHARS = 2000
PROMPTS = {
    "zh": """从以下用户档案中提取已知信息。

要求:
- 只保留有实际内容的字段
- 保留用户称呼、技术栈、偏好、工作习惯等已知信息
- 输出紧凑的列表格式 (Markdown), 不超过 120 tokens

原文:
{content}""",
    "en": """Extract what is known from this user profile.

Requirements:
- keep only fields with real content
- keep how to address the user, their tech stack, preferences and working habits
- answer as a compact Markdown list, at most 120 tokens

Profile:
{content}""",
}


def prompt(user_md: str, language: str) -> str:
    return PROMPTS[resolve(language)].format(content=user_md.strip())


def parse(answer: str) -> str:
    return text(answer, CHARS) + "\n"
