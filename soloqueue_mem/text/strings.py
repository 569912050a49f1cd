"""Every fixed string a model or a person reads, one table per language.

The ``language`` setting picks the table: ``zh``, ``en``, or ``auto`` (the default),
which follows the locale: ``LC_ALL``, else ``LANG``, starting with ``zh`` gives
Chinese, anything else English. Text the store holds (memories, turns, a scratchpad
already written) is never translated; headings in either language are understood
when read back.
"""

from __future__ import annotations

import os

LANGUAGES = ("zh", "en")
SETTINGS = ("auto", *LANGUAGES)

STRINGS: dict[str, dict[str, str]] = {
    "zh": {
        # recall: the mark before each memory the LLM reads
        "memory_prefix": "[记忆] ",
        # log: what stands in for tool output saved as an artifact
        "offload_notice": "[输出过大 ({size})。已保存为制品: {id}。预览: {head}...{tail} "
        "使用 read_artifact('{id}') 查看完整内容。]",
        # the scratchpad's sections, as a new scratchpad is written
        "active_projects": "当前项目",
        "recent_progress": "近期进展",
        "open_questions": "未解决的问题",
        "next_steps": "下一步",
        # an episode's summary without a model
        "episode_span": "{turns} 轮，{start} 至 {end}。",
        "episode_goal": "目标：{goal}",
        "episode_tools": "工具：{tools}。",
        "episode_errors": "错误：{tool}: {error}",
        "episode_reply": "最后回复：{reply}",
    },
    "en": {
        "memory_prefix": "[memory] ",
        "offload_notice": "[Output too large ({size}). Saved as artifact: {id}. Preview: "
        "{head}...{tail} Use read_artifact('{id}') to see the full content.]",
        "active_projects": "Current projects",
        "recent_progress": "Recent progress",
        "open_questions": "Open questions",
        "next_steps": "Next steps",
        "episode_span": "{turns} turns, {start} to {end}.",
        "episode_goal": "Goal: {goal}",
        "episode_tools": "Tools: {tools}.",
        "episode_errors": "Errors: {tool}: {error}",
        "episode_reply": "Last reply: {reply}",
    },
}


def resolve(setting: str) -> str:
    """``zh`` or ``en`` for a ``language`` setting (``auto``: from the locale)."""
    if setting in LANGUAGES:
        return setting
    locale = os.environ.get("LC_ALL") or os.environ.get("LANG") or ""
    return "zh" if locale.lower().startswith("zh") else "en"


def text(setting: str, name: str) -> str:
    """The string ``name`` in the language of ``setting``."""
    return STRINGS[resolve(setting)][name]
