"""What a statement says it replaced: the value it names as given up.

"The studio is dropping .po, everything moves to XLIFF 2.0" names ``.po``; "期中不是28号，
是6月2号" names ``28号``. The statement that said the old value need never have become a
memory. Recall marks the turns stating such a value as outdated
(:mod:`soloqueue_mem.memory.stale`), and a memory naming one is kept at its expiry
(``memories.replaced_value``, :func:`soloqueue_mem.memory.store.expired`). Plain text
rules, with no store behind them: the schema's migration derives the column with them
too.
"""

from __future__ import annotations

import re
from functools import cache

_NAMED = re.compile(r"[A-Z0-9.]|[\u4e00-\u9fff]")  # a name or term: see replaced_value


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
