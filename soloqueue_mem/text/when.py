"""Time expressions in a query ("yesterday", "上周", "三天前", "on May 3") as a window.

:func:`parse_when` finds the first relative or absolute time expression of a query,
in Chinese or English, and turns it into a ``[start, end)`` window in ``now``'s time
zone (calendar days, Monday-first weeks, calendar months and years), with the span of
the query it came from so a search can leave those words out of its terms: turns
rarely contain the word "yesterday" from the question about them. A date written with
its day's number (8月5号, Aug 5, 2026-08-05) is ``dated``: its words are the parts of one
date, which recall weighs as one phrase (8 and 月 alone match every August date).

Conventions, where ordinary speech is ambiguous:

- "N days ago" / "N天前" is that calendar day; "N weeks ago" is the week around that
  date (three days either side); "N months/years ago" is that calendar month/year;
  "几天前" / "the other day" are the two to six days before today;
- "last week" / "上周" is the previous Monday-Sunday week; "上周一" its Monday;
  "last Monday" is the latest Monday before today, "on Monday" / "周一" the latest
  Monday up to today, "this Monday" / "这周一" this week's;
- a date without a year ("May 3", "5月3日", "三月五号") is its latest occurrence that
  is not more than ``FUTURE_GRACE`` ahead of ``now``: questions about a date are
  mostly about the past, but "the meeting on May 3" asked on April 20 means the next;
- "recently" / "最近" is the last seven days; "earlier today" / "今天早上" runs from
  midnight to ``now`` / to noon;
- the coming time: "tomorrow" / 明天, "the day after tomorrow" / 后天, 大后天, "next
  week" / 下周 / 下个星期 (next Monday-Sunday week), 下周五 (its Friday), "the week after
  next" / 下下周, "this weekend" / 这周末 (this week's Saturday and Sunday, from today
  on), "next weekend" / 下周末, "next month" / 下个月, "next year" / 明年; "coming up",
  "upcoming", "in the coming days/weeks/months", 接下来, 今后: ``UPCOMING_DAYS`` from
  today (what is planned, whatever its day);
- a question about what is planned (:func:`asks_ahead`: 安排, 计划, 打算, "planned",
  "schedule", "coming up", "do I have", "will", with no did/was/了/过) reads a name
  that fits the past and the coming time alike ahead (:data:`COMING`): a month's
  name without a year ("我四月有啥安排？", "what's planned in April?") is the coming
  April (this year's while it has not ended), a bare weekday (周五, "on/for Friday")
  the first one from today on, and 周末 / "the weekend" this week's from today on;
  any other question reads them as above (the latest; 周末 alone names no window).

A session named by its place ("our first session", "the last conversation", 第一次会话,
上次对话) is no calendar time: :func:`named_session` finds the words, and recall turns
them into that session's window from the store (``memory.named_session``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import cache

from soloqueue_mem.text.months import MONTH_NAME_EN
from soloqueue_mem.tuples import NamedTuple

FUTURE_GRACE = timedelta(days=31)
UPCOMING_DAYS = 366  # "coming up", 接下来: from today, a year of plans


class TimeWindow(NamedTuple):
    """``[start, end)`` in ``now``'s time zone; ``span`` is ``(begin, end)`` in the query."""

    start: datetime
    end: datetime
    span: tuple[int, int]
    vague: bool = False  # "recently", "最近": the last days, not a time asked about
    dated: bool = False  # a calendar date written with its day's number: 8月5号, Aug 5

    def expression(self, query: str) -> str:
        """The words of the time expression in ``query``."""
        begin, end = self.span
        return query[begin:end]

    def strip(self, query: str) -> str:
        """``query`` without the words of the time expression."""
        begin, end = self.span
        return query[:begin] + " " + query[end:]


Bounds = tuple[datetime, datetime]
Rule = Callable[[re.Match[str], datetime], Bounds | None]


