"""A rules memory's content is the user's own statement, with the speaker named.

The quick rules never paraphrase: a template can garble ("我们的项目叫 Aurora" once
became "用户的们的项目叫Aurora"). They keep the clause as said (a leading filler word
such as "btw" or "另外" dropped) and make exactly these substitutions, so the memory
reads the same whoever recalls it:

- Chinese: 我 -> 用户, except in 我们 (the team speaks of itself: kept as said);
- English, whole words: I'm / I am -> User is; I've -> User has; I'll -> User will;
  I'd -> User would; I -> User; my / mine -> User's; me / myself -> User. After
  "User" (and adverbs such as "really", "also"), one of a few common present-tense
  verbs takes its third-person form: like -> likes, have -> has, don't -> doesn't.
  Any other word stays as said ("User switched", "User code in Rust").

"we", "our" and everything else stay as said.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta
from functools import cache

_ENGLISH = {
    "i'm": "User is",
    "i am": "User is",
    "i've": "User has",
    "i'll": "User will",
    "i'd": "User would",
    "i": "User",
    "my": "User's",
    "mine": "User's",
    "me": "User",
    "myself": "User",
}
_ADVERBS = (
    "really also still never always just now only often sometimes mostly mainly usually"
    " generally normally actually absolutely currently definitely strongly"
)
_VERBS = {
    "have": "has",
    "do": "does",
    "don't": "doesn't",
    "go": "goes",
    **{
        verb: verb + "s"
        for verb in (
            "like love prefer enjoy hate dislike use work live own need want speak write"
            " read run manage lead keep track host deploy eat drink drive know mean plan"
            " think find start take get commute cook play"
        ).split()
    },
}


_LATIN = r"[A-Za-z0-9_'’]"


@cache
def _res() -> tuple[re.Pattern[str], re.Pattern[str]]:
    words = "|".join(
        re.escape(w).replace("'", "['’]") for w in sorted(_ENGLISH, key=len, reverse=True)
    )
    # a whole word ends at anything but a Latin letter, a digit or an apostrophe, so
    # a Chinese character touching it ("对了I like Rust") is a word boundary too
    pronoun = re.compile(rf"(?<!{_LATIN})(?:{words})(?!{_LATIN})", re.IGNORECASE)
    verbs = "|".join(re.escape(v) for v in sorted(_VERBS, key=len, reverse=True))
    adverbs = "|".join(_ADVERBS.split())
    agreement = re.compile(rf"(?<!{_LATIN})User((?:\s+(?:{adverbs}))*)\s+({verbs})(?!{_LATIN})")
    return pronoun, agreement


def own_words(clause: str) -> str:
    """``clause`` with the speaker named (the substitutions of the module doc)."""
    text = re.sub(r"我(?!们)", "用户", clause)
    pronoun, agreement = _res()
    text = pronoun.sub(lambda m: _ENGLISH[m.group().casefold().replace("’", "'")], text)
    text = agreement.sub(lambda m: f"User{m.group(1)} {_VERBS[m.group(2)]}", text)
    return text[:1].upper() + text[1:]


PLAN_PREFIXES = ("Plan for {}: ", "计划（{}）：")  # English, Chinese: a plan's day first
PLAN_MARGIN = timedelta(days=3)  # a plan is kept this long after its day


def plan_expiry(day: date) -> datetime:
    """When a plan of ``day`` expires: ``PLAN_MARGIN`` after the day's end (UTC)."""
    return datetime.combine(day, time(), UTC) + timedelta(days=1) + PLAN_MARGIN


def planned(day: date, said: str, chinese: bool) -> str:
    """A plan's content: what was said, after the day it resolved to."""
    return PLAN_PREFIXES[chinese].format(day) + said


def plan_bounds(first: date, last: date) -> list[tuple[str, str]]:
    """The starts of the contents of the plans dated from ``first`` to ``last``, as
    (lowest, highest) of one length, in each language (``memories_starting``)."""
    return [
        (p.format(first)[: p.index("{") + 10], p.format(last)[: p.index("{") + 10])
        for p in PLAN_PREFIXES
    ]


@cache
def _plan() -> re.Pattern[str]:
    """The day a plan's content starts with (:func:`planned`)."""
    return re.compile(r"^(?:Plan for (\d{4}-\d{2}-\d{2}): |计划（(\d{4}-\d{2}-\d{2})）：)")


def plan_day(content: str) -> tuple[str, str]:
    """A memory's content as the day its plan prefix names ("" when it has none) and
    the user's own words after it: the prefix is generated, so it is no evidence of
    what two memories have in common."""
    prefix = _plan().match(content)
    if prefix is None:
        return "", content
    return prefix.group(1) or prefix.group(2), content[prefix.end() :]


def _plain(text: str) -> str:
    return " ".join(text.casefold().split())


def maps_back(content: str, said: str) -> bool:
    """Whether ``content`` is what was said with the documented substitutions: a span
    of it; a span with the sentence's 我 restored ("在一家公司上班" after "我叫王磊");
    or the name a clause goes on about, then that clause ("RabbitMQ 跑在 5673 端口")."""
    source, content = _plain(own_words(said)), _plain(plan_day(content)[1])
    if content in source or (content.startswith("用户") and content[2:] in source):
        return True
    head, _, rest = content.partition(" ")
    return head in source and rest in source
