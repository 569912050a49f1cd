"""Quick-rule extraction of corrections that name what was wrong and of personal facts
said in passing (hometown, birth year, diet, partner, school, a Chinese name), in
Chinese, English and mixed; the keys that let a correction supersede; the question
cues that find them in the other language; and what stays out."""

from __future__ import annotations

import pytest

from soloqueue_mem.clock import parse_timestamp
from soloqueue_mem.config import Config
from soloqueue_mem.home import Home
from soloqueue_mem.lifecycle.extract import from_text
from soloqueue_mem.lifecycle.vocabulary import vocabulary
from soloqueue_mem.memory import store
from soloqueue_mem.memory.attributes import asked
from soloqueue_mem.storage.sqlite.stores import open_memory
from soloqueue_mem.text.cue import is_correction
from tests.conftest import NOW

SAID_AT = parse_timestamp(NOW)


def keys(text: str) -> list[tuple[str, str]]:
    return [(d.subject, d.predicate) for d in from_text(text, SAID_AT) if d.type == "FACT"]


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ("I grew up in Porto, so excuse the Portuguese.", ("user", "hometown"), "Porto"),
        ("I was born and raised in Lisbon", ("user", "hometown"), "Lisbon"),
        ("我是在武汉长大的", ("user", "hometown"), "武汉"),
        ("I grew up in Chengdu 哈哈, so spicy food is fine", ("user", "hometown"), "Chengdu"),
        ("我是 90 后", ("user", "birth year"), "90 后"),
        ("我是 1988 年生的，属龙。", ("user", "birth year"), "1988"),
        ("I was born in 1991.", ("user", "birth year"), "1991"),
        ("I'm allergic to peanuts, so no satay", ("user", "allergy"), "peanuts"),
        ("我对花生过敏", ("user", "allergy"), "花生"),
        ("btw I'm vegetarian, 订餐的时候帮我备注", ("user", "diet"), "vegetarian"),
        ("I'm lactose intolerant", ("user", "diet"), "lactose intolerant"),
        ("我吃素", ("user", "diet"), "吃素"),
        ("我老公是做芯片设计的", ("user", "partner"), "芯片设计"),
        ("My wife is a nurse.", ("user", "partner"), "nurse"),
        ("my partner and I just moved to Lyon", ("user", "city"), "Lyon"),
        ("我和老婆上个月刚搬到苏州", ("user", "city"), "苏州"),
        ("大学在华科读的计算机", ("user", "education"), "华科"),
        ("Hi, 我是刘洋，在一家物流公司做 DBA", ("user", "name"), "刘洋"),
        (
            "My supervisor is Prof. Mirella Okafor, we meet weekly.",
            ("user", "supervisor"),
            "Okafor",
        ),
        ("公司内网的 wiki 在 Confluence", ("user", "docs"), "Confluence"),
        ("the warehouse is Snowflake", ("user", "data warehouse"), "Snowflake"),
    ],
)
def test_personal_and_work_facts_said_in_passing(text, key, value):
    facts = [d for d in from_text(text, SAID_AT) if (d.subject, d.predicate) == key]
    assert facts and value in facts[0].content, from_text(text, SAID_AT)


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        (
            "No wait, I got the churn window wrong — it's 60 days, not 45.",
            "churn window",
            "60 days",
        ),
        ("更正一下，staging 的端口不是 8443，是 9443，我上次说错了。", "port", "9443"),
        ("PgBouncer 的 max_client_conn 换掉了，现在是 5000", "max connections", "5000"),
        ("我记错了，Flutter 版本其实是 3.22，不是 3.19。", "version", "3.22"),
        ("Scratch that about Metabase — we ended up going with Looker.", "bi tool", "Looker"),
        ("scratch that about the retention — we ended up going with 30 days", "retention", "30"),
    ],
)
def test_a_correction_is_keyed_on_what_it_says_was_wrong(text, key, value):
    (fact,) = [d for d in from_text(text, SAID_AT) if d.type == "FACT"]
    assert fact.predicate == key and value in fact.content


@pytest.mark.parametrize(
    ("first", "then"),
    [
        ("staging 环境用 8443 端口", "更正一下，staging 的端口不是 8443，是 9443"),
        ("max_client_conn 设的 2000", "max_client_conn 换掉了，现在是 5000"),
        ("Flutter 版本锁在 3.19", "我记错了，Flutter 版本其实是 3.22"),
        ("我们的报表工具用的是 Metabase", "Scratch that about Metabase — we went with Looker."),
        ("Our data warehouse is Redshift.", "我们改用 Snowflake 了"),
    ],
)
def test_the_correction_supersedes_the_value_it_corrects(home, first, then):
    conn = open_memory(Home(home), Config())
    try:
        (old,) = from_text(first, SAID_AT)
        (new,) = from_text(then, SAID_AT)
        stored = store.remember(conn, old, "default", "default", SAID_AT)
        replaced = store.remember(conn, new, "default", "default", SAID_AT)
        assert replaced.superseded == [stored.memory.id]
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("text", "cued"),
    [
        ("哦不对，项目升级到 Python 3.12 了", True),
        ("我说错了，是周四", True),
        ("We upgraded the billing service to Django 5.0", True),
        ("Sorry, I meant the staging cluster", True),
        ("这样写对不对？", False),  # a question tag, not a correction
        ("不对吗？我觉得挺好", False),
        ("The upgrade went fine", False),
    ],
)
def test_a_correction_cue_is_what_takes_a_value_back_or_moves_it_on(text, cued):
    assert is_correction(text) is cued


@pytest.mark.parametrize(
    "text",
    [
        "it's fine, don't worry",
        "是的，没问题",
        "我是说这个函数有问题",
        "我不是很确定，是吧",
    ],
)
def test_bare_values_without_what_was_wrong_stay_out(text):
    assert keys(text) == []


@pytest.mark.parametrize(
    ("question", "predicate"),
    [
        ("Where did I grow up?", "hometown"),
        ("我是在哪里长大的？", "hometown"),
        ("What year was I born?", "birth year"),
        ("我大概是哪年出生的？", "birth year"),
        ("Do I have any food allergies?", "allergy"),
        ("Any dietary restrictions?", "diet"),
        ("What does my husband do for a living?", "partner"),
        ("我老婆是做什么的？", "partner"),
        ("我大学是在哪读的？", "education"),
        ("我们的数仓用的是哪家？", "data warehouse"),
        ("高管报表现在用什么 BI 工具做？", "bi tool"),
        ("我导师是谁？", "supervisor"),
    ],
)
def test_questions_ask_for_the_attribute_in_either_language(question, predicate):
    assert predicate in [canonical for canonical, _ in asked(question, vocabulary())]


def test_each_pet_is_its_own_fact_keyed_pet_and_a_child_is_no_pet():
    pets = [
        d for t in ("我家猫叫豆豆", "My cat Biscuit knocked my coffee over") for d in from_text(t)
    ]
    assert [(d.subject, d.predicate, d.tags) for d in pets] == [
        ("豆豆", "pet", ("pet", "宠物")),
        ("biscuit", "pet", ("pet", "宠物")),
    ]
    assert [d.predicate for d in from_text("我女儿叫 Ada")] == [""]
