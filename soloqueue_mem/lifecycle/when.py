"""The future day a sentence names, resolved against the time it was said.

"next week", "on Friday", "in 3 days", "May 3", "明天", "下周三", "月底", "三月五号":
a date ("May 3", "三月五号") gives the day, and so does a day of the month alone
("friday the 11th", "the 11th", 11号: the next such day, the date winning over a
weekday that disagrees), else the first expression of the list found; one that names
the past ("yesterday", "上周") gives nothing. Pure: the caller passes the turn's
timestamp.

A weekday is not always a day. Used attributively it names a recurring thing: after a
determiner and before a noun ("the Thursday freeze", "our Friday standup"), after
"every"/"each", 每 or 每个 (a schedule: "every Monday", "每周四"), or before 的 and what
it qualifies ("周四的发布冻结"). Such a weekday names no day
(:func:`_without_recurring`); "on Thursday", "this Thursday", "Thursday we migrate",
"周四上线", "下周四", "周四的时候" still do. 周末 counts as a weekday here ("每个周末"),
and a bare weekday or 周末 followed by a word that says "each time" or a negation (都,
一律, 不: "周末都要值班", "周末我们不安排会议") is habitual: no day either.

:data:`SCOPE_ZH` and :data:`SCOPE_EN` are the recurring time scopes a standing rule
is said under ("周五不要上线", "晚上别打电话", "No deploys on Fridays"): a weekday or
weekend with no 下/这/本/next/this to make it one day, a part of the day, working
days and holidays (see ``patterns``).
"""

from __future__ import annotations

import re
from calendar import monthrange
from collections.abc import Callable
from datetime import date, datetime, timedelta
from functools import cache

from soloqueue_mem.text.months import MONTH_NAME_EN
from soloqueue_mem.text.stopwords import ENGLISH_STOPWORDS
from soloqueue_mem.text.when import ZH_NUMBER

_WEEKDAYS_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS_EN = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_ZH_DIGITS = {
    "零": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_ZH_WEEKDAY_NAME = "(?:周|星期|礼拜)[一二三四五六日天]"
# a recurring time scope, said first (so 下周五 and 这周末, one day, are none): a bare
# weekday or weekend, a part of the day, working days and holidays; in English their
# plurals ("Fridays")
SCOPE_ZH = (
    f"(?:每个?)?(?:{_ZH_WEEKDAY_NAME}|周末)"
    "|每天|每晚|晚上|夜里|半夜|深夜|凌晨|工作日|节假日|假期|下班(?:以?后)"
)
SCOPE_EN = (
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)days|weekends|weekdays|holidays|nights"
    r"|evenings|at night|after hours|after work"
)
# what says a bare weekday is each week's: 周末都要值班, 周五一律不发版, 周末我们不安排
_HABITUAL_ZH = "(?:都|一律|一概|从来|通常|一般|总是|(?:我们|咱们)?(?:从?不|别))"
_ZH_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
# what follows a weekday that names the day, though it is no stopword ("the Monday after")
_AFTER_A_DAY_EN = frozenset(
    ("after", "before", "until", "till", "morning", "afternoon", "evening", "night", "noon")
)
_NUMBER_EN = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "ten": 10,
    "a couple of": 2,
    "a few": 3,
}


def number(text: str) -> int | None:
    """An Arabic, English or Chinese number up to 99 (``十二``, ``two``, ``3``)."""
    text = text.strip().lower()
    if text.isdigit():
        return int(text)
    if text in _NUMBER_EN:
        return _NUMBER_EN[text]
    if text and all(ch in _ZH_DIGITS or ch == "十" for ch in text):
        if "十" not in text:
            return _ZH_DIGITS[text] if len(text) == 1 else None
        tens, _, ones = text.partition("十")
        return (_ZH_DIGITS.get(tens, 1) if tens else 1) * 10 + (
            _ZH_DIGITS.get(ones, 0) if ones else 0
        )
    return None


def _next_weekday(today: date, weekday: int, week_offset: int | None) -> date:
    """``weekday`` in this week (0), next week (1), or its next occurrence (None)."""
    if week_offset is None:
        return today + timedelta(days=(weekday - today.weekday()) % 7)
    monday = today - timedelta(days=today.weekday())
    return monday + timedelta(days=7 * week_offset + weekday)


