"""A correction cue: a general phrase announcing that a known value changed.

"actually", "moved to", "no longer", "改成", "换成", "不再", "更正", "推到 4月25号" …: what
:mod:`soloqueue_mem.memory.correction` reads as a statement correcting an older one,
and :mod:`soloqueue_mem.text.replaced` as the change between a value given up and the
one that holds. Plain text rules, with no store behind them.
"""

from __future__ import annotations

import re
from functools import cache

from soloqueue_mem.text.stopwords import ENGLISH_STOPWORDS


@cache
def cue() -> re.Pattern[str]:
    english = (
        r"actually|scratch that|correct(?:ion|ed)|no longer|not\b.{0,40}\banymore|instead|after all"
        r"|(?:chang(?:e|ed|ing)|mov(?:e|ed|ing)|switch(?:ed|ing)?|migrat(?:e|ed|ing)|updated?"
        r"|bumped|raised|lowered|relaxed|reduced"
        r"|increased|cut|dropped|replaced)\s+(?:it\s+|that\s+|back\s+)?(?:to|from|with|by)\b"
        r"|\bdropped\b|\bswitch(?:ed)? back\b|update[ds]?(?=\s*:)|upgraded|downgraded"
        r"|I meant|I misspoke|my mistake"
    )
    # A change verb with the result it reaches: 改成, 换到, 转到 ("打样这批转到捷配"),
    # 迁到, 迁移到 ("migrating to"), 搬到, 挪到, 升级到 …; or with 了, the change done: 换了,
    # 改了, 调了 ("权重也调了");
    # or what was said taken back: 不对 (not the question tag 对不对), 说错了, 记错了,
    # a typo, 打错/写错 ("sorry 打错，是 3月18日"; not 打错电话);
    # or someone or something given up: 不再, and the same said as a request, 别再找,
    # 不要再用, or with 了 after what is given up, 别找小周了 (别用 alone forbids).
    chinese = (
        "[改换转迁搬挪调变](?:成|为|到)|(?:升级|降级|升|降|迁移)(?:成|为|到)|改一下|[改换调]了"
        "|调整为|调整到|更正|纠正|其实|(?<!对)不对(?![吗吧呢])|[说记打写]错了|[打写]错(?=[，,。；;！!\\s]|$)"
        f"|不再|{_given_up()}|不用了|已经改|现在归|现在改|从.{{1,12}}换|更新[:：]"
    )
    return re.compile(
        f"\\b(?:{english})\\b|{chinese}|{_moved_in_time()}|{SELF_REPAIR}", re.IGNORECASE
    )


# A speaker taking back the words they just said and saying them again: "寄东莞松山湖
# 那个厂……哦不是，寄长安镇那个厂", "不是不是，", "at 3pm, no wait, 4pm". 不是 alone is
# everywhere in Chinese; after a trailing-off or an interjection, before a pause, it
# takes back what came before. :func:`soloqueue_mem.text.replaced.replaced_value` names
# what the repeat replaced.
SELF_REPAIR = r"(?:…+|[哦噢喔啊呃额])\s*不是[，,]|不是不是[，,]?|\bno wait\b[,—–-]?"


def _given_up() -> str:
    """A request to stop going to someone or using something: 别再找, 不要再用, or 别找,
    不要用, 不用找 with 了 closing what is given up ("以后排班别找小周了"), the cue
    ending before it (the name is the topic, and the value
    :func:`soloqueue_mem.text.replaced.replaced_value` names)."""
    return f"(?:别|不要|不用)(?:再[找用]|[找用](?=\\s?{GIVEN_UP}\\s?了))"


# What a request to stop names as given up, before the 了 closing it: a name or a
# term of two characters or more, no pronoun ("别找我了" gives up no value).
GIVEN_UP = "(?![我你他她它])[^，,。；;、！!？?\\s了][^，,。；;、！!？?\\s]{1,11}?"


def _moved_in_time() -> str:
    """A dated thing moved to another day or time: "推到4月25号", "推迟到下周", "延期到
    周五", "被 roll 到 10/31", "postponed to Friday", "pushed back to 3pm". What it
    reaches must be a day or a time (the cue ends before it), since the same verbs move
    other things ("代码推到 main", "pushed to main", "delayed to avoid traffic", "pushed
    to the 11th floor")."""
    moved = (
        "推迟?|推后|延期|延后|延迟|顺延|改期|提前"
        r"|\b(?:roll(?:ed)?|push(?:ed)?|postponed?|delayed?|rescheduled?|slipp?(?:ed)?)"
        r"(?:\s+(?:it|that|back|out))?\s*"
    )
    # an ordinal is a day when nothing but a stopword or punctuation follows it, as in
    # lifecycle.when ("the 14th", "the 14th of May"; "the 11th floor" is none)
    day_follower = "|".join(sorted(ENGLISH_STOPWORDS))
    day_en = (
        r"\d{1,2}(?:[:/.-]\d{1,2}|\s*[ap]\.?m\b)|next\b|tomorrow\b"
        r"|(?:mon|tues|wednes|thurs|fri|satur|sun)day"
        r"|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s*\d"
        rf"|(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)\b(?=\s*$|\s*[^\w\s]|\s+(?:{day_follower})\b)"
    )
    day_zh = "[0-9一二两三四五六七八九十]+\\s*[月号日点]|下|明|后天|月底|(?:这|本)?(?:周|星期|礼拜)"
    return f"(?:{moved})(?:到|至|\\b(?:to|until|till)\\b)\\s*(?={day_en}|{day_zh})"


def is_correction(text: str) -> bool:
    """Whether ``text`` announces that a known value changed (see :func:`cue`)."""
    return cue().search(text) is not None
