"""Time expressions in queries, zh and en, against a pinned ``now``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from soloqueue_mem.text.when import named_session, parse_when

NOW = datetime(2025, 6, 11, 15, 30, tzinfo=UTC)  # a Wednesday


def day(month: int, dom: int, year: int = 2025) -> datetime:
    return datetime(year, month, dom, tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "start", "end", "matched"),
    [
        # days
        ("what did I do yesterday?", day(6, 10), day(6, 11), "yesterday"),
        ("我昨天说了什么", day(6, 10), day(6, 11), "昨天"),
        ("前天的会议", day(6, 9), day(6, 10), "前天"),
        ("大前天", day(6, 8), day(6, 9), "大前天"),
        ("the day before yesterday", day(6, 9), day(6, 10), "the day before yesterday"),
        ("三天前我们聊了什么", day(6, 8), day(6, 9), "三天前"),
        ("3天前", day(6, 8), day(6, 9), "3天前"),
        ("十五天前", day(5, 27), day(5, 28), "十五天前"),
        ("二十三天之前", day(5, 19), day(5, 20), "二十三天之前"),
        ("two days ago", day(6, 9), day(6, 10), "two days ago"),
        ("10 days ago", day(6, 1), day(6, 2), "10 days ago"),
        ("前几天", day(6, 5), day(6, 10), "前几天"),
        ("a few days ago", day(6, 5), day(6, 10), "a few days ago"),
        # parts of today and yesterday
        ("earlier today", day(6, 11), NOW, "earlier today"),
        ("今天早上我提到的", day(6, 11), day(6, 11) + timedelta(hours=12), "今天早上"),
        ("this morning", day(6, 11), day(6, 11) + timedelta(hours=12), "this morning"),
        ("今天", day(6, 11), day(6, 12), "今天"),
        ("昨晚", day(6, 10) + timedelta(hours=18), day(6, 11) + timedelta(hours=6), "昨晚"),
        # weeks
        ("上周我们讨论的方案", day(6, 2), day(6, 9), "上周"),
        ("上个星期", day(6, 2), day(6, 9), "上个星期"),
        ("上礼拜", day(6, 2), day(6, 9), "上礼拜"),
        ("last week", day(6, 2), day(6, 9), "last week"),
        ("本周", day(6, 9), day(6, 16), "本周"),
        ("这周的计划", day(6, 9), day(6, 16), "这周"),
        ("this week", day(6, 9), day(6, 16), "this week"),
        ("上上周", day(5, 26), day(6, 2), "上上周"),
        ("the week before last", day(5, 26), day(6, 2), "the week before last"),
        ("一周前", day(6, 1), day(6, 8), "一周前"),
        ("两个星期前", day(5, 25), day(6, 1), "两个星期前"),
        ("a week ago", day(6, 1), day(6, 8), "a week ago"),
        # weekdays
        ("上周一的会议", day(6, 2), day(6, 3), "上周一"),
        ("上星期五", day(6, 6), day(6, 7), "上星期五"),
        ("上周日", day(6, 8), day(6, 9), "上周日"),
        ("这周一", day(6, 9), day(6, 10), "这周一"),
        ("星期三", day(6, 11), day(6, 12), "星期三"),  # today is one
        ("周五", day(6, 6), day(6, 7), "周五"),  # the latest, last week's
        ("last Monday", day(6, 9), day(6, 10), "last Monday"),
        ("last Wednesday", day(6, 4), day(6, 5), "last Wednesday"),  # before today
        ("on Wednesday", day(6, 11), day(6, 12), "on Wednesday"),
        ("this Friday", day(6, 13), day(6, 14), "this Friday"),
        # months and years
        ("上个月", day(5, 1), day(6, 1), "上个月"),
        ("last month", day(5, 1), day(6, 1), "last month"),
        ("这个月", day(6, 1), day(7, 1), "这个月"),
        ("三个月前", day(3, 1), day(4, 1), "三个月前"),
        ("去年", day(1, 1, 2024), day(1, 1), "去年"),
        ("last year", day(1, 1, 2024), day(1, 1), "last year"),
        ("前年", day(1, 1, 2023), day(1, 1, 2024), "前年"),
        ("2 years ago", day(1, 1, 2023), day(1, 1, 2024), "2 years ago"),
        # absolute dates
        ("on May 3", day(5, 3), day(5, 4), "May 3"),
        ("May 3rd, 2023", day(5, 3, 2023), day(5, 4, 2023), "May 3rd, 2023"),
        ("the 3rd of May", day(5, 3), day(5, 4), "3rd of May"),
        ("5月3日", day(5, 3), day(5, 4), "5月3日"),
        ("在5月6号我读了一本书", day(5, 6), day(5, 7), "5月6号"),
        ("三月五号", day(3, 5), day(3, 6), "三月五号"),
        ("十二月二十五日", day(12, 25, 2024), day(12, 26, 2024), "十二月二十五日"),
        ("2023年5月3日", day(5, 3, 2023), day(5, 4, 2023), "2023年5月3日"),
        ("2023-05-03", day(5, 3, 2023), day(5, 4, 2023), "2023-05-03"),
        ("July 1", day(7, 1), day(7, 2), "July 1"),  # within a month ahead: the next one
        ("August 1", day(8, 1, 2024), day(8, 2, 2024), "August 1"),  # further: last year's
        ("in March", day(3, 1), day(4, 1), "in March"),
        ("5月份", day(5, 1), day(6, 1), "5月份"),
        ("2023年", day(1, 1, 2023), day(1, 1, 2024), "2023年"),
        # the coming time
        ("明天要干嘛？", day(6, 12), day(6, 13), "明天"),
        ("tomorrow", day(6, 12), day(6, 13), "tomorrow"),
        ("后天", day(6, 13), day(6, 14), "后天"),
        ("大后天", day(6, 14), day(6, 15), "大后天"),
        ("the day after tomorrow", day(6, 13), day(6, 14), "the day after tomorrow"),
        ("下周有什么安排？", day(6, 16), day(6, 23), "下周"),
        ("下个星期", day(6, 16), day(6, 23), "下个星期"),
        ("what do I have next week?", day(6, 16), day(6, 23), "next week"),
        ("下下周", day(6, 23), day(6, 30), "下下周"),
        ("the week after next", day(6, 23), day(6, 30), "the week after next"),
        ("下周五开会吗", day(6, 20), day(6, 21), "下周五"),  # not last Friday
        ("这周末要加班吗", day(6, 14), day(6, 16), "这周末"),
        ("下周末", day(6, 21), day(6, 23), "下周末"),
        ("this weekend", day(6, 14), day(6, 16), "this weekend"),
        ("下个月有什么安排？", day(7, 1), day(8, 1), "下个月"),
        ("next month", day(7, 1), day(8, 1), "next month"),
        ("明年", day(1, 1, 2026), day(1, 1, 2027), "明年"),
        ("next year", day(1, 1, 2026), day(1, 1, 2027), "next year"),
        ("recently", NOW - timedelta(days=7), NOW, "recently"),
        ("我最近在读什么书", NOW - timedelta(days=7), NOW, "最近"),
    ],
)
def test_expressions(query, start, end, matched):
    window = parse_when(query, NOW)
    assert window is not None
    assert (window.start, window.end) == (start, end)
    assert query[slice(*window.span)] == matched


@pytest.mark.parametrize(
    "query",
    [
        "what is the billing runbook",
        "数据库连接超时",
        "一周一次的例会",  # once a week: not a weekday
        "marketing in marbles",  # "mar" only as a whole word
        "I may 3d-print it",
        "",
    ],
)
def test_no_time_expression(query):
    assert parse_when(query, NOW) is None


def test_the_earliest_and_longest_expression_wins():
    window = parse_when("上周一和昨天", NOW)
    assert window is not None and window.span == (0, 3)


@pytest.mark.parametrize(
    ("query", "date", "matched"),
    [
        ("下周二6月24号 Kiki 试播", day(6, 24), "6月24号"),  # not next week's Tuesday (17th)
        ("周一6月2号我们做了啥", day(6, 2), "6月2号"),
        ("What did we set up on Monday the 2nd of June?", day(6, 2), "2nd of June"),
        ("on Friday, May 30", day(5, 30), "May 30"),
        ("last Friday, 30 May", day(5, 30), "30 May"),
    ],
)
def test_a_weekday_glued_to_a_date_is_read_as_the_date(query, date, matched):
    """The date names the day; the weekday before it only says which one it is (or, as
    下周二, reads another week): the window is the date's, dated."""
    window = parse_when(query, NOW)
    assert window is not None and window.dated
    assert (window.start, window.end) == (date, date + timedelta(days=1))
    assert query[slice(*window.span)] == matched


