"""Quick-rule extraction (``lifecycle.extract``): the labelled sets' figures stay where
they were measured, and the rules' guards hold one by one."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from soloqueue_mem.clock import parse_timestamp
from soloqueue_mem.config import Config
from soloqueue_mem.home import Home
from soloqueue_mem.lifecycle import tool_failure
from soloqueue_mem.lifecycle.extract import clauses, from_text, from_tool_results
from soloqueue_mem.lifecycle.own_words import own_words
from soloqueue_mem.lifecycle.vocabulary import vocabulary
from soloqueue_mem.memory import store
from soloqueue_mem.storage.sqlite.stores import open_memory
from tests.conftest import NOW

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
BENCH = REPO / "benchmarks" / "data"
MARGIN = 0.02
# Measured with benchmarks/bench_extraction.py (a memory matches an expected fact when
# it holds the fact's key words; see its doc). The older sets' labels name the words of
# the templates the rules used to write ("dislike", "User likes"); since a memory is the
# user's own sentence, those no longer match and their precision reads low.
MEASURED = {
    # Written blind by another hand (issue 29). The held-out half's first run, before
    # any tuning, gave 0.952 / 0.211; these figures are after tuning on the other half.
    BENCH / "extraction_set.jsonl": {
        "tuned all": (0.994, 0.995),
        "heldout all": (0.981, 0.931),
    },
    DATA / "extraction_labelled.jsonl": {"tuned all": (0.902, 0.940)},
    DATA / "extraction_heldout.jsonl": {"tuned all": (0.784, 0.935)},
    DATA / "extraction_heldout_v2.jsonl": {"tuned all": (0.973, 1.000)},
    DATA / "extraction_heldout_mixed.jsonl": {"tuned all": (0.978, 1.000)},
}


def _bench():
    spec = importlib.util.spec_from_file_location(
        "bench_extraction", REPO / "benchmarks" / "bench_extraction.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def drafts(text: str) -> list[tuple[str, str]]:
    return [(d.content, d.predicate) for d in from_text(text)]


# --- the labelled sets -------------------------------------------------------------


def test_the_main_set_is_large_balanced_and_well_formed():
    text = (DATA / "extraction_labelled.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines()]
    assert len(rows) >= 80
    zh = sum(1 for r in rows if r["lang"] == "zh")
    assert abs(zh - (len(rows) - zh)) <= len(rows) // 10  # about half each
    assert sum(1 for r in rows if not r["expected"]) >= len(rows) / 3  # negatives
    kinds = {e["type"] for r in rows for e in r["expected"]}
    assert kinds == {"FACT", "PREFERENCE", "RULE"}
    for row in rows:
        assert set(row) == {"text", "lang", "expected"} and row["lang"] in ("zh", "en")
        for expected in row["expected"]:
            assert expected["content_contains"], row
    assert len({r["text"] for r in rows}) == len(rows)


@pytest.mark.parametrize("path", sorted(MEASURED), ids=lambda path: path.name)
def test_precision_and_recall_stay_at_the_measured_figures(path):
    counts = _bench().evaluate(path)
    for key, (precision, recall) in MEASURED[path].items():
        assert counts[key].precision >= precision - MARGIN, (key, counts[key])
        assert counts[key].recall >= recall - MARGIN, (key, counts[key])


def test_a_memory_matches_a_fact_holding_its_key_words():
    bench = _bench()
    assert bench.matches("用户对花生过敏", "对花生过敏")  # function characters aside
    assert bench.matches("We use Stripe and 支付宝 for payments", "Stripe")
    assert not bench.matches("We use Stripe", "Stripe 和支付宝")
    assert not bench.matches("TTL is 3000", "TTL 300")  # whole words
    row = {
        "id": "1",
        "lang": "en",
        "half": "tuned",
        "category": "vendor_tool",
        "text": "We use Stripe and Adyen. Lunch was nice.",
        "expect": ["Stripe", "Adyen"],
    }
    outcome = bench.judge(row)  # one memory may hold two facts
    assert outcome.misses == [] and outcome.counts.precise == outcome.counts.memories == 1


# --- the rules, one by one ----------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "What is my editor?",
        "what is my editor",
        "Is my timezone set correctly?",
        "My editor is vim, isn't it?",
        "Never commit the lock file? Really?",
        "I work at Acme, right?",
        "Can you always run the tests?",
        "Do I prefer tabs?",
        "我的代码在哪里？",
        "我的编辑器是什么？",
        "我的编辑器是什么",
        "我的电脑是不是坏了",
        "你还记得我住在哪吗",
        "我在用的那个库叫什么来着",
        "能不能别每次都问我？",
        "总是用中文回复吗",
    ],
)
def test_questions_are_never_extracted(text):
    assert from_text(text) == []


def test_a_question_does_not_hide_the_statement_before_it():
    assert drafts("我住在上海，你知道附近有什么好吃的吗？") == [("用户住在上海", "city")]
    assert drafts("My editor is vim. Which plugin manager fits it?") == [
        ("User's editor is vim", "editor")
    ]


def test_paths_versions_and_urls_stay_whole():
    found = drafts(
        "My project root is D:\\code\\app. I'm using Python 3.11. "
        "My docs URL is https://example.com/v1.2/index.html. 我的工作目录是 ~/src/app.v2"
    )
    assert [content for content, _ in found] == [
        "User's project root is D:\\code\\app",
        "User is using Python 3.11",
        "User's docs URL is https://example.com/v1.2/index.html",
        "用户的工作目录是 ~/src/app.v2",
    ]
    assert drafts("My dashboard is https://grafana.local/d/x?orgId=1&refresh=5s!") == [
        ("User's dashboard is https://grafana.local/d/x?orgId=1&refresh=5s", "dashboard")
    ]
    assert drafts("我喜欢 Python、Rust 和 Go") == [("用户喜欢 Python、Rust 和 Go", "")]
    assert drafts("我喜欢看小说，也喜欢打游戏") == [
        ("用户喜欢看小说", ""),
        ("用户也喜欢打游戏", ""),  # the sentence's 我 restored
    ]
    assert [c.text for c in clauses("Use 3.11.2 please. Then run it.")] == [
        "Use 3.11.2 please",
        "Then run it",
    ]


def test_subject_and_predicate_only_for_attribute_facts():
    by_text = {
        "my editor is helix": ("user", "editor"),
        "My name is Priya": ("user", "name"),
        "I live in Lisbon": ("user", "city"),
        "我的时区是东八区": ("user", "timezone"),
        "我最喜欢的语言是 Rust": ("user", "favorite language"),
        # lists: many can be true at once, none supersedes another
        "I like Rust": ("user", ""),
        "I'm using Python 3.11": ("user", ""),
        "Always run the linter": ("user", ""),
        "不要用 print 调试": ("user", ""),
    }
    for text, (subject, predicate) in by_text.items():
        (draft,) = from_text(text)
        assert (draft.subject, draft.predicate) == (subject, predicate), text


def test_a_new_value_of_an_attribute_supersedes_the_old_one(home):
    conn = open_memory(Home(home), Config())
    now = parse_timestamp(NOW)
    try:
        (helix,) = from_text("my editor is helix")
        (vim,) = from_text("My editor is vim.")
        (likes_rust,) = from_text("I like Rust")
        (likes_go,) = from_text("I like Go")
        first = store.remember(conn, helix, "default", "default", now)
        for draft in (likes_rust, likes_go):
            store.remember(conn, draft, "default", "default", now)
        second = store.remember(conn, vim, "default", "default", now)
        assert second.action == "superseded" and second.superseded == [first.memory.id]
        active = sorted(m.content for m in store.active(conn, now))
        assert active == ["User likes Go", "User likes Rust", "User's editor is vim"]
        assert [m.content for m in store.history(conn, second.memory.id)] == [
            "User's editor is helix",
            "User's editor is vim",
        ]
    finally:
        conn.close()


@pytest.mark.parametrize(
    "text",
    [
        # reported speech
        "My friend said never use an ORM.",
        "我同事说，永远不要用 MongoDB",
        "他跟我说：别碰那个老服务",
        "老师说过，必须先写测试，再写实现",
        # hypotheticals: without its condition the rest would be wrong
        "If I lived in Tokyo, my commute would be shorter.",
        "如果我住在上海，通勤会很麻烦",
        "如果测试挂了，别合并",
        # negated values and discourse
        "No, my name is not on that list.",
        "我的电脑不是 Mac",
        "My question is whether we should cache this.",
        "我的意思是先别合并",
        "Oh, the account name is wrong.",  # a judgement of the moment, no value
        "我的邮箱是错的",
        # reactions to the moment, interjections
        "I like this approach, let's go with it.",
        "Thanks, I love it!",
        "我喜欢这个方案，就这么办吧",
        "Never mind, I figured it out.",
        "Don't worry, it's not your fault.",
        "别担心，这个不怪你",
        "Always the same error.",
        "I'm on a call, give me five minutes.",
        # pasted code
        "```python\ndef f():\n    '''Always retries.'''\n```",
        "```\n不要修改：generated\n```",
    ],
)
def test_statements_that_are_not_the_users_own_lasting_word(text):
    assert from_text(text) == []


def test_the_users_own_words_after_a_speech_verb_still_count():
    assert drafts("我早就说过，不要在周五发布") == [("用户早就说过，不要在周五发布", "")]


def test_clauses_about_the_speaker_are_split_and_share_the_subject():
    assert drafts("I work at Acme and I live in Berlin.") == [
        ("User works at Acme", "employer"),
        ("User lives in Berlin", "city"),
    ]
    assert drafts("我叫王磊，在一家游戏公司上班。") == [
        ("用户叫王磊", "name"),
        ("用户在一家游戏公司上班", "employer"),  # the sentence's 我 restored
    ]
    # an English comma alone does not split a list
    assert drafts("I like Python, Rust and Go") == [("User likes Python, Rust and Go", "")]


def test_fillers_before_a_statement_are_dropped():
    assert drafts("From now on, always reply in English.") == [
        ("Always reply in English", "reply language")
    ]
    assert drafts("以后回答都务必附上代码示例") == [("回答都务必附上代码示例", "")]
    assert drafts("对了，我的时区是东八区") == [("用户的时区是东八区", "timezone")]


def test_a_task_rule_takes_no_key_so_the_standing_rule_stays():
    (standing,) = from_text("以后回答都用中文")
    (task,) = from_text("Reply in English this time")
    assert (standing.predicate, standing.duration) == ("reply language", "permanent")
    assert (task.predicate, task.duration) == ("", "24h")


def test_behaviour_rules_are_permanent_and_task_rules_last_a_day():
    for text in (
        "Always use UTC.",
        "Don't touch the lock file.",
        "Never commit secrets.",
        "You must run the linter before committing.",
        "不要直接改主分支",
        "别用 var 声明变量",
        "必须先写测试",
        "提交信息必须用英文写",
    ):
        assert [d.duration for d in from_text(text)] == ["permanent"], text
    for text in (
        "For now, don't run the slow tests.",
        "This time, don't bump the version.",
        "Don't merge anything today.",
        "这次先别跑集成测试",
        "今天不要部署",
        "先别合并这个分支",
    ):
        (rule,) = from_text(text)
        assert (rule.type, rule.duration) == ("RULE", "24h"), text


# --- facts in ordinary speech, corrections, plans (zh and en) -------------------------

SAID_AT = parse_timestamp(NOW)  # Thursday 2026-11-26


def keys(text: str) -> list[tuple[str, str]]:
    return [(d.subject, d.predicate) for d in from_text(text, SAID_AT)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # our/my X is Y, X 是/用 Y, versions
        (
            "Our database is PostgreSQL 15.",
            [("user", "database")],
        ),
        ("我们的数据库是 PostgreSQL 15", [("user", "database")]),
        (
            "The staging database is MySQL 8.0.",
            [("staging", "database")],
        ),
        ("Redis 的版本是 7.2", [("redis", "version")]),
        (
            "The project is written in Kotlin.",
            [("project", "language")],
        ),
        ("项目用 Rust 写的", [("project", "language")]),
        # ports
        ("The API runs on port 8080.", [("api", "port")]),
        ("服务跑在 8080 端口", [("service", "port")]),
        # dates
        ("My birthday is May 3.", [("user", "birthday")]),
        ("我的生日是三月五号", [("user", "birthday")]),
        # names and roles
        (
            "I'm Alice, the SRE lead.",
            [("user", "name")],
        ),
        ("我叫王磊", [("user", "name")]),
        ("I'm a backend engineer.", [("user", "job")]),
        ("我是前端工程师", [("user", "job")]),
        # pets and family: many at once, never superseded
        ("I have a cat named Mochi.", [("user", "")]),
        ("我家有只狗叫旺财", [("旺财", "pet")]),
        # where things are deployed, what the team uses
        ("The API is deployed on Fly.io.", [("api", "deploy")]),
        ("服务部署在阿里云", [("service", "deploy")]),
        ("We use Postgres.", [("user", "database")]),
        ("我们团队用飞书", [("user", "team chat")]),
        ("I use Python and Go.", [("user", "")]),  # languages: many
        # corrections and switches
        ("Actually, my editor is Zed now.", [("user", "editor")]),
        ("I switched from Vim to Helix.", [("user", "editor")]),
        ("We've moved the CI to CircleCI.", [("user", "ci")]),
        ("我从 VS Code 换成了 Cursor", [("user", "editor")]),
        ("我已经换成 Helix 了", [("user", "editor")]),
        ("不对，端口改成 8443 了", [("user", "port")]),
    ],
)
def test_facts_people_state_in_ordinary_speech(text, expected):
    assert keys(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "The build is slow today.",
        "The answer is 42.",
        "结果是对的",
        "这个函数是我写的",
        "He said the database is Oracle.",
        "他说服务部署在腾讯云",
        "If we switch to Postgres, we need a migration.",
        "如果数据库换成 MySQL 会怎样",
        "Which port is the API on?",
        "端口是多少来着",
        "My editor is no longer VS Code.",
        "把端口改成 9090",  # an instruction, not a statement of the value
        "I'm Happy with the result.",
        "昨天去了趟北京",
        "This repo is a mess lol",
        "这个项目好难啊",
        "Who is on call?",
        "我们",  # a bare pronoun says nothing
        "我。",
        "我们的",
    ],
)
def test_what_is_not_a_fact_stays_out(text):
    assert from_text(text, SAID_AT) == []


@pytest.mark.parametrize(
    "text",
    [
        "We moved to a new office.",  # a switch to nothing known
        "我们的项目叫 Aurora",  # a name, not a pet's
        "I have two cats btw, 一只叫 Miso 一只叫 Nori",
        "发布审批由赵敏负责",
        "I grew up fast in that job",  # no hometown
    ],
)
def test_a_statement_whose_attribute_is_unsure_is_a_fact_without_one(text):
    (fact,) = from_text(text, SAID_AT)
    assert fact.type == "FACT" and fact.predicate in ("", "name"), fact
    assert fact.predicate != "pet"


@pytest.mark.parametrize(
    "text",
    [
        "This project uses FastAPI.",
        "我们项目用 FastAPI",
        "这个项目用的是 Poetry",
        "Alice is on call this week.",
        "明天小李值班",
        "Dev owns the search service.",
        "Maria is responsible for the release process.",
        "Kenji is the owner of the billing service.",
    ],
)
def test_a_teams_tools_and_who_is_on_call_are_kept_as_said(text):
    (fact,) = from_text(text, SAID_AT)
    assert (fact.type, fact.content) == ("FACT", text.rstrip("."))


def test_a_project_name_is_no_pet():
    (fact,) = from_text("我们的项目叫 Aurora")
    assert (fact.content, fact.subject, fact.predicate) == (
        "我们的项目叫 Aurora",
        "project",
        "name",
    )
    (pet,) = from_text("我家那只柯基叫 Tofu")
    assert (pet.content, pet.subject, pet.predicate) == ("用户家那只柯基叫 Tofu", "tofu", "pet")


def test_zh_and_en_statements_of_one_attribute_share_a_key():
    pairs = [
        ("My editor is Vim.", "我的编辑器是 Helix"),
        ("Our database is MySQL.", "我们的数据库是 TiDB"),
        ("My timezone is UTC+1.", "我的时区是东八区"),
        ("My email is a@b.c", "我的邮箱是 x@y.z"),
        ("My name is Lei.", "我叫王磊"),
        ("I live in Lisbon.", "我住在上海"),
        ("I switched to fish.", "我的 shell 是 zsh"),
        ("We use Slack.", "我们团队用飞书"),
        ("The API runs on port 8080.", "API 跑在 9090 端口"),
        ("This project uses Slack.", "我们项目用飞书"),
        ("Our frontend framework is React.", "我们前端框架用 Vue"),
        ("The backend is written in Go.", "我们后端用 Rust 写的"),
    ]
    for en, zh in pairs:
        (en_key,), (zh_key,) = keys(en), keys(zh)
        assert en_key == zh_key and en_key[1], (en, zh)


def test_config_aliases_name_new_predicates_in_both_languages():
    words = vocabulary({"终端": "terminal", "terminal app": "terminal"})
    (zh,) = from_text("我的终端是 iTerm2", words=words)
    (en,) = from_text("My terminal app is Ghostty.", words=words)
    assert (zh.predicate, en.predicate) == ("terminal", "terminal")


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("Next week we plan to migrate to k8s.", "2026-12-03"),
        ("On Friday I'm presenting the roadmap.", "2026-11-27"),
        ("We're releasing v2 in 3 days.", "2026-11-29"),
        ("下周要上线新版本", "2026-12-03"),
        ("明天要去北京", "2026-11-27"),
        ("下周三打算做代码评审", "2026-12-02"),
        ("月底要交季度报告", "2026-11-30"),
        # the day in a clause of its own, and a date beside a weekday: the date wins
        ("Next Tuesday, December 8, we're demoing the new search.", "2026-12-08"),
        ("下周二，12 月 8 日，我们要演示新搜索", "2026-12-08"),
        # a day of the month alone: the next one, today or later; beside a weekday that
        # disagrees, the date still wins (December 11 is a Friday)
        ("We're having team lunch friday the 11th at Saltimporten.", "2026-12-11"),
        ("Fri 11th we're shipping the beta.", "2026-12-11"),
        ("Monday the 11th we're moving offices.", "2026-12-11"),
        ("On the 30th I'm presenting the roadmap.", "2026-11-30"),
        ("我们 3 号要发版", "2026-12-03"),
        ("周五 11 号要去医院复查", "2026-12-11"),
        ("十一号要交季度报告", "2026-12-11"),
        # a weekday glued to the date it names: 周二12月1号 is December 1, not a month 二12
        ("下周二12月1号要演示新搜索", "2026-12-01"),
    ],
)
def test_a_plan_is_a_fact_that_expires_three_days_after_its_day(text, day):
    (plan,) = from_text(text, SAID_AT)
    assert plan.type == "FACT" and day in plan.content
    assert own_words(text.rstrip(".")) in plan.content
    assert plan.until is not None
    assert plan.until.isoformat() == f"{day}T00:00:00+00:00".replace(day, _plus(day, 4))


def _plus(day: str, days: int) -> str:
    from datetime import date, timedelta

    return (date.fromisoformat(day) + timedelta(days=days)).isoformat()


def test_a_statement_told_to_the_calendar_is_a_plan_of_its_day():
    """ "…, put it in my calendar" asks the agent to act on what was said, as "…, can you
    put it in the calendar" does: a statement naming a coming day, without a word of
    intention, is a plan of that day, and the request is not part of it."""
    (plan,) = from_text(
        "Friday at 2pm is the vendor signing meeting, put it in my calendar", SAID_AT
    )
    assert plan.content == "Plan for 2026-11-27: Friday at 2pm is the vendor signing meeting"
    assert plan.until is not None
    (kept,) = from_text("My dog is called Rex, write that down", SAID_AT)
    assert kept.content == "User's dog is called Rex"


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("12月3日周四给客户做一次针刺演示，上午十点，在 C 区", "2026-12-03"),
        ("December 3: client demo in room C", "2026-12-03"),
        ("On December 3 the audit team arrives", "2026-12-03"),
    ],
)
def test_a_statement_that_opens_with_a_coming_date_is_a_plan(text, day):
    """A statement said from its date on, with no word of intention, says what happens
    that day: the date is what it is about, and it expires after it as a plan does."""
    (plan,) = from_text(text, SAID_AT)
    assert plan.content.startswith(("计划（" + day, "Plan for " + day)), plan.content
    assert plan.until is not None


def test_what_is_not_a_plan():
    for text in (
        "上周要上线的版本延期了",
        "不要在明天发布",
        "我们要搬到 3 号楼",
        "We're moving to the 11th floor",
        "11月20日我们上线了",  # a date said first of the days just gone: not next year's
        "On November 3 we shipped it",
    ):
        assert all(d.until is None for d in from_text(text, SAID_AT)), text
    # without the turn's time, a plan cannot be dated: nothing is stored for it
    assert from_text("明天要去北京") == []


@pytest.mark.parametrize(
    ("content", "failed"),
    [
        ("Error: connection refused", True),
        ("ValueError: bad input", True),
        ("Traceback (most recent call last):\n  File x", True),
        ("building...\nprocess exited with code 2", True),
        ("bash: foo: command not found", False),  # a tool's own prefix: too loose to read
        ("psql: error: connection to server failed", True),  # unless "error:" follows it
        ("gcc: fatal error: no input files", True),
        ("Summary: error rate 0.1%", False),
        ("Permission denied", True),
        ("错误：找不到文件", True),
        ("失败：权限不足", True),
        ("12 passed, 0 errors", False),
        ("exit code 0", False),
        ("The error handling looks fine to me.", False),
        ("no failures", False),
    ],
)
def test_a_tool_failure_is_read_from_the_content_when_no_flag_says_so(content, failed):
    result = {"tool_use_id": "c1", "content": content, "is_error": False}
    assert tool_failure.failed(result) is failed
    assert len(from_tool_results([result], {"c1": "sh"})) == int(failed)
    assert tool_failure.failed({**result, "content": "ok", "is_error": True})


def test_a_traceback_gives_its_exception_even_a_module_qualified_one():
    output = (
        'Traceback (most recent call last):\n  File "check.py", line 33, in <module>\n'
        "    r = session.get(URL)\nrequests.exceptions.ConnectionError: Max retries exceeded"
    )
    assert tool_failure.message(output) == (
        "requests.exceptions.ConnectionError: Max retries exceeded"
    )


def test_without_a_line_opening_with_an_error_word_the_first_naming_one_is_the_message():
    output = (  # esptool through idf.py: its port line first, CMake's wrapper last
        "Serial port /dev/ttyUSB0\nConnecting........\n\n"
        "A fatal error occurred: Failed to connect to ESP32-S3: No serial data received.\n"
        "CMake Error at run_serial_tool.cmake:66 (message): esptool.py failed with exit code 2"
    )
    assert tool_failure.message(output) == (
        "A fatal error occurred: Failed to connect to ESP32-S3: No serial data received."
    )
    assert tool_failure.message("Serial port /dev/ttyUSB0\nexit code 2") == (
        "Serial port /dev/ttyUSB0"
    )
