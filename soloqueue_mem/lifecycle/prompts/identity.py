"""The identity compile (seed 003 §6.2): SOUL.md, AGENT.md and USER.md made into their
compact core by the model, instead of the line rules of
:mod:`soloqueue_mem.context.identity` (which still clean and cut the answer to the
file's budget). MEMORY.md is ranked and cut by rules already and is not sent."""

from __future__ import annotations

from soloqueue_mem.lifecycle.prompts import text
from soloqueue_mem.text.strings import resolve

CHARS = 4000
_ASK = {
    "zh": {
        "SOUL.md": """将以下 AI 身份文档精简为核心原则摘要。

要求:
- 保留所有核心价值观和行为原则
- 保留关键的"做/不做"清单
- 删除叙事性段落、示例和比喻
- 删除 HTML 注释和格式噪声""",
        "AGENT.md": """将以下 AI 行为规范文档精简为核心执行原则。

要求:
- 保留任务执行流程
- 保留禁止行为清单
- 删除配置示例、命令列表、架构说明等参考信息""",
        "USER.md": """从以下用户档案中提取已知信息。

要求:
- 只保留有实际内容的字段（跳过"[待学习]"等占位符）
- 保留用户称呼、技术栈、偏好、工作习惯等已知信息
- 如果没有任何已知信息，输出空字符串""",
    },
    "en": {
        "SOUL.md": """Condense this AI identity document into a summary of its core principles.

Requirements:
- keep every core value and principle of behaviour
- keep the key do / don't lists
- drop narrative paragraphs, examples and metaphors
- drop HTML comments and formatting noise""",
        "AGENT.md": """Condense this document of AI working rules into its core principles.

Requirements:
- keep how tasks are carried out
- keep the list of forbidden behaviour
- drop configuration examples, command lists and architecture notes""",
        "USER.md": """Extract what is known from this user profile.

Requirements:
- keep only fields with real content (skip placeholders such as "[TODO]")
- keep how to address the user, their tech stack, preferences and working habits
- if nothing is known, answer with nothing""",
    },
}
_FORMAT = {
    "zh": "- 输出纯 Markdown, 紧凑的列表格式, 不超过 {budget} tokens\n\n原文:\n{content}",
    "en": "- answer in plain Markdown, a compact list, at most {budget} tokens\n\n"
    "Source:\n{content}",
}
NAMES = frozenset(_ASK["en"])


def prompt(name: str, source: str, budget: int, language: str) -> str:
    lang = resolve(language)
    return f"{_ASK[lang][name]}\n{_FORMAT[lang].format(budget=budget, content=source.strip())}"


def parse(answer: str) -> str:
    return text(answer, CHARS) + "\n"