def parse_when(query: str, now: datetime) -> TimeWindow | None:
    """The window of the first time expression in ``query`` (the longest one starting
    there), relative to ``now``; None when there is none. An expression naming a day
    that does not exist is passed over for the next one (2月30日 gives February)."""
    if not _hint().search(query):
        return None  # no rule can match: their ~70 patterns are not even compiled
    ahead = asks_ahead(query)
    found = [(m, rule) for pattern, rule in _rules() if (m := pattern.search(query))]
    for match, rule in sorted(found, key=lambda item: (item[0].start(), -item[0].end())):
        bounds = (COMING.get(rule, rule) if ahead else rule)(match, now)
        if bounds is not None:
            vague = _vague().fullmatch(match.group().strip().casefold()) is not None
            return TimeWindow(bounds[0], bounds[1], match.span(), vague, rule in DATED_RULES)
    return None


# --- calendar arithmetic ------------------------------------------------------------


def _day(now: datetime, offset: int = 0) -> datetime:
    return now.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=offset)


def calendar_day(moment: datetime) -> Bounds:
    """The calendar day ``moment`` falls in, in its own time zone."""
    return _days(moment, 0, 0)


def _days(now: datetime, first: int, last: int) -> Bounds:
    """From the start of day ``first`` to the end of day ``last`` (offsets from today)."""
    return _day(now, first), _day(now, last + 1)


def _week(now: datetime, offset: int) -> Bounds:
    monday = _day(now, -now.weekday() + 7 * offset)
    return monday, monday + timedelta(days=7)


def _month(now: datetime, offset: int) -> Bounds:
    index = now.year * 12 + now.month - 1 + offset
    start = _day(now).replace(year=index // 12, month=index % 12 + 1, day=1)
    following = index + 1
    return start, start.replace(year=following // 12, month=following % 12 + 1)


def _year(now: datetime, offset: int) -> Bounds:
    start = _day(now).replace(year=now.year + offset, month=1, day=1)
    return start, start.replace(year=start.year + 1)


def _weekday_in_week(now: datetime, weekday: int, week: int) -> Bounds:
    day = _week(now, week)[0] + timedelta(days=weekday)
    return day, day + timedelta(days=1)


def _latest_weekday(now: datetime, weekday: int, before_today: bool) -> Bounds:
    back = (now.weekday() - weekday) % 7 or (7 if before_today else 0)
    return _days(now, -back, -back)


def _next_weekday(now: datetime, weekday: int) -> Bounds:
    """The first ``weekday`` from today on (today when it is one)."""
    ahead = (weekday - now.weekday()) % 7
    return _days(now, ahead, ahead)


def _weekend(now: datetime, week: int) -> Bounds:
    """Saturday and Sunday of this (0) or next (1) week, from today on."""
    saturday = _week(now, week)[0] + timedelta(days=5)
    return max(saturday, _day(now)), saturday + timedelta(days=2)


def _coming_month(now: datetime, month: int) -> Bounds:
    """The month ``month`` that has not ended yet: this year's, else next year's."""
    start = _month(now, month - now.month)
    return start if start[1] > now else _month(now, month - now.month + 12)


def _date(now: datetime, year: int | None, month: int, day: int | None) -> Bounds | None:
    """A calendar day (or month when ``day`` is None); without a year, the latest one
    starting no later than ``FUTURE_GRACE`` after ``now``."""
    for candidate in (year,) if year else (now.year + 1, now.year, now.year - 1):
        try:
            start = _day(now).replace(year=candidate, month=month, day=day or 1)
        except ValueError:
            continue
        if year or start <= now + FUTURE_GRACE:
            if day is None:
                return _month(start, 0)
            return start, start + timedelta(days=1)
    return None


# --- numbers ------------------------------------------------------------------------

_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5}
_ZH_DIGITS |= {"六": 6, "七": 7, "八": 8, "九": 9}
_EN_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_EN_NUMBERS |= {"six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a couple of": 2}
_FEW = ("几", "a few", "few", "several")  # a range of days, not a number


def _number(text: str) -> int | None:
    """Digits, Chinese numerals below 100 (五, 十五, 二十三, 两), English words to ten."""
    text = text.lower()
    if text.isdigit():
        return int(text)
    if text in _EN_NUMBERS:
        return _EN_NUMBERS[text]
    if "十" not in text:
        return _ZH_DIGITS.get(text)
    tens, _, ones = text.partition("十")
    high = _ZH_DIGITS.get(tens) if tens else 1
    low = _ZH_DIGITS.get(ones) if ones else 0
    return None if high is None or low is None else high * 10 + low


def _ago(now: datetime, count: str, unit: str) -> Bounds | None:
    """ "``count`` ``unit``s ago" (see the module docstring for the conventions)."""
    if count.lower() in _FEW:
        return _days(now, -6, -2) if unit == "d" else None
    n = _number(count)
    if n is None:
        return None
    if unit == "d":
        return _days(now, -n, -n)
    if unit == "w":
        return _days(now, -7 * n - 3, -7 * n + 3)
    return _month(now, -n) if unit == "m" else _year(now, -n)


_UNITS = {"天": "d", "日": "d", "周": "w", "星期": "w", "礼拜": "w", "月": "m", "年": "y"}
_UNITS |= {"day": "d", "week": "w", "month": "m", "year": "y"}
_WEEKDAYS_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_WEEKDAYS_ZH |= {str(n): n - 1 for n in range(1, 8)}
_WEEKDAYS_EN = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_MONTHS_EN = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]


