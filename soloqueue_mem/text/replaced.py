"""What a statement says it replaced: the value it names as given up.

"The studio is dropping .po, everything moves to XLIFF 2.0" names ``.po``; "期中不是28号，
是6月2号" names ``28号``; "48 小时太早了，改成提前 24 小时" names ``48 小时``; a handover
names the one who left ("阿杰下周去漳州那边开新项目了，同安的收尾交给蔡雨婷" names
``阿杰``). The statement that said the old value need never have become a memory. Recall marks the
turns stating such a value as outdated (:mod:`soloqueue_mem.memory.stale`), and a
memory naming one is kept at its expiry (``memories.replaced_value``,
:func:`soloqueue_mem.memory.store.expired`). Plain text rules, with no store behind
them: the schema's migration derives the column with them too.
"""

from __future__ import annotations

import re
from functools import cache
from itertools import pairwise

from soloqueue_mem.text.cue import GIVEN_UP, SELF_REPAIR, cue
from soloqueue_mem.text.handover import handed_over
from soloqueue_mem.text.months import MONTH_NAME_EN

# The version of the rule :func:`replaced_value` follows. Expiry reads what it gave when
# a memory was written (``memories.replaced_value``), so a change to what it names for a
# text already stored raises it, with a schema step on each back end deriving the column
# again (memory.db's m018 to m027, PostgreSQL's steps after them; a test counts them).
# Rule 2 names the earlier of two values of one kind around a change
# (:func:`_changed_from`); rule 3 reads a thing moved to another day or time as a
# change ("ETD 10/27 那条船满了，被 roll 到 10/31", :mod:`soloqueue_mem.text.cue`);
# rule 4 names the one who left in a handover ("阿杰下周去漳州那边开新项目了，同安的收尾
# 交给蔡雨婷": ``阿杰``, :mod:`soloqueue_mem.text.handover`); rule 5 reads a request to
# stop going to someone or using something ("以后排班别找小周了": ``小周``), and a
# speaker's repair of their own words what it takes back ("寄东莞松山湖那个厂……哦不是，
# 寄长安镇那个厂": ``东莞松山湖``); rule 6 reads "not X, it's Y" as 不是X，是Y ("not -16, it's
# -14 LUFS": ``-16``), and a handover with the time before the verb of leaving; rule 7
# reads "corrected" as 更正 is read (a change cue), and a handover whose leaver goes off
# to other work or away for a while, named after the one taking over ("主图以后交给
# Kelly 吧，阿杰去专心做视频": ``阿杰``; "Ciarán's gone on secondment … so Niamh is
# supervising Heron": ``Ciarán``); rule 8 reads a number said again with the one it
# replaces after "not" as a change naming that one ("The consult fee is $175, not
# $150": ``150``; "是 3.22，不是 3.19": ``3.19``, :func:`_restated`); rule 9 reads a
# date with the month's name as one value ("moved from June 26 to July 3": ``June 26``,
# where rule 8 named nothing; "instead of March 12": ``March 12``, not ``March``); rule
# 10 reads a typo taken back (打错, 写错) as a change cue, and a handover whose leaver goes
# on leave, or whose new lead is said as 由X带 ("Leo 下周开始休陪产假，install 改由陈默带":
# ``Leo``); rule 11 reads the numbers of a list's items as no values ("1) …；2) 成品暂存
# 改到…" named ``1``).
RULE_VERSION = 11

_NAMED = re.compile(r"[A-Z0-9.]|[\u4e00-\u9fff]")  # a name or term: see replaced_value


# A calendar date with the month's name ("June 26", "26 June", "the 3rd of November"): one
# value, whose day alone is no value of its own ("from June 26 to July 3" names June 26).
_MONTH = rf"(?i:{MONTH_NAME_EN})\b"
_DATE = rf"{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}"


@cache
def _replaced() -> re.Pattern[str]:
    """What a correction names as the value it replaces: the word after a verb of
    giving something up ("dropping .po", "instead of Jenkins", "no longer using
    Redis"), or between 不是 and the 是 that states the new one ("不是28号，是6月2号"),
    or after 不再用/不再找, 别再找/不要再用, or 别找/不要用 before the 了 that closes
    what is given up ("以后排班别找小周了": ``小周``, :data:`soloqueue_mem.text.cue.GIVEN_UP`)."""
    english = (
        r"\b(?:dropping|dropped|ditching|ditched|replacing|instead of"
        r"|no longer (?:using|use|with|on))\s+(?:the |our |my )?"
        rf"(?P<en>{_DATE}|[\w.+#-]*\w)"
        # "not -16, it's -14 LUFS", "not Tuesday but Wednesday": 不是X，是Y in English
        r"|\bnot\s+(?P<en2>[\w.+#-]*\w)\s*,?\s+(?:it's|it is|but|rather)\s"
    )
    value = r"[^，,。；;、\s]{1,12}"
    again = "(?:不再|(?:别|不要|不用)再)"  # from now on: 不再找, 别再找
    chinese = (
        f"不是(?P<zh>{value})[，,]\\s*(?:而)?是"
        f"|(?:{again}|别|不要|不用)[用找]\\s?(?P<zh3>{GIVEN_UP})\\s?了"
        f"|{again}[用找]\\s?(?!了)(?P<zh2>{value})"
    )
    return re.compile(f"{english}|{chinese}", re.IGNORECASE)