def _month_day(today: date, month: int, day: int) -> date | None:
    if not (1 <= month <= 12 and 1 <= day <= monthrange(today.year, month)[1]):
        return None
    found = date(today.year, month, day)
    return found if found >= today else date(today.year + 1, month, day)


def _end_of_month(today: date) -> date:
    return today.replace(day=monthrange(today.year, today.month)[1])


Resolver = Callable[[re.Match[str], date], "date | None"]


def _weekday_zh(found: re.Match[str], today: date) -> date:
    which = found.group(1)
    offset = 1 if which and which[0] == "下" else (0 if which else None)
    return _next_weekday(today, _ZH_WEEKDAY[found.group(2)], offset)


def _weekday_en(found: re.Match[str], today: date) -> date:
    weekday = _WEEKDAYS_EN.index(found.group(2).lower())
    day = _next_weekday(today, weekday, None)
    # "next Friday" said on a Thursday is not tomorrow
    is_next = (found.group(1) or "").lower() == "next"
    return day + timedelta(days=7) if is_next and day - today < timedelta(days=2) else day


def _in_en(found: re.Match[str], today: date) -> date | None:
    count = number(found.group(1))
    days = {"day": 1, "week": 7, "month": 30}[found.group(2).lower()]
    return today + timedelta(days=count * days) if count else None


def _in_zh(found: re.Match[str], today: date) -> date | None:
    count = number(found.group(1))
    days = {"天": 1, "周": 7, "星期": 7, "个星期": 7, "个月": 30, "月": 30}[found.group(2)]
    return today + timedelta(days=count * days) if count else None


def _month_day_en(found: re.Match[str], today: date) -> date | None:
    month, day = found.group(1) or found.group(4), found.group(2) or found.group(3)
    return _month_day(today, _MONTHS_EN.index(month[:3].lower()) + 1, int(day))


def _day_of_month(found: re.Match[str], today: date) -> date | None:
    """ "friday the 11th", "the 11th", 11号: the next day of that number, today or later
    (this month's, else the next month that has it)."""
    day = number(next(group for group in found.groups() if group))
    if not day or day > 31:
        return None
    year, month = today.year, today.month
    if day < today.day:
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    while day > monthrange(year, month)[1]:  # the 31st: the next month that has one
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return date(year, month, day)


def _month_day_zh(found: re.Match[str], today: date) -> date | None:
    month, day = number(found.group(1)), number(found.group(2))
    return _month_day(today, month, day) if month and day else None


def _fixed(days: int) -> Resolver:
    return lambda _found, today: today + timedelta(days=days)


_MONTH_EN = rf"(?:{MONTH_NAME_EN})"
# a calendar date with its day's number ("June 22", "the 22nd of June", 6月22日, 六月二十二号)
_DATE_EN = (
    rf"(?:on )?(?:({_MONTH_EN}) (\d{{1,2}})(?:st|nd|rd|th)?|(\d{{1,2}})(?:st|nd|rd|th)?"
    rf" of ({_MONTH_EN}))\b"
)
_DATE_ZH = rf"((?<![0-9])(?:{ZH_NUMBER}))\s*月\s*((?<![0-9])(?:{ZH_NUMBER}))\s*[日号]"


@cache
def _date_first() -> re.Pattern[str]:
    return re.compile(rf"\s*(?:the )?(?:{_DATE_EN}|{_DATE_ZH})", re.IGNORECASE)


# A date said first with no word of intention that lies further ahead than this is one
# of the last two months, carried to next year ("6月10日我们上线了" said on June 15): no plan.
DATE_FIRST_REACH = timedelta(days=305)


def opens_with_date(text: str) -> bool:
    """``text`` starts with a calendar date ("6月22日周一给客户做一次演示", "June 22:
    client demo"): what it says happens that day, as a plan says it (the caller asks
    :func:`future_day` whether the day is still to come)."""
    return _date_first().match(text) is not None