# --- the rules ------------------------------------------------------------------------

# a number as Chinese writes a month, a day or a count: in digits or in characters, never
# both at once ("下周二6月16号" is 6月16号, not a month 二6)
ZH_NUMBER = "[0-9]{1,2}|[零〇一二两三四五六七八九十]{1,3}"
_WEEK_ZH = "(?:周|星期|礼拜)"
_WEEKDAY_ZH = f"{_WEEK_ZH}([一二三四五六日天1-7])"
_EN_COUNT = (
    r"\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few|few|several"
)
_MONTH_EN = rf"({MONTH_NAME_EN})\b\.?"
_WEEKDAY_EN = f"({'|'.join(_WEEKDAYS_EN)})"
_YEAR = r"(?:,? (\d{4})\b)?"
# A weekday glued to a calendar date ("周二6月16号", "on Monday the 12th of October",
# "Monday, October 12") is read as the date: the date names the day, the weekday only
# says which one it is (and a relative weekday may name another week).
_ZH_DATE_AHEAD = rf"\s*(?:\d{{4}}年)?(?:{ZH_NUMBER})月(?:{ZH_NUMBER})[日号號]"
_NO_DATE_AFTER_ZH = f"(?!{_ZH_DATE_AHEAD})"
_NO_DAY_AND_DATE_AFTER_ZH = f"(?![一二三四五六日天1-7]{_ZH_DATE_AHEAD})"  # 下周 of 下周二6月16号
_NO_DATE_AFTER_EN = (
    rf"(?!,? (?:the )?\d{{1,2}}(?:st|nd|rd|th)? (?:of )?{_MONTH_EN}|,? {_MONTH_EN} \d)"
)


def names_a_day_or_month(word: str) -> bool:
    """``word`` is the name of a weekday or a month ("friday", "fridays", "周五",
    "march", "三月"): a time expression's own word, which this reader turns into a
    window (query translation leaves such words to it)."""
    return _day_or_month_name().fullmatch(word.casefold()) is not None


@cache
def _day_or_month_name() -> re.Pattern[str]:
    return re.compile(f"{_MONTH_EN}|{_WEEKDAY_EN}s?|{_WEEKDAY_ZH}|(?:{ZH_NUMBER})月份?")


@cache
def _vague() -> re.Pattern[str]:
    return re.compile(r"最近|近来|这几天|这两天|recently|lately|these days")


def _fixed(bounds: Callable[[datetime], Bounds]) -> Rule:
    return lambda match, now: bounds(now)


def _hours(first: int, last: int) -> Rule:
    """From ``first`` o'clock today to ``last`` o'clock (both may be negative or > 24)."""
    return _fixed(
        lambda now: (_day(now) + timedelta(hours=first), _day(now) + timedelta(hours=last))
    )


def _month_en(name: str) -> int:
    return _MONTHS_EN.index(name[:3].lower()) + 1


def _year_of(text: str | None) -> int | None:
    return int(text) if text else None


