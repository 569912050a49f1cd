"""The judgment of a candidate cluster (seed 003 §5.7, §7.4 step 2): the rules
cluster near-duplicates by keyword overlap; the model says which memory is best and
which of the others say the same thing (those are superseded by the best; the rest
stay)."""

from __future__ import annotations

from collections.abc import Callable

from soloqueue_mem.lifecycle.llm import LlmError
from soloqueue_mem.lifecycle.prompts import json_value
from soloqueue_mem.text.strings import resolve

PROMPTS = {
    "zh": """下面这些记忆可能是重复的:

{numbered}

哪一条最好 (最准确、最完整、最新)? 其余哪些和它说的是同一件事 (可以删掉)?
只用 JSON 回答: {{"best": 编号, "duplicates": [编号, ...]}}""",
    "en": """These memories may be duplicates:

{numbered}

Which one is best (most accurate, complete, current)? Which of the others say the same
thing as it (and can go)? Answer in JSON only: {{"best": number, "duplicates": [number, ...]}}""",
}


def prompt(contents: list[str], language: str) -> str:
    numbered = "\n".join(f"{n}. {content[:500]}" for n, content in enumerate(contents, 1))
    return PROMPTS[resolve(language)].format(numbered=numbered)


def parser(size: int) -> Callable[[str], tuple[int, list[int]]]:
    """The answer's (best, duplicates) as 0-based positions in a cluster of ``size``."""

    def parse(answer: str) -> tuple[int, list[int]]:
        found = json_value(answer, "{")
        best, duplicates = found.get("best"), found.get("duplicates")
        if not isinstance(duplicates, list):
            raise LlmError("the model's judgment has no list of duplicates")
        numbers = [best, *duplicates]
        if not all(type(n) is int and 1 <= n <= size for n in numbers) or best in duplicates:
            raise LlmError("the model's judgment names memories that are not in the cluster")
        return best - 1, sorted({n - 1 for n in duplicates})

    return parse
