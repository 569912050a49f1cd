"""One statement said twice in one sentence, once in each language.

A bilingual user restates a rule or a fact in the other language in the same breath:
"btw rule: 周末不安排提柜，no pickups on weekends", "My editor is VS Code，我的编辑器是
VS Code". Patterns read each clause, and each would be its own memory: one fact, two
memories (seed 003 §6). Two drafts read from the clauses of one sentence are one
statement when (:func:`restates`):

- one is Chinese and the other holds no Chinese;
- they are of one type and set the same attribute: the same key through the canonical
  predicate table (``user`` / ``editor`` in both languages), or, unkeyed, both said
  under a recurring time scope (``when.SCOPE_ZH`` / ``when.SCOPE_EN``: 周末, weekends);
- what they name agrees: every Latin word or number of the Chinese one is in the
  other, with the same numbers (as dedup's translations, ``dedup.names_agree``), and
  every English word the bilingual table knows has its twin in the Chinese one
  (weekends / 周末: the scopes are one; shellfish is no 花生).

The first statement stays; its sentence, both halves in the user's own words, is then
the one memory as any sentence with a single statement is.
"""

from __future__ import annotations

import re
from functools import cache

from soloqueue_mem.lifecycle.dedup import names, names_agree
from soloqueue_mem.lifecycle.when import SCOPE_EN, SCOPE_ZH
from soloqueue_mem.memory.store import Draft
from soloqueue_mem.text.bilingual import twins_present

_CHINESE = re.compile("[\u3400-\u9fff]")


@cache
def _scopes() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A recurring time scope said in Chinese, and in English."""
    return re.compile(SCOPE_ZH), re.compile(rf"\b(?:{SCOPE_EN})\b", re.IGNORECASE)


def said_once(drafts: list[Draft]) -> list[Draft]:
    """``drafts`` (read from the clauses of one sentence, in order) without those that
    restate an earlier one in the other language."""
    kept: list[Draft] = []
    for draft in drafts:
        if not any(restates(draft, earlier) for earlier in kept):
            kept.append(draft)
    return kept


def restates(later: Draft, earlier: Draft) -> bool:
    """Whether ``later`` says what ``earlier`` said, in the other language (see the
    module doc)."""
    chinese, other = (earlier, later) if _CHINESE.search(earlier.content) else (later, earlier)
    if _CHINESE.search(other.content) or not _CHINESE.search(chinese.content):
        return False
    if later.type != earlier.type or (later.subject, later.predicate) != (
        earlier.subject,
        earlier.predicate,
    ):
        return False
    if not later.predicate and not _same_kind_of_scope(chinese.content, other.content):
        return False
    return names_agree(names(chinese.content), names(other.content)) and twins_present(
        other.content, chinese.content
    )


def _same_kind_of_scope(chinese: str, other: str) -> bool:
    """Whether both texts are said under a recurring time scope (which one: the twins
    of :func:`restates` tell)."""
    zh, en = _scopes()
    return bool(zh.search(chinese) and en.search(other))