# A number as written: "48", "0.12", "10/27", "3.10", "10:15", with the unit after it
# ("48 小时", "20MB", "30%"): the unit tells what a plain integer counts; or such a date.
_VALUE = re.compile(
    rf"(?<![\w.:/])(?P<date>{_DATE})"
    r"|(?<![\w.:/])(?P<number>\d+(?:[.:/]\d+)*)(?![\w.:/]*\d)"
    r"(?:\s?(?P<unit>%|[A-Za-z]{1,8}\b|[\u4e00-\u9fff]{1,2}))?"
)
# The number of an item in a list, "1) …；2) 成品暂存改到…" or "2、…": no value.
_LIST_NUMBER = re.compile(r"(?:^|(?<=[\s:：;；]))\d{1,2}[)）、]")


def _values(text: str) -> list[re.Match[str]]:
    """The values of ``text`` in order (:data:`_VALUE`), but for the numbers of a list's
    items: "1) BOM 目标改为 ¥135；2) EVT build 推到 8月27日" changes no 1 into a 2."""
    numbers = {found.start() for found in _LIST_NUMBER.finditer(text)}
    return [found for found in _VALUE.finditer(text) if found.start() not in numbers]


_DIRECTION = re.compile(r"\s*(?:to|->|→|到)\s*", re.IGNORECASE)  # "from 8080 to 8443"
MAX_CHANGE_GAP = 80  # characters between the value given up and the one that holds


def _alike(earlier: re.Match[str], later: re.Match[str]) -> str:
    """The earlier of two numbers as named when both are values of one kind, or "":
    the same shape of digits and separators ("10/27" and "10/31" are dates alike,
    "0.12" and "0.14" amounts), and for plain integers the same unit when both have
    one ("48 小时" and "24 小时" are hours alike; "2 个人" and "10 点" are not); two
    dates with a month's name of different days ("June 26" and "July 3")."""
    if earlier.group("date") or later.group("date"):
        return earlier.group("date") if _days_differ(earlier, later) else ""
    number, other = earlier.group("number"), later.group("number")
    if number == other or re.sub(r"\d+", "9", number) != re.sub(r"\d+", "9", other):
        return ""
    if not number.isdigit():
        return number
    unit, other_unit = earlier.group("unit"), later.group("unit")
    if unit and other_unit:
        return f"{number} {unit}" if unit == other_unit else ""
    return number


def _days_differ(earlier: re.Match[str], later: re.Match[str]) -> bool:
    """Both values are dates with a month's name, of different days ("June 26" and
    "July 3"; "26 June" and "June 26" are one day)."""
    days = [_day(found.group("date")) for found in (earlier, later) if found.group("date")]
    return len(days) == 2 and days[0] != days[1]


def _day(date: str) -> tuple[str, str]:
    """A date's month (its first three letters: an ordinal's "rd" and "of" have two) and
    day: "the 3rd of November" and "Nov 3" are ("nov", "3")."""
    month = re.search("[A-Za-z]{3}", date)
    return (month.group().casefold() if month else "", str(int(re.findall(r"\d+", date)[0])))


def _end(value: re.Match[str]) -> int:
    """Where ``value`` ends: a number before its unit, a date after its last word."""
    return value.end("number") if value.group("number") else value.end()


def _changed_from(text: str) -> str:
    """The value a change in ``text`` gives up: of two values of one kind (:func:`_alike`)
    in one sentence, the earlier, when a correction cue stands between them ("48 小时太早
    了，改成提前 24 小时") or the later follows it as where it went ("Standup moved from
    10:00 to 10:15", the cue just before the earlier); or "". Two values of a kind
    with no change between them are a range or a list ("9 点到 18 点" has no cue;
    "改到 3 点，4 点结束" none between; "Actually the window is 10:00 to 12:00" none
    just before the range)."""
    if cue().search(text) is None:
        return ""
    values = _values(text)
    for n, earlier in enumerate(values):
        for later in values[n + 1 :]:
            gap = text[_end(earlier) : later.start()]
            if len(gap) > MAX_CHANGE_GAP or re.search(r"[。.!?！？\n]\s", f"{gap} "):
                break
            named = _alike(earlier, later)
            cued = _cued(text, _end(earlier), later.start())
            if named and (cued or _DIRECTION.fullmatch(gap) and _from(text, earlier)):
                return named
    return ""