def test_a_weekday_without_a_date_after_it_is_still_a_weekday():
    for query in ("下周二开会", "on Friday at 3pm", "on Monday the 2nd", "下周一起吃饭"):
        window = parse_when(query, NOW)
        assert window is not None and not window.dated, query


def test_a_day_that_does_not_exist_falls_back_to_its_month():
    window = parse_when("2月30日", NOW)
    assert window is not None and (window.start, window.end) == (day(2, 1), day(3, 1))


def test_days_follow_the_time_zone_of_now():
    tz = timezone(timedelta(hours=8))
    now = datetime(2025, 6, 11, 1, 0, tzinfo=tz)
    window = parse_when("昨天", now)
    assert window is not None
    assert window.start == datetime(2025, 6, 10, tzinfo=tz)
    assert window.start.utcoffset() == timedelta(hours=8)


def test_strip_removes_the_expression_from_the_query():
    query = "上周我们讨论的方案"
    window = parse_when(query, NOW)
    assert window is not None and window.strip(query) == " 我们讨论的方案"


def test_month_arithmetic_crosses_the_year():
    now = datetime(2025, 1, 15, tzinfo=UTC)
    window = parse_when("last month", now)
    assert window is not None and (window.start, window.end) == (day(12, 1, 2024), day(1, 1))
    window = parse_when("this month", datetime(2025, 12, 3, tzinfo=UTC))
    assert window is not None and window.end == day(1, 1, 2026)


