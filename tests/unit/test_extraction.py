"""Quick-rule extraction (``lifecycle.extract``): the labelled sets' figures stay where
they were measured, and the rules' guards hold one by one."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from soloqueue_mem.clock import parse_timestamp
from soloqueue_mem.config import Config
from soloqueue_mem.db.stores import open_memory
from soloqueue_mem.home import Home
from soloqueue_mem.lifecycle.extract import clauses, from_text
from soloqueue_mem.memory import store
from tests.conftest import NOW

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
MARGIN = 0.05
# Measured with benchmarks/bench_extraction.py. The main set was used to improve the
# rules; the held-out set was written afterwards, and its first, blind run gave precision
# 0.694 and recall 0.806. A few general fixes it prompted (a missed "I'm based in",
# possessive attributes, "my preferred X") came after, so its figures are no longer blind.
MEASURED = {
    "extraction_labelled.jsonl": {
        "all": (0.972, 1.000),
        "lang:en": (0.972, 1.000),
        "lang:zh": (0.972, 1.000),
    },
    "extraction_heldout.jsonl": {
        "all": (0.853, 0.935),
        "lang:en": (0.812, 0.867),
        "lang:zh": (0.889, 1.000),
    },
}


def _bench():
    spec = importlib.util.spec_from_file_location(
        "bench_extraction", REPO / "benchmarks" / "bench_extraction.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def drafts(text: str) -> list[tuple[str, str, str]]:
    return [(d.type, d.content, d.predicate) for d in from_text(text)]


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


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_precision_and_recall_stay_at_the_measured_figures(name):
    bench = _bench()
    _, counts = bench.evaluate(DATA / name)
    for key, (precision, recall) in MEASURED[name].items():
        assert counts[key].precision >= precision - MARGIN, (key, counts[key])
        assert counts[key].recall >= recall - MARGIN, (key, counts[key])


def test_matching_counts_each_expected_memory_once():
    bench = _bench()
    row = {
        "text": "I like Rust. I like Rust.",
        "lang": "en",
        "expected": [{"type": "PREFERENCE", "content_contains": ["rust"]}],
    }
    outcome = bench.judge(row)
    assert len(outcome.matched) == 1 and len(outcome.false_positives) == 1
    assert outcome.misses == []
    wrong_type = bench.judge({**row, "expected": [{"type": "FACT", "content_contains": ["Rust"]}]})
    assert len(wrong_type.misses) == 1 and len(wrong_type.false_positives) == 2


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
    assert drafts("我住在上海，你知道附近有什么好吃的吗？") == [("FACT", "用户住在上海", "city")]
    assert drafts("My editor is vim. Which plugin manager fits it?") == [
        ("FACT", "User's editor is vim", "editor")
    ]


def test_paths_versions_and_urls_stay_whole():
    found = drafts(
        "My project root is D:\\code\\app. I'm using Python 3.11. "
        "My docs URL is https://example.com/v1.2/index.html. 我的工作目录是 ~/src/app.v2"
    )
    assert [content for _, content, _ in found] == [
        "User's project root is D:\\code\\app",
        "User uses Python 3.11",
        "User's docs URL is https://example.com/v1.2/index.html",
        "用户的工作目录是~/src/app.v2",
    ]
    assert drafts("My dashboard is https://grafana.local/d/x?orgId=1&refresh=5s!") == [
        ("FACT", "User's dashboard is https://grafana.local/d/x?orgId=1&refresh=5s", "dashboard")
    ]
    assert drafts("我喜欢 Python、Rust 和 Go") == [("PREFERENCE", "用户喜欢Python、Rust 和 Go", "")]
    assert drafts("我喜欢看小说，也喜欢打游戏") == [
        ("PREFERENCE", "用户喜欢看小说", ""),
        ("PREFERENCE", "用户喜欢打游戏", ""),
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
    assert drafts("我早就说过，不要在周五发布") == [("RULE", "不要在周五发布", "")]


def test_clauses_about_the_speaker_are_split_and_share_the_subject():
    assert drafts("I work at Acme and I live in Berlin.") == [
        ("FACT", "User works at Acme", "employer"),
        ("FACT", "User lives in Berlin", "city"),
    ]
    assert drafts("我叫王磊，在一家游戏公司上班。") == [
        ("FACT", "用户的名字是王磊", "name"),
        ("FACT", "用户在一家游戏公司工作", "employer"),
    ]
    # an English comma alone does not split a list
    assert drafts("I like Python, Rust and Go") == [
        ("PREFERENCE", "User likes Python, Rust and Go", "")
    ]


def test_fillers_before_a_statement_are_dropped():
    assert drafts("From now on, always reply in English.") == [
        ("RULE", "Always reply in English", "")
    ]
    assert drafts("以后回答都务必附上代码示例") == [("RULE", "回答必须附上代码示例", "")]
    assert drafts("对了，我的时区是东八区") == [("FACT", "用户的时区是东八区", "timezone")]


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
