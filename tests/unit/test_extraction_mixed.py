"""Quick-rule extraction of everyday, code-switched developer speech (``patterns_mixed``
and the clause carry in ``extract``): each pattern in Chinese, English and mixed, the
keys that let a correction in the other language supersede, and what stays out."""

from __future__ import annotations

import pytest

from soloqueue_mem.clock import parse_timestamp
from soloqueue_mem.config import Config
from soloqueue_mem.home import Home
from soloqueue_mem.lifecycle.extract import from_text
from soloqueue_mem.lifecycle.restated import restates
from soloqueue_mem.memory import store
from soloqueue_mem.storage.sqlite.stores import open_memory
from tests.conftest import NOW

SAID_AT = parse_timestamp(NOW)  # Thursday 2026-11-26


def keys(text: str) -> list[tuple[str, str]]:
    return [(d.subject, d.predicate) for d in from_text(text, SAID_AT)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # settings with numbers and units
        (
            "worker 失败后的 retry 次数现在设的是 5 次",
            [("user", "retries")],
        ),
        ("重试次数是 3 次", [("user", "retries")]),
        ("retries are 8 now", [("user", "retries")]),
        (
            "Prometheus retention is set to 15 days right now.",
            [("prometheus", "retention")],
        ),
        (
            "训练的 batch size 我们现在用 256，learning rate 是 3e-4。",
            [
                ("user", "batch size"),
                ("user", "learning rate"),
            ],
        ),
        ("不对，batch size 应该是 64。", [("user", "batch size")]),
        # what the team uses, tracks and keeps where
        (
            "We track tickets in Jira, the project key is SET.",
            [("user", "ticket tracker")],
        ),
        (
            "The whole team uses Grafana for dashboards and PagerDuty for on-call.",
            [("user", "")],  # one memory, keyed on neither tool
        ),
        (
            "我们组做 code review 都用 Gerrit, not GitHub PRs.",
            [("user", "code review")],
        ),
        ("我们用 Sentry 做错误监控", [("user", "error tracking")]),
        ("secrets 都放在 Vault 里", [("user", "secrets store")]),
        (
            "Experiment tracking lives in MLflow, at mlflow.internal:5000.",
            [("user", "experiment tracking")],
        ),
        # a thing's name, and what the next clause says about it
        (
            "Our message broker is RabbitMQ, 跑在 5673 端口。",
            [
                ("user", "message broker"),
                ("rabbitmq", "port"),
            ],
        ),
        (
            "Prod cluster 叫 jade，跑在 AWS ap-northeast-1。",
            [
                ("prod cluster", "name"),
                ("jade", "deploy"),
            ],
        ),
        # names, roles, employers
        (
            "I'm Lin Wei, 在 Finch Pay 做 backend tech lead，主要负责 settlement 服务。",
            [
                ("user", "name"),
                ("user", "job"),
                ("user", ""),
            ],
        ),
        (
            "Priya here — ML engineer on the vision team.",
            [
                ("user", "name"),
                ("user", "job"),
            ],
        ),
        (
            "陈浩 here, SRE",
            [("user", "name")],
        ),
        (
            "我是 Anna，负责 infra",
            [("user", "name"), ("user", "")],
        ),
        # pets, hometown, where they live, birthday
        ("我家那只柯基叫 Tofu", [("tofu", "pet")]),
        ("我家 Lucky 是只金毛", [("lucky", "pet")]),
        (
            "My cat Biscuit knocked my coffee over",
            [("biscuit", "pet")],
        ),
        ("我老家是 Chennai", [("user", "hometown")]),
        ("I'm originally from Porto", [("user", "hometown")]),
        ("周末搬家了，现在住在杭州", [("user", "city")]),
        ("已经在深圳住了三年了", [("user", "city")]),
        ("I moved to Berlin last month.", [("user", "city")]),
        ("I moved to CircleCI.", [("user", "ci")]),  # not a city
        ("对了我生日是 11 月 2 号", [("user", "birthday")]),
        # rules said as a topic or a step
        ("Commit message 请用英文写", [("user", "")]),
        ("以后跑训练之前先 dry-run 一个 step", [("user", "")]),
        (
            "Please keep answers in Chinese with me",
            [("user", "reply language")],
        ),
        # a preference about how the assistant answers
        ("我比较喜欢你回答的时候先给结论", [("user", "")]),
    ],
)
def test_code_switched_statements(text, expected):
    assert keys(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the topic of the sentence names the attribute the switch is about
        (
            "ticket 系统我们已经不用 Jira 了，上周全部迁到 Linear 了。",
            [("user", "ticket tracker")],
        ),
        (
            "Prometheus 那个保留期，我们讨论后决定改成 30 天了",
            [("prometheus", "retention")],
        ),
        (
            "Oh, about the timeout — we changed it to 15 seconds, 8 was too aggressive.",
            [("user", "timeout")],
        ),
        # what the value is for names the attribute
        (
            "We've switched from Vault to AWS Secrets Manager for secrets, the migration is done.",
            [("user", "secrets store")],
        ),
        (
            "BTW we moved our unit tests from Jest to Vitest last sprint.",
            [("user", "test framework")],
        ),
    ],
)
def test_a_switch_is_keyed_on_its_topic_or_what_its_value_is_for(text, expected):
    assert keys(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "别忘了 lol",
        "My birthday is May 3, 别忘了 lol",  # the birthday only (checked below)
        "今天上海下大雨，地铁挤爆了 haha",
        "跑一下 settlement 的测试看看",
        "He said the database is Oracle.",
        "unit tests are failing again",
        "我喜欢你这个思路",
    ],
)
def test_interjections_events_and_other_peoples_words_stay_out(text):
    found = keys(text)
    assert all(d[1] == "birthday" for d in found), found


