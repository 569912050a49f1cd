"""The model's prompts, one module per point where the design calls the model (seeds
001 and 003): per-turn ``extraction`` (v2, with ``is_update``/``update_hint``), the
episode ``summary``, the ``scratchpad`` rewrite at session end, the ``dedup`` judgment
of a candidate cluster, the ``identity`` compile of USER.md and the ``persona`` file of
promoted traits. Each module has the prompt (zh and en, by the ``language`` setting) and
the parser of its answer; a parser raises :class:`~soloqueue_mem.lifecycle.llm.LlmError`
on an answer it cannot use, so the call is retried and then the rules are kept.
"""

from __future__ import annotations

import json
import re
from typing import Any

from soloqueue_mem.lifecycle.llm import LlmError


def text(answer: str, limit: int) -> str:
    """A free-text answer, trimmed; an empty one is refused, a long one cut at ``limit``."""
    found = answer.strip()
    if not found:
        raise LlmError("the model's answer is empty")
    return found[:limit]


def json_value(answer: str, opening: str) -> Any:
    """The JSON array (``opening`` "[") or object ("{") in an answer, fenced or not."""
    closing = "]" if opening == "[" else "}"
    found = re.search(f"\\{opening}.*\\{closing}", answer, re.DOTALL)
    try:
        value = json.loads(found.group(0) if found else answer)
    except ValueError:
        raise LlmError("the model's answer is not JSON") from None
    if not isinstance(value, list if opening == "[" else dict):
        kind = "array" if opening == "[" else "object"
        raise LlmError(f"the model's answer is not a JSON {kind}")
    return value
