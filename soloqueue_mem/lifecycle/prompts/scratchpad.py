"""The scratchpad rewrite at session end (seed 003 §7.3 step 3: "based on this
episode, update my working memory"): the current pad and the new episode in, the whole
updated pad out, under the same headings."""

from __future__ import annotations

from soloqueue_mem.lifecycle.prompts import text
from soloqueue_mem.memory.episodes import Episode
from soloqueue_mem.text.strings import resolve

CHARS = 4000
PROMPTS = {
    "zh": """这是我的工作记忆草稿本 (Markdown):

{pad}

刚结束的一段对话: {episode}

基于这个情节，更新我的工作记忆: 保留所有标题, 更新当前项目、近期进展、未解决的问题和下一步,
删去已经过时的内容。只输出更新后的整个草稿本。""",
    "en": """This is my working-memory scratchpad (Markdown):

{pad}

A stretch of conversation that just ended: {episode}

Based on this episode, update my working memory: keep every heading, update the current
projects, recent progress, open questions and next steps, and drop what is out of date.
Answer with the whole updated scratchpad only.""",
}


def prompt(pad: str, episode: Episode, language: str) -> str:
    said = " — ".join(part for part in (episode.goal, episode.summary, episode.outcome) if part)
    return PROMPTS[resolve(language)].format(pad=pad.strip(), episode=said)


def parse(answer: str) -> str:
    return text(answer, CHARS) + "\n"