@pytest.mark.parametrize(
    ("first", "then", "predicate"),
    [
        ("settlement worker 的 retry 次数现在设的是 5 次", "actually retries are 8 now", "retries"),
        ("训练的 batch size 我们现在用 256", "batch size is 192 now", "batch size"),
        ("We track tickets in Jira.", "ticket 系统我们已经不用 Jira 了，全部迁到 Linear 了", None),
        ("Prometheus retention is set to 15 days.", "Prometheus 那个保留期，改成 30 天了", None),
        ("Experiment tracking lives in MLflow.", "实验记录我们不用 MLflow 了，都换成 W&B 了", None),
        ("secrets 都放在 Vault 里", "We switched from Vault to 1Password for secrets.", None),
        ("以后回答都用中文", "Actually, switch back to answering in English from now on", None),
        ("Always answer in English.", "以后用繁体字回答我", "reply language"),
    ],
)
def test_a_correction_in_the_other_language_supersedes(home, first, then, predicate):
    conn = open_memory(Home(home), Config())
    try:
        (old,) = from_text(first, SAID_AT)
        (new,) = from_text(then, SAID_AT)
        assert (old.subject, old.predicate) == (new.subject, new.predicate)
        assert predicate in (None, new.predicate)
        stored = store.remember(conn, old, "default", "default", SAID_AT)
        replaced = store.remember(conn, new, "default", "default", SAID_AT)
        assert replaced.superseded == [stored.memory.id]
        assert [m.content for m in store.active(conn, SAID_AT)] == [new.content]
    finally:
        conn.close()


def test_a_keyed_fact_carries_its_attribute_in_both_languages():
    (fact,) = from_text("Team standard: we all use Argo CD for deploys.")
    assert fact.predicate == "deploy tool"
    assert fact.tags == ("deploy-tool", "部署工具")
    (like,) = from_text("I like type hints")
    assert like.tags == ()


@pytest.mark.parametrize(
    ("said", "memory"),
    [
        (
            "btw rule: 周末不安排提柜，no pickups on weekends",
            "Rule: 周末不安排提柜，no pickups on weekends",
        ),
        (
            "My editor is VS Code，我的编辑器是 VS Code",
            "User's editor is VS Code，用户的编辑器是 VS Code",
        ),
        ("我住在北京，I live in Beijing", "用户住在北京，User lives in Beijing"),
    ],
)
def test_one_statement_said_in_both_languages_is_one_memory(said, memory):
    """The sentence, both halves in the user's own words, is the one memory."""
    assert [d.content for d in from_text(said, SAID_AT)] == [memory]


@pytest.mark.parametrize(
    "said",
    [
        "周末不安排提柜，no meetings on Fridays",  # another scope
        "周末不安排会议，no deploys on weekends",  # what is done differs: 会议 is meetings
        "My editor is Vim，我的编辑器是 Helix",  # another value of the key
        "我对花生过敏，I'm allergic to shellfish",  # shellfish is no 花生
        "我住在上海浦东，we moved to Austin from the Bay Area",  # Austin is not in it
    ],
)
def test_two_things_said_in_two_languages_stay_two_memories(said):
    assert len(from_text(said, SAID_AT)) == 2


def test_a_scope_is_what_a_rule_is_about_not_a_fact():
    """A standing rule with no key is about its scope; facts said under one are not."""
    chinese, english = "周末去爬山", "On weekends we play tennis"
    rules = [store.Draft(text, "RULE", "user", "") for text in (chinese, english)]
    facts = [store.Draft(text, "FACT", "user", "") for text in (chinese, english)]
    assert restates(rules[1], rules[0]) and not restates(facts[1], facts[0])
