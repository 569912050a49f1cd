"""A correction cue: a general phrase announcing that a known value changed.

"actually", "moved to", "no longer", "改成", "换成", "不再", "更正" …: what
:mod:`soloqueue_mem.memory.correction` reads as a statement correcting an older one,
and :mod:`soloqueue_mem.text.replaced` as the change between a value given up and the
one that holds. Plain text rules, with no store behind them.
"""

from __future__ import annotations

import re
from functools import cache


@cache
def cue() -> re.Pattern[str]:
    english = (
        r"actually|scratch that|correction|no longer|not\b.{0,40}\banymore|instead|after all"
        r"|(?:changed?|moved?|switch(?:ed)?|updated?|bumped|raised|lowered|relaxed|reduced"
        r"|increased|cut|dropped|replaced)\s+(?:it\s+|that\s+|back\s+)?(?:to|from|with|by)\b"
        r"|\bdropped\b|\bswitch(?:ed)? back\b|update[ds]?(?=\s*:)|upgraded|downgraded"
        r"|I meant|I misspoke|my mistake"
    )
    # A change verb with the result it reaches: 改成, 换到, 转到 ("打样这批转到捷配"),
    # 迁到, 搬到, 挪到, 升级到 …; or with 了, the change done: 换了, 改了, 调了 ("权重也调了");
    # or what was said taken back: 不对 (not the question tag 对不对), 说错了, 记错了.
    chinese = (
        "[改换转迁搬挪调变](?:成|为|到)|(?:升级|降级|升|降)(?:成|为|到)|改一下|[改换调]了"
        "|调整为|调整到|更正|纠正|其实|(?<!对)不对(?![吗吧呢])|[说记]错了"
        "|不再|不用了|已经改|现在归|现在改|从.{1,12}换|更新[:：]"
    )
    return re.compile(f"\\b(?:{english})\\b|{chinese}", re.IGNORECASE)


def is_correction(text: str) -> bool:
    """Whether ``text`` announces that a known value changed (see :func:`cue`)."""
    return cue().search(text) is not None
