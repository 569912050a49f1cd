"""The words of machine text a person would say: a tool call's arguments and a tool's
output with the code taken out. A question asks what was said or decided; a tool call
``export_followups(month='2026-06', out='/home/x.xlsx')`` shares "out" with "How many
hours ahead do the reminders go out?" only through a keyword argument. Recall counts a
tool turn's share of the question on these words (docs/concepts/memory.md)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

# A token is code when it holds one of these inside (identifiers, paths, calls,
# assignments, addresses), a dot between word characters (train.py, a.b), a camelCase
# hump, or starts as a command-line option or variable does.
_CODE_INSIDE = re.compile(r"[_=/\\(){}\[\]<>@|:;*&^%$#`~]|\w\.\w|[a-z][A-Z]")
_CODE_START = re.compile(r"^(?:-{1,2}\w|\$)")
_EDGE_PUNCTUATION = "\"'`,.;:!?()[]{}<>“”‘’"


def prose(text: str, named: str = "") -> str:
    """``text`` with its code tokens left out, unless ``named`` (the question) names the
    token whole: "why did fct_churn fail" still finds ``dbt run --select fct_churn``. A
    JSON document counts by its values; its keys are the program's names."""
    named = named.casefold()
    kept = [
        token for token in _tokens(_values(text)) if not _code(token) or token.casefold() in named
    ]
    return " ".join(kept)


def _values(text: str) -> str:
    """The string and number values of ``text`` when it is a JSON object or array."""
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return text
    try:
        document = json.loads(stripped)
    except ValueError:
        return text
    return "\n".join(_leaves(document))


def _leaves(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    elif isinstance(value, str):
        yield value
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield str(value)


def _tokens(text: str) -> Iterator[str]:
    for token in text.split():
        token = token.strip(_EDGE_PUNCTUATION)
        if token:
            yield token


def _code(token: str) -> bool:
    return bool(_CODE_INSIDE.search(token) or _CODE_START.match(token))