def _zh_date(match: re.Match[str], now: datetime) -> Bounds | None:
    month, day = _number(match[2]), _number(match[3])
    if month is None or day is None or not 1 <= month <= 12:
        return None
    return _date(now, _year_of(match[1]), month, day)


def _zh_month(match: re.Match[str], now: datetime) -> Bounds | None:
    month = _number(match[2])
    if month is None or not 1 <= month <= 12:
        return None
    return _date(now, _year_of(match[1]), month, None)


def _iso_date(match: re.Match[str], now: datetime) -> Bounds | None:
    month = int(match[2])
    return _date(now, int(match[1]), month, int(match[3])) if 1 <= month <= 12 else None


def _en_date(match: re.Match[str], now: datetime) -> Bounds | None:
    """ "Aug 5", "August 5th, 2026"."""
    return _date(now, _year_of(match[3]), _month_en(match[1]), int(match[2]))


def _en_date_day_first(match: re.Match[str], now: datetime) -> Bounds | None:
    """ "5 August", "the 5th of Aug"."""
    return _date(now, _year_of(match[3]), _month_en(match[2]), int(match[1]))


def _zh_weekday(week: int) -> Rule:
    """A weekday of this (0), last (-1) or next (1) week."""
    return lambda match, now: _weekday_in_week(now, _WEEKDAYS_ZH[match[1]], week)


def _zh_bare_weekday(match: re.Match[str], now: datetime) -> Bounds:
    """周五: the latest one up to today."""
    return _latest_weekday(now, _WEEKDAYS_ZH[match[1]], before_today=False)


def _zh_coming_weekday(match: re.Match[str], now: datetime) -> Bounds:
    """周五 in a question about what is planned: the first one from today on."""
    return _next_weekday(now, _WEEKDAYS_ZH[match[1]])


def _en_weekday(match: re.Match[str], now: datetime) -> Bounds:
    which, name = match[1].lower(), match[2].lower()
    weekday = _WEEKDAYS_EN.index(name)
    if which == "this":
        return _weekday_in_week(now, weekday, 0)
    return _latest_weekday(now, weekday, before_today=which == "last")


def _en_coming_weekday(match: re.Match[str], now: datetime) -> Bounds:
    """ "on/for Friday" in a question about what is planned: the first one from today
    on ("last Friday" and "this Friday" read as always)."""
    if match[1].lower() in ("on", "for"):
        return _next_weekday(now, _WEEKDAYS_EN.index(match[2].lower()))
    return _en_weekday(match, now)


def _zh_coming_month(match: re.Match[str], now: datetime) -> Bounds | None:
    """四月 in a question about what is planned: the coming April (a year written
    with it reads as always)."""
    month = _number(match[2])
    if match[1] or month is None or not 1 <= month <= 12:
        return _zh_month(match, now)
    return _coming_month(now, month)


def _en_month(match: re.Match[str], now: datetime) -> Bounds | None:
    """ "in April": the latest one not more than ``FUTURE_GRACE`` ahead."""
    return _date(now, _year_of(match[2]), _month_en(match[1]), None)


def _en_coming_month(match: re.Match[str], now: datetime) -> Bounds | None:
    """ "in April" in a question about what is planned: the coming April."""
    if match[2]:
        return _en_month(match, now)
    return _coming_month(now, _month_en(match[1]))


def _no_window(match: re.Match[str], now: datetime) -> Bounds | None:
    """周末 / "the weekend" outside a question about what is planned: past or coming,
    no window is named."""
    return None


