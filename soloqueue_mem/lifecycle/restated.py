"""One statement said twice in one sentence, once in each language.

A bilingual user restates a rule or a fact in the other language in the same breath:
"btw rule: 周末不安排提柜，no pickups on weekends", "My editor is VS Code，我的编辑器是
VS Code". Patterns read each clause, and each would be its own memory: one fact, two
memories (seed 003 §6). Two drafts read from the clauses of one sentence are one
statement when (:func:`restates`):

- one is Chinese and the other holds no Chinese;
- they are of one type and set the same attribute: the same key through the canonical
  predicate table (``user`` / ``editor`` in both languages), or, for a standing rule
  with no key, the recurring time scope it is said under (``when.SCOPE_ZH`` /
  ``when.SCOPE_EN``: 周末, weekends), which is what such a rule is about. A fact said
  under a scope is no rule: "周末我们去爬山" and "On weekends I play tennis" are two;
- what they name agrees, both ways: every Latin word or number of the Chinese one is
  in the other, with the same numbers (as dedup's translations, ``dedup.names_agree``);
  every name of the English one (a capitalised word past its first) is in the Chinese
  one, as written or as its twin in the bilingual table ("我住在上海浦东" is not "We
  moved to Austin from the Bay Area", though both set the city); and every English
  word the table knows has its twin in the Chinese one (weekends / 周末: the scopes
  are one; shellfish is no 花生).

The first statement stays; its sentence, both halves in the user's own words, is then
the one memory as any sentence with a single statement is.
"""

from __future__ import annotations

import re
from functools import cache

from soloqueue_mem.lifecycle.dedup import names, names_agree
from soloqueue_mem.lifecycle.when import SCOPE_EN, SCOPE_ZH
from soloqueue_mem.memory.store import Draft
from soloqueue_mem.text.bilingual import translations, twins_present

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
    if not later.predicate and not (
        later.type == "RULE" and _same_kind_of_scope(chinese.content, other.content)
    ):
        return False
    return (
        names_agree(names(chinese.content), names(other.content))
        and _names_held(other.content, chinese.content)
        and twins_present(other.content, chinese.content)
    )


def _names_held(english: str, chinese: str) -> bool:
    """Whether each name of ``english`` (a capitalised word past its first, the
    speaker's "User" aside) is in ``chinese``, as written or as a twin."""
    held = names(chinese)
    for word in re.findall(r"[A-Za-z][\w'.-]*", english)[1:]:
        if not word[0].isupper() or word.startswith("User"):
            continue
        if word.casefold() not in held and not any(t in chinese for t in translations(word)):
            return False
    return True


def _same_kind_of_scope(chinese: str, other: str) -> bool:
    """Whether both texts are said under a recurring time scope (which one: the twins
    of :func:`restates` tell)."""
    zh, en = _scopes()
    return bool(zh.search(chinese) and en.search(other))