# Between a number said again and the one it replaces: the unit (a word or three), a
# comma, then "not" or 不是 ("$175, not $150"; "3.22，不是 3.19"; "200 requests per
# minute, not 100"). "40 km, not bad" has no number after it.
_RESTATED_GAP = re.compile(
    r"(?:\s?[A-Za-z%\u4e00-\u9fff]{1,8}){0,3}\s*[,，]\s*(?:and\s+)?(?:not|而?不是)\s*[$€£¥]?",
    re.IGNORECASE,
)


def _restated(text: str) -> str:
    """The value a number said again gives up, named after "not": "The consult fee is
    $175, not $150" names ``150``, "They land on 6 November, not 3 November" ``3
    November``, "是 3.22，不是 3.19" ``3.19`` — "not X, it's Y" (不是X，是Y) said the other
    way round; or "" when the two are not values of one kind (:func:`_alike`). The later
    of the two is the one given up, where :func:`_changed_from` names the earlier. It is
    no correction cue: the statement corrects by naming what it replaces
    (:mod:`soloqueue_mem.memory.correction`), and "现在是 210 pax，不是 180 了" read as a cue
    superseded the whole memory that also named the wedding's venue."""
    values = _values(text)
    for earlier, later in pairwise(values):
        gap = text[_end(earlier) : later.start()]
        if _RESTATED_GAP.fullmatch(gap):
            return _alike(later, earlier)
    return ""


def _cued(text: str, start: int, end: int) -> bool:
    """Whether a correction cue stands in ``text`` between ``start`` and ``end``, read
    in the whole text: "被 roll 到 10/31" is a cue by the day it reaches."""
    return any(start <= found.start() and found.end() <= end for found in cue().finditer(text))


def _from(text: str, value: re.Match[str]) -> bool:
    """Whether a correction cue ends just before ``value``: "moved from 10:00"."""
    before = text[: value.start()].rstrip()
    return any(found.end() >= len(before) - 1 for found in cue().finditer(before))


_CLAUSE_END = re.compile(r"[，,。；;!?！？]|\.(?:\s|$)")
# a Latin word or number ("3pm", "v0.9.4"), or one Chinese character
_TOKEN = re.compile(r"[A-Za-z0-9](?:[\w.:/+#-]*[A-Za-z0-9])?|[\u4e00-\u9fff]", re.ASCII)


def _repaired(text: str) -> str:
    """What a speaker takes back when they repair their own words (:data:`SELF_REPAIR`):
    of the clause before the repair, the words the clause after it says again
    differently. What both say alike at their end ("那个厂"), and the words of the
    repeat's start found in the taken-back clause ("寄"), frame the value: "寄东莞松山湖
    那个厂……哦不是，寄长安镇那个厂" names ``东莞松山湖``, "周会定在周二……哦不是，周三"
    ``周二`` (one Chinese character is part of a word: the one before it joins it);
    "at 3pm, no wait, 4pm", a bare value with no frame, the last word taken back. A
    longer repeat with nothing in common names nothing."""
    found = re.search(SELF_REPAIR, text, re.IGNORECASE)
    if found is None:
        return ""
    said = _CLAUSE_END.split(text[: found.start()].rstrip("…. ，,"))[-1]
    again = _CLAUSE_END.split(text[found.end() :].lstrip(), maxsplit=1)[0]
    old = list(_TOKEN.finditer(said))
    new = [t.group().lower() for t in _TOKEN.finditer(again)]
    while old and new and old[-1].group().lower() == new[-1]:
        old, new = old[:-1], new[:-1]
    if not old or not new:
        return ""
    framed = len(new) < len(list(_TOKEN.finditer(again)))  # an end said alike
    start = len(old) - 1 if len(new) == 1 else len(old)  # a bare value: the last word
    words = [t.group().lower() for t in old]
    for size in range(len(new), 0, -1):
        at = [i for i in range(len(words) - size + 1) if words[i : i + size] == new[:size]]
        if at:
            start, framed = at[-1] + size, True
            break
    if start >= len(old) or not (framed or len(new) == 1):
        return ""
    if 0 < start == len(old) - 1 and len(words[start]) == 1 and not words[start].isascii():
        start -= 1  # 二 of 周二
    return said[old[start].start() : old[-1].end()]


def replaced_value(text: str) -> str:
    """The value ``text`` says it replaces (see :func:`_replaced`), or "". A value is a
    name or a term: a capital, a digit, a dot or a Chinese character in it. A plain
    lowercase word after "dropped" or "instead of" is everyday speech ("I dropped the
    ball", "instead of going out"), not a value that was stated."""
    found = _replaced().search(text)
    if found is None:
        return _restated(text) or _changed_from(text) or handed_over(text) or _repaired(text)
    value = next(v for v in found.groups() if v)
    return value if _NAMED.search(value) else ""