RULES: list[tuple[str, Rule]] = [
    # --- Chinese
    (rf"(?:(\d{{4}})年)?({ZH_NUMBER})月({ZH_NUMBER})[日号號]", _zh_date),
    (rf"(?:(\d{{4}})年)?({ZH_NUMBER})月份?", _zh_month),
    (r"(\d{4})年", lambda m, now: _year(now, int(m[1]) - now.year)),
    (r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})", _iso_date),
    (
        rf"({ZH_NUMBER}|几)个?(天|日|周|星期|礼拜|月|年)(?:前|之前|以前)",
        lambda m, now: _ago(now, m[1], _UNITS[m[2]]),
    ),
    ("前几天|前两天", _fixed(lambda now: _days(now, -6, -2))),
    (f"上个?{_WEEKDAY_ZH}{_NO_DATE_AFTER_ZH}", _zh_weekday(-1)),
    (f"(?:这|本)个?{_WEEKDAY_ZH}{_NO_DATE_AFTER_ZH}", _zh_weekday(0)),
    (f"下个?{_WEEKDAY_ZH}{_NO_DATE_AFTER_ZH}", _zh_weekday(1)),
    (
        f"(?<![一二两三四五六七八九十几每0-9上下这本个]){_WEEKDAY_ZH}{_NO_DATE_AFTER_ZH}",
        _zh_bare_weekday,
    ),
    (f"上上个?{_WEEK_ZH}{_NO_DAY_AND_DATE_AFTER_ZH}", _fixed(lambda now: _week(now, -2))),
    (f"上个?{_WEEK_ZH}{_NO_DAY_AND_DATE_AFTER_ZH}", _fixed(lambda now: _week(now, -1))),
    (f"(?:这|本)个?{_WEEK_ZH}{_NO_DAY_AND_DATE_AFTER_ZH}", _fixed(lambda now: _week(now, 0))),
    (f"下下个?{_WEEK_ZH}{_NO_DAY_AND_DATE_AFTER_ZH}", _fixed(lambda now: _week(now, 2))),
    (f"下个?{_WEEK_ZH}{_NO_DAY_AND_DATE_AFTER_ZH}", _fixed(lambda now: _week(now, 1))),
    ("(?:这|本)个?周末", _fixed(lambda now: _weekend(now, 0))),
    ("下个?周末", _fixed(lambda now: _weekend(now, 1))),
    ("(?<![上下这本个每])周末", _no_window),
    ("上个?月", _fixed(lambda now: _month(now, -1))),
    ("(?:这|本)个?月", _fixed(lambda now: _month(now, 0))),
    ("下个?月", _fixed(lambda now: _month(now, 1))),
    ("明年", _fixed(lambda now: _year(now, 1))),
    ("大后天", _fixed(lambda now: _days(now, 3, 3))),
    ("(?<![之以然])后天", _fixed(lambda now: _days(now, 2, 2))),
    ("明天|明日|明早|明晚|明儿", _fixed(lambda now: _days(now, 1, 1))),
    ("接下来|今后", _fixed(lambda now: _days(now, 0, UPCOMING_DAYS - 1))),
    ("去年", _fixed(lambda now: _year(now, -1))),
    ("前年", _fixed(lambda now: _year(now, -2))),
    ("今年", _fixed(lambda now: _year(now, 0))),
    ("大前天", _fixed(lambda now: _days(now, -3, -3))),
    ("前天", _fixed(lambda now: _days(now, -2, -2))),
    ("昨晚|昨天晚上|昨天夜里", _hours(-6, 6)),
    ("昨天|昨日", _fixed(lambda now: _days(now, -1, -1))),
    ("今天早上|今天上午|今天早晨|今早|今晨", _hours(0, 12)),
    ("今天|今日", _fixed(lambda now: _days(now, 0, 0))),
    ("最近|近来|这几天|这两天", _fixed(lambda now: (now - timedelta(days=7), now))),
    # --- English
    (
        rf"\b({_EN_COUNT}) (day|week|month|year)s? ago\b",
        lambda m, now: _ago(now, m[1], _UNITS[m[2].lower()]),
    ),
    (r"\bthe other day\b", _fixed(lambda now: _days(now, -6, -2))),
    (r"\bthe day before yesterday\b", _fixed(lambda now: _days(now, -2, -2))),
    (r"\blast night\b", _hours(-6, 6)),
    (r"\byesterday\b", _fixed(lambda now: _days(now, -1, -1))),
    (r"\bearlier today\b", _fixed(lambda now: (_day(now), now))),
    (r"\bthis morning\b", _hours(0, 12)),
    (r"\btoday\b", _fixed(lambda now: _days(now, 0, 0))),
    (rf"\b(last|this|on|for) {_WEEKDAY_EN}\b{_NO_DATE_AFTER_EN}", _en_weekday),
    (r"\bthe day after tomorrow\b", _fixed(lambda now: _days(now, 2, 2))),
    (r"\btomorrow\b", _fixed(lambda now: _days(now, 1, 1))),
    (r"\bthe week after next\b", _fixed(lambda now: _week(now, 2))),
    (r"\bnext week\b", _fixed(lambda now: _week(now, 1))),
    (r"\bthis weekend\b", _fixed(lambda now: _weekend(now, 0))),
    (r"\bnext weekend\b", _fixed(lambda now: _weekend(now, 1))),
    (r"\b(?:on|over|for) the weekend\b", _no_window),
    (
        r"\b(?:upcoming|coming up|in the coming (?:days|weeks|months))\b",
        _fixed(lambda now: _days(now, 0, UPCOMING_DAYS - 1)),
    ),
    (r"\bnext month\b", _fixed(lambda now: _month(now, 1))),
    (r"\bnext year\b", _fixed(lambda now: _year(now, 1))),
    (r"\bthe week before last\b", _fixed(lambda now: _week(now, -2))),
    (r"\blast week\b", _fixed(lambda now: _week(now, -1))),
    (r"\bthis week\b", _fixed(lambda now: _week(now, 0))),
    (r"\blast month\b", _fixed(lambda now: _month(now, -1))),
    (r"\bthis month\b", _fixed(lambda now: _month(now, 0))),
    (r"\blast year\b", _fixed(lambda now: _year(now, -1))),
    (r"\bthis year\b", _fixed(lambda now: _year(now, 0))),
    (r"\b(?:recently|lately|these days)\b", _fixed(lambda now: (now - timedelta(days=7), now))),
    (rf"\b{_MONTH_EN} (\d{{1,2}})(?:st|nd|rd|th)?\b{_YEAR}", _en_date),
    (rf"\b(\d{{1,2}})(?:st|nd|rd|th)? (?:of )?{_MONTH_EN}{_YEAR}", _en_date_day_first),
    (rf"\bin {_MONTH_EN}{_YEAR}", _en_month),
    (r"\bin (\d{4})\b", lambda m, now: _year(now, int(m[1]) - now.year)),
]

