"""Which active memory a correction replaces when it shares no key with it.

A statement supersedes by key (subject and predicate) when a pattern or the model gave
one. A correction often has none: "Standup moved to 10:15" names no attribute a pattern
is sure of. It still says that it changes something: with a model, through its
``update_hint`` (seed 001: what known fact this one updates); without one, through a
**correction cue** — a general phrase that announces a changed value ("actually",
"moved to", "no longer", "not … anymore", "改成", "换成", "不再", "更正" …, see
:func:`_cue`). Its **topic** is then the hint, or the statement with its cues and numbers
left out (values are what changes), as content words: Latin words and CJK character
pairs, stopwords aside (:func:`topic_words`).

The memory replaced is the one active memory of the same scope that shares the most
topic words, at least ``MIN_SHARED`` (one when the topic has only one word), and
strictly more than any other: a tie, or nothing shared enough, replaces nothing, since
superseding the wrong memory takes it out of recall.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from soloqueue_mem.memory.model import Memory
from soloqueue_mem.text.stopwords import STOPWORDS

MIN_SHARED = 2
CANDIDATES = 20  # memories a lookup by topic words reads
MAX_STATEMENT = 300  # characters: a rules memory has at most 200
_NAMED = re.compile(r"[A-Z0-9.]|[\u4e00-\u9fff]")  # a name or term: see replaced_value


@cache
def _cue() -> re.Pattern[str]:
    english = (
        r"actually|scratch that|correction|no longer|not\b.{0,40}\banymore|instead|after all"
        r"|(?:changed?|moved?|switch(?:ed)?|updated?|bumped|raised|lowered|relaxed|reduced"
        r"|increased|cut|dropped|replaced)\s+(?:it\s+|that\s+|back\s+)?(?:to|from|with|by)\b"
        r"|\bdropped\b|\bswitch(?:ed)? back\b|update[ds]?(?=\s*:)"
    )
    # A change verb with the result it reaches: 改成, 换到, 转到 ("打样这批转到捷配"),
    # 迁到, 搬到, 挪到 …; or with 了, the change done: 换了, 改了, 调了 ("权重也调了").
    chinese = (
        "[改换转迁搬挪调变](?:成|为|到)|改一下|[改换调]了|调整为|调整到|更正|纠正|其实"
        "|不再|不用了|已经改|现在归|现在改|从.{1,12}换|更新[:：]"
    )
    return re.compile(f"\\b(?:{english})\\b|{chinese}", re.IGNORECASE)


@cache
def _replaced() -> re.Pattern[str]:
    """What a correction names as the value it replaces: the word after a verb of
    giving something up ("dropping .po", "instead of Jenkins", "no longer using
    Redis"), or between 不是 and the 是 that states the new one ("不是28号，是6月2号"),
    or after 不再用/不再找."""
    english = (
        r"\b(?:dropping|dropped|ditching|ditched|replacing|instead of"
        r"|no longer (?:using|use|with|on))\s+(?:the |our |my )?(?P<en>[\w.+#-]*\w)"
    )
    value = r"[^，,。；;、\s]{1,12}"
    chinese = f"不是(?P<zh>{value})[，,]\\s*(?:而)?是|不再(?:用|找)(?P<zh2>{value})"
    return re.compile(f"{english}|{chinese}", re.IGNORECASE)


def replaced_value(text: str) -> str:
    """The value ``text`` says it replaces (see :func:`_replaced`), or "". A value is a
    name or a term: a capital, a digit, a dot or a Chinese character in it. A plain
    lowercase word after "dropped" or "instead of" is everyday speech ("I dropped the
    ball", "instead of going out"), not a value that was stated."""
    found = _replaced().search(text)
    if found is None:
        return ""
    value = next(v for v in found.groups() if v)
    return value if _NAMED.search(value) else ""


def is_correction(text: str) -> bool:
    """Whether ``text`` announces that a known value changed (see the module doc)."""
    return _cue().search(text) is not None


def topic_words(text: str) -> frozenset[str]:
    """The content words of ``text`` that name what it is about: its cue phrases,
    numbers and stopwords left out."""
    from soloqueue_mem.lifecycle.dedup import keywords  # writes only: recall never needs it

    words = keywords(_cue().sub(" ", text))
    return frozenset(w for w in words if w not in STOPWORDS and not any(c.isdigit() for c in w))


def topic(hint: str, content: str) -> frozenset[str]:
    """What a draft corrects: the model's hint, or a cued statement's own words;
    empty when it corrects nothing. A text longer than a statement (a promoted
    document's chunk) states what it says and corrects nothing: with its many words it
    would share two with some memory whatever a cue in it is about."""
    if hint.strip():
        return topic_words(hint)
    if len(content) > MAX_STATEMENT or not is_correction(content):
        return frozenset()
    return topic_words(content)


def corrected(words: frozenset[str], candidates: Iterable[Memory]) -> Memory | None:
    """The one candidate sharing the most of ``words``, enough of them, strictly more
    than any other; None otherwise."""
    if not words:
        return None
    need = min(MIN_SHARED, len(words))
    shared = sorted(
        ((len(words & topic_words(m.content)), m) for m in candidates),
        key=lambda pair: -pair[0],
    )
    if not shared or shared[0][0] < need:
        return None
    if len(shared) > 1 and shared[1][0] == shared[0][0]:
        return None
    return shared[0][1]
