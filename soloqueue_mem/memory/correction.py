"""Which active memory a correction replaces when it shares no key with it.

A statement supersedes by key (subject and predicate) when a pattern or the model gave
one. A correction often has none: "Standup moved to 10:15" names no attribute a pattern
is sure of. It still says that it changes something: with a model, through its
``update_hint`` (seed 001: what known fact this one updates); without one, through a
**correction cue** — a general phrase that announces a changed value ("actually",
"moved to", "no longer", "not … anymore", "改成", "换成", "不再", "更正" …, see
:func:`soloqueue_mem.text.cue.cue`) — or by naming the value it replaces ("期中不是28号，
是6月2号", "we're ditching Jenkins", "48 小时太早了，改成提前 24 小时",
:func:`soloqueue_mem.text.replaced.replaced_value`). Its **topic**
is then the hint, or the statement with its cues and numbers left out (values are
what changes), as content words: Latin words and CJK character pairs, stopwords aside
(:func:`topic_words`).

The memory replaced is the one active memory of the same scope that shares the most
topic words, at least ``MIN_SHARED`` (one when the topic has only one word), and
strictly more than any other: a tie, or nothing shared enough, replaces nothing, since
superseding the wrong memory takes it out of recall.

A **handover** replaces who fills a role: what was said names someone leaving ("Dana
moved to their marketing team", "老周调去做网关了") and someone taking over ("Felix
took over as PM", "以后找小林", "交给小林"), see :mod:`soloqueue_mem.text.handover`.
A statement of it that names the taking over corrects, as its topic, its own words
(the role: review, PM) with the name of the one who left, also when that name is in
another clause of what was said ("…，老周调去做网关了。代码 review 也交给小林",
:func:`soloqueue_mem.text.handover.handover_hints`).
Only memories naming the one who left are candidates, and the topic rule above still
needs two words in common: "…让老周 review" (老周, review) is replaced, "老周是我师傅"
or "Dana is my badminton partner" (the name alone) is not.
"""

from __future__ import annotations

from collections.abc import Iterable

from soloqueue_mem.memory.model import Memory
from soloqueue_mem.text.cue import cue, is_correction
from soloqueue_mem.text.handover import handed_over
from soloqueue_mem.text.replaced import replaced_value
from soloqueue_mem.text.stopwords import STOPWORDS

MIN_SHARED = 2
CANDIDATES = 20  # memories a lookup by topic words reads
MAX_STATEMENT = 300  # characters: a rules memory has at most 200


def topic_words(text: str) -> frozenset[str]:
    """The content words of ``text`` that name what it is about: its cue phrases,
    numbers and stopwords left out."""
    from soloqueue_mem.lifecycle.dedup import keywords  # writes only: recall never needs it

    words = keywords(cue().sub(" ", text))
    return frozenset(w for w in words if w not in STOPWORDS and not any(c.isdigit() for c in w))


def topic(hint: str, content: str) -> frozenset[str]:
    """What a draft corrects: the model's hint, or the own words of a statement that
    has a cue or names the value it replaces; empty when it corrects nothing. A text
    longer than a statement (a promoted document's chunk) states what it says and
    corrects nothing: with its many words it would share two with some memory whatever
    a cue in it is about."""
    if hint.strip():
        return topic_words(hint)
    if len(content) > MAX_STATEMENT or not (
        is_correction(content) or handed_over(content) or replaced_value(content)
    ):
        return frozenset()
    return topic_words(content)


def corrected(
    words: frozenset[str], candidates: Iterable[Memory], holder: str = ""
) -> Memory | None:
    """The one candidate sharing the most of ``words``, enough of them, strictly more
    than any other; None otherwise. With the ``holder`` a handover names as leaving,
    only the candidates naming them count, not one saying that someone left."""
    if not words:
        return None
    need = min(MIN_SHARED, len(words))
    named = topic_words(holder)
    if named:  # naming them, not saying they left (the handover's other statement)
        candidates = (
            m for m in candidates if named <= topic_words(m.content) and not handed_over(m.content)
        )
    shared = sorted(
        ((len(words & topic_words(m.content)), m) for m in candidates),
        key=lambda pair: -pair[0],
    )
    if not shared or shared[0][0] < need:
        return None
    if len(shared) > 1 and shared[1][0] == shared[0][0]:
        return None
    return shared[0][1]