# The rules whose words name the past or the coming time alike ("四月", "on Friday",
# 周末), and how a question about what is planned reads them (:func:`asks_ahead`).
COMING: dict[Rule, Rule] = {
    _zh_month: _zh_coming_month,
    _en_month: _en_coming_month,
    _zh_bare_weekday: _zh_coming_weekday,
    _en_weekday: _en_coming_weekday,
    _no_window: lambda match, now: _weekend(now, 0),
}

# The rules reading a calendar date with its day's number: the expression's words (8, 月,
# 5, 号; "aug", "5") are parts of one date, not words of their own (``TimeWindow.dated``).
DATED_RULES = (_zh_date, _iso_date, _en_date, _en_date_day_first)


# Every rule's pattern holds one of these (a digit, a Han character of a date word, an
# English date word or month abbreviation): a query without any has no time expression,
# and compiling the rules would cost a one-shot ``recall`` process 10-30 ms.
HINT = (
    r"\d|[年月天日周期拜晚今近明接]|day|ago|night|morning|week|month|year|recent|lately|tomorrow"
    r"|upcoming|coming up"
    r"|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec"
)


# A question about what is planned (安排, 计划, "planned", "coming up", "do I have"),
# not about what was done: no past marker (did, was, 了, 过) with it.
_PLAN_WORDS_ZH = "安排|计划|打算|日程|行程|待办|要干|要做|要去|有啥事|有什么事"
_PLAN_WORDS_EN = (
    r"plan|plans|planned|planning|schedule|scheduled|agenda|calendar|upcoming|coming up"
    r"|do i have|have i got|lined up|will|going to|gonna"
)
_PAST_MARKERS = r"\b(?:did|was|were|had|happened)\b|了|过"


def asks_ahead(query: str) -> bool:
    """Whether ``query`` asks what is planned ("我四月有啥安排？", "anything planned for
    Friday?"): its month's or weekday's name, or 周末 / "the weekend", then names the
    coming one (:data:`COMING`), not the latest."""
    plans, past, _ = _ahead()
    return plans.search(query) is not None and past.search(query) is None