def test_recently_is_vague_and_a_named_time_is_not():
    now = datetime(2026, 11, 26, 15, tzinfo=UTC)
    assert parse_when("北京的公司最近在研究什么", now).vague
    assert parse_when("what did I read recently", now).vague
    assert not parse_when("上周我们讨论了什么", now).vague
    assert not parse_when("what did we do yesterday", now).vague


@pytest.mark.parametrize(
    ("query", "first", "day", "words"),
    [
        ("我们第一次会话都干了些什么？", True, False, "第一次会话"),
        ("你还记得我们第一次对话的时候聊了什么吗", True, False, "第一次对话"),
        ("What did we do in our first session?", True, False, "first session"),
        ("上次对话说到哪了", False, False, "上次对话"),
        ("recap the previous conversation", False, False, "previous conversation"),
        ("what did we cover last session", False, False, "last session"),
        ("上次那个 bug 怎么修的", None, False, ""),  # 上次 alone: the last time something happened
        ("the first time the deploy failed", None, False, ""),
        # a day named by its place: the calendar day that session started
        ("What did we do on the first day we worked together?", True, True, "the first day"),
        ("What did we work on the very first day?", True, True, "the very first day"),
        ("what have we fixed since day one", True, True, "day one"),
        ("what did we do the last day we talked", False, True, "the last day"),
        ("我们第一天做了什么？", True, True, "第一天"),
        ("最开始那天我们聊了啥", True, True, "最开始那天"),
        ("上次聊天那天说了什么", False, True, "上次聊天那天"),
        ("我们第一次聊那天都弄了些什么？", True, True, "第一次聊那天"),
        ("我们第一次聊的那天都弄了些啥？", True, True, "第一次聊的那天"),
        ("我们第一次聊到预算是哪天", None, False, ""),  # 聊 alone names no session
        # another thing's first day, not ours
        ("what is due on the first day of the month", None, True, ""),
        ("my first day at the new job", None, True, ""),
        ("day one of the conference", None, True, ""),
        ("the last day of the sprint", None, True, ""),
        ("我第一天上班就迟到了", None, True, ""),
        ("开学第一天要带什么", None, True, ""),
        ("上班的第一天", None, True, ""),
    ],
)
def test_a_session_or_its_day_named_by_its_place(query, first, day, words):
    named = named_session(query)
    if first is None:
        assert named is None
    else:
        assert named is not None and named.first is first and named.day is day
        assert query[slice(*named.span)] == words
    assert parse_when(query, NOW) is None  # no calendar time


@pytest.mark.parametrize(
    ("query", "dated"),
    [
        ("8月5号那天我们主要弄了什么？", True),
        ("2025年三月五日", True),
        ("what did we ship on Aug 5?", True),
        ("the 5th of August, 2024", True),
        ("2025-06-01 的日志", True),
        ("周五可以上线吗？", False),
        ("上周五开会说了什么", False),
        ("8月的计划", False),
        ("what did we do in March", False),
        ("三天前我们聊了什么", False),
    ],
)
def test_a_date_with_its_days_number_is_dated(query, dated):
    """Its words are parts of one date; a weekday's or a month's name is a word."""
    window = parse_when(query, NOW)
    assert window is not None and window.dated is dated


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        # a question about what is planned reads a month's or weekday's name ahead
        ("我四月有啥安排？", day(4, 1, 2026), day(5, 1, 2026)),
        ("What's planned in March?", day(3, 1, 2026), day(4, 1, 2026)),
        ("6月份有什么计划", day(6, 1), day(7, 1)),  # this month has not ended
        ("周一有什么安排", day(6, 16), day(6, 17)),
        ("周三有什么安排", day(6, 11), day(6, 12)),  # today is one
        ("anything planned for Friday?", day(6, 13), day(6, 14)),
        ("周末有什么安排", day(6, 14), day(6, 16)),
        # and what was done, behind
        ("我四月做了什么？", day(4, 1), day(5, 1)),
        ("What did we plan in March?", day(3, 1), day(4, 1)),  # "did": the past
        ("周一我们聊了什么", day(6, 9), day(6, 10)),
        ("2024年4月有什么安排", day(4, 1, 2024), day(5, 1, 2024)),  # a year: as written
    ],
)
def test_a_question_about_plans_reads_a_name_ahead(query, start, end):
    window = parse_when(query, NOW)
    assert window is not None
    assert (window.start, window.end) == (start, end)


@pytest.mark.parametrize(
    "query", ["周末干了啥", "what did we do over the weekend", "以后天天用中文"]
)
def test_a_weekend_without_a_plan_or_a_this_names_no_window(query):
    assert parse_when(query, NOW) is None


@pytest.mark.parametrize(
    "query", ["What's coming up?", "any upcoming trips?", "专家证人那边接下来有什么安排？"]
)
def test_what_is_coming_up_is_a_year_from_today(query):
    window = parse_when(query, NOW)
    assert window is not None and not window.vague
    assert (window.start, window.end) == (day(6, 11), day(6, 12, 2026))