@cache
def _expressions() -> tuple[tuple[re.Pattern[str], Resolver | None], ...]:
    weekday = "|".join(_WEEKDAYS_EN)
    short_weekday = r"(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?\.?"
    # what may follow "the 11th" when it is a day, not "the 11th floor"
    day_follower = "|".join(sorted(ENGLISH_STOPWORDS | _AFTER_A_DAY_EN))
    count = f"(?<![0-9])(?:[0-9]{{1,3}}|{ZH_NUMBER})"  # "100天之后"
    table: list[tuple[str, Resolver | None]] = [
        # the past names no plan
        (r"\b(?:yesterday|last (?:week|month|year|night)|ago)\b|昨天|前天|上周|上个?月|去年", None),
        # a date names the day exactly: "next Friday, September 12" is the 12th
        (r"\b" + _DATE_EN, _month_day_en),
        (_DATE_ZH, _month_day_zh),
        # a day of the month without one: "friday the 11th", "Fri 11th", "on the 11th"
        # ("the 11th floor" is none), 11号, 十一号, 11日 ("3号楼", "3日内" are none)
        (r"\b" + short_weekday + r",?\s+(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)\b", _day_of_month),
        (
            r"\bthe (\d{1,2})(?:st|nd|rd|th)\b(?=\s*$|\s*[^\w\s]|\s+(?:" + day_follower + r")\b)",
            _day_of_month,
        ),
        (
            r"(?<![\d月])(\d{1,2}|[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九])\s*号"
            r"(?![楼线机位房门床车桌馆院室厅库口仓球])|(?<![\d月])(\d{1,2})\s*日(?![内后以游])",
            _day_of_month,
        ),
        (r"\bthe day after tomorrow\b|大后天", _fixed(3)),
        (r"后天", _fixed(2)),
        (r"\btomorrow\b|明天|明早|明晚|明儿", _fixed(1)),
        (r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b|今天|今晚|今儿", _fixed(0)),
        (r"\b(next|this|on)?\s*(" + weekday + r")\b", _weekday_en),
        (r"(下个?|这|本)?(?:周|星期|礼拜)([一二三四五六日天])", _weekday_zh),
        (r"\b(?:this|over the|next) weekend\b|周末", lambda _f, t: _next_weekday(t, 5, None)),
        (r"\bnext week\b|下周|下星期|下礼拜|下个星期", _fixed(7)),
        (r"\bnext month\b|下个月|下月", _fixed(30)),
        (r"\bnext year\b|明年", _fixed(365)),
        (r"\b(?:at )?the end of (?:the|this) month\b|月底", lambda _f, t: _end_of_month(t)),
        (
            r"\bin (\d+|a|an|one|two|three|four|five|six|seven|ten|a couple of|a few)"
            r" (day|week|month)s?\b",
            _in_en,
        ),
        (r"(" + count + r")(天|个星期|星期|周|个月)(?:之?后|以后)", _in_zh),
    ]
    return tuple((re.compile(p, re.IGNORECASE), resolve) for p, resolve in table)


@cache
def _recurring() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A weekday used attributively, in English (the word after it captured: whether it
    is a noun decides) and in Chinese (see the module doc)."""
    weekday = "|".join(_WEEKDAYS_EN)
    english = (
        r"\b(?:every|each)\s+(?:" + weekday + r")\b"
        r"|\b(?:the|our|my|your|their|his|her|a|an)\s+(?:" + weekday + r")(?=\s+([a-z]+)\b)"
    )
    day = _ZH_WEEKDAY_NAME
    chinese = (
        f"每个?(?:{day}|周末)"
        f"|(?<![下这本个]){day}(?=的(?!时候|早上|上午|中午|下午|晚上|凌晨|[前后]|之[前后]))"
        f"|(?<![下这本个上])(?:{day}|周末)(?={_HABITUAL_ZH})"
    )
    return re.compile(english, re.IGNORECASE), re.compile(chinese)


def _without_recurring(text: str) -> str:
    """``text`` without the weekdays that name a recurring thing, not a day."""
    english, chinese = _recurring()

    def unless_a_day_follows(found: re.Match[str]) -> str:
        after = (found.group(1) or "").lower()
        names_a_day = after in ENGLISH_STOPWORDS or after in _AFTER_A_DAY_EN
        return found.group(0) if names_a_day else " "

    return chinese.sub(" ", english.sub(unless_a_day_follows, text))


def future_day(text: str, now: datetime) -> date | None:
    """The day ``text`` names, if it is today or later (see the module doc)."""
    today = now.date()
    text = _without_recurring(text)
    for pattern, resolve in _expressions():
        found = pattern.search(text)
        if found is None:
            continue
        if resolve is None:
            return None
        day = resolve(found, today)
        return day if day is not None and day >= today else None
    return None