def asks_for_plans(word: str) -> bool:
    """``word`` (a query term) asks what a window holds (安排, plan, schedule,
    anything): with a time window and stopwords only, the window is the whole
    question."""
    return _ahead()[2].fullmatch(word.casefold()) is not None


@cache
def _ahead() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    plans = re.compile(rf"{_PLAN_WORDS_ZH}|\b(?:{_PLAN_WORDS_EN})\b", re.IGNORECASE)
    words = rf"{_PLAN_WORDS_ZH}|{_PLAN_WORDS_EN}|schedul\w*|plann\w*|anything|any|something"
    return plans, re.compile(_PAST_MARKERS, re.IGNORECASE), re.compile(words)


@cache
def _hint() -> re.Pattern[str]:
    return re.compile(HINT, re.IGNORECASE)


@cache
def _rules() -> list[tuple[re.Pattern[str], Rule]]:
    return [(re.compile(pattern, re.IGNORECASE), rule) for pattern, rule in RULES]


class NamedSession(NamedTuple):
    """A session a query names by its place: the first one, or the last one before
    the current; ``span`` is the words' ``(begin, end)`` in the query. ``day``: the
    query names the calendar day that session started ("the first day", 第一天,
    上次聊天那天), not the session alone."""

    first: bool
    span: tuple[int, int]
    day: bool = False


# A day named by its place. English: "the/our (very) first day" and "day one" not
# followed by "of/at/in/on/back/after/before" (the first day of the month, of school,
# at the new job are some other thing's); "the last day" only before "we/you/I" (the
# last day we talked; "the last day of the sprint" is not). Chinese: 第一天, 头一天,
# 最开始那天 at a clause's start or after 我们/咱们/在/那 (上班的第一天, 开学第一天 are
# another thing's) and not before 上班/上学/入职/开学/报到 (我第一天上班); a session's words
# followed by 那天 (我们第一次聊天那天, 上次聊天那天).
_NOT_OURS_EN = r"(?! (?:of|at|in|on|back|after|before)\b)"
_DAY_EN = (
    rf"\b(?:the|our) (?:very )?(?P<first_day>first|earliest) day\b{_NOT_OURS_EN}"
    rf"|\b(?P<day_one>day one)\b{_NOT_OURS_EN}"
    r"|\bthe (?:very )?(?P<last_day>last day)(?= (?:we|you|I)\b)"
)
_DAY_ZH = (
    r"(?:^|(?<=[\s，。？！,.?!：:])|(?<=我们|咱们)|(?<=[在那]))"
    r"(?P<first_day_zh>第一天|头一天|最开始(?:的?那)?天|最早(?:的?那)天)"
    r"(?!上班|上学|入职|开学|报到)"
)


@cache
def _named_session() -> re.Pattern[str]:
    talk_en = r"(?:session|conversation|chat)s?\b"
    talk_zh = r"(?:会话|对话|聊天|交流|聊(?=的?那天))"  # 第一次聊那天: the verb alone names the day
    return re.compile(
        rf"{_DAY_EN}|{_DAY_ZH}"
        rf"|\b(?P<first>first|earliest) {talk_en}|\b(?:last|previous|prior) {talk_en}"
        rf"|(?P<first_zh>第一次|第一个|最早的?|头一次)的?{talk_zh}(?P<first_day_of>的?那天)?"
        rf"|(?:上一?次|上一个|前一次)的?{talk_zh}(?P<last_day_of>的?那天)?",
        re.IGNORECASE,
    )


def named_session(query: str) -> NamedSession | None:
    """The session ``query`` names by its place ("what did we do in our first
    session?", "上次对话说到哪了"), or the day it started ("the first day", 第一天),
    or None."""
    found = _named_session().search(query)
    if found is None:
        return None
    first = ("first", "first_zh", "first_day", "day_one", "first_day_zh")
    day = ("first_day", "day_one", "first_day_zh", "first_day_of", "last_day", "last_day_of")
    named = found.groupdict()
    return NamedSession(
        any(named[name] for name in first), found.span(), any(named[name] for name in day)
    )
