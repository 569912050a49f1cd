"""Quick-rule extraction of everyday, code-switched developer speech (``patterns_mixed``
and the clause carry in ``extract``): each pattern in Chinese, English and mixed, the
keys that let a correction in the other language supersede, and what stays out."""

from __future__ import annotations

import pytest

from soloqueue_mem.clock import parse_timestamp
from soloqueue_mem.config import Config
from soloqueue_mem.home import Home
from soloqueue_mem.lifecycle.extract import from_text
from soloqueue_mem.memory import store
from soloqueue_mem.storage.sqlite.stores import open_memory
from tests.conftest import NOW

SAID_AT = parse_timestamp(NOW)  # Thursday 2026-11-26


def keys(text: str) -> list[tuple[str, str, str]]:
    return [(d.content, d.subject, d.predicate) for d in from_text(text, SAID_AT)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # settings with numbers and units
        (
            "worker 失败后的 retry 次数现在设的是 5 次",
            [("Worker 失败后的 retry 次数设的是5 次", "user", "retries")],
        ),
        ("重试次数是 3 次", [("重试次数是3 次", "user", "retries")]),
        ("retries are 8 now", [("Retries are 8", "user", "retries")]),
        (
            "Prometheus retention is set to 15 days right now.",
            [("Prometheus retention is set to 15 days", "prometheus", "retention")],
        ),
        (
            "训练的 batch size 我们现在用 256，learning rate 是 3e-4。",
            [
                ("训练的 batch size是256", "user", "batch size"),
                ("Learning rate是3e-4", "user", "learning rate"),
            ],
        ),
        ("不对，batch size 应该是 64。", [("Batch size是64", "user", "batch size")]),
        # what the team uses, tracks and keeps where
        (
            "We track tickets in Jira, the project key is SET.",
            [("The team tracks tickets in Jira", "user", "ticket tracker")],
        ),
        (
            "The whole team uses Grafana for dashboards and PagerDuty for on-call.",
            [
                ("The team uses Grafana for dashboards", "user", "monitoring"),
                ("The team uses PagerDuty for on-call", "user", "on-call"),
            ],
        ),
        (
            "我们组做 code review 都用 Gerrit, not GitHub PRs.",
            [("团队的code review用Gerrit", "user", "code review")],
        ),
        ("我们用 Sentry 做错误监控", [("团队用Sentry做错误监控", "user", "error tracking")]),
        ("secrets 都放在 Vault 里", [("Secrets放在Vault", "user", "secrets store")]),
        (
            "Experiment tracking lives in MLflow, at mlflow.internal:5000.",
            [("Experiment tracking is in MLflow", "user", "experiment tracking")],
        ),
        # a thing's name, and what the next clause says about it
        (
            "Our message broker is RabbitMQ, 跑在 5673 端口。",
            [
                ("The team's message broker is RabbitMQ", "user", "message broker"),
                ("RabbitMQ跑在5673端口", "rabbitmq", "port"),
            ],
        ),
        (
            "Prod cluster 叫 jade，跑在 AWS ap-northeast-1。",
            [
                ("Prod cluster叫jade", "prod cluster", "name"),
                ("Jade部署在AWS ap-northeast-1", "jade", "deploy"),
            ],
        ),
        # names, roles, employers
        (
            "I'm Lin Wei, 在 Finch Pay 做 backend tech lead，主要负责 settlement 服务。",
            [
                ("User's name is Lin Wei", "user", "name"),
                ("用户在Finch Pay做backend tech lead", "user", "job"),
                ("用户在Finch Pay工作", "user", "employer"),
                ("用户负责settlement 服务", "user", ""),
            ],
        ),
        (
            "Priya here — ML engineer on the vision team.",
            [
                ("User's name is Priya", "user", "name"),
                ("User is the ML engineer on the vision team", "user", "job"),
            ],
        ),
        (
            "陈浩 here, SRE",
            [("User's name is 陈浩", "user", "name"), ("User is the SRE", "user", "job")],
        ),
        (
            "我是 Anna，负责 infra",
            [("用户的名字是Anna", "user", "name"), ("用户负责infra", "user", "")],
        ),
        # pets, hometown, where they live, birthday
        ("我家那只柯基叫 Tofu", [("用户的柯基叫Tofu", "tofu", "pet")]),
        ("我家 Lucky 是只金毛", [("用户家的Lucky是一只金毛", "lucky", "pet")]),
        (
            "My cat Biscuit knocked my coffee over",
            [("User's cat is named Biscuit", "biscuit", "pet")],
        ),
        ("我老家是 Chennai", [("用户的老家是Chennai", "user", "hometown")]),
        ("I'm originally from Porto", [("User is originally from Porto", "user", "hometown")]),
        ("周末搬家了，现在住在杭州", [("用户住在杭州", "user", "city")]),
        ("已经在深圳住了三年了", [("用户住在深圳", "user", "city")]),
        ("I moved to Berlin last month.", [("User lives in Berlin", "user", "city")]),
        ("I moved to CircleCI.", [("User's ci is now CircleCI", "user", "ci")]),  # not a city
        ("对了我生日是 11 月 2 号", [("用户的生日是11 月 2 号", "user", "birthday")]),
        # rules said as a topic or a step
        ("Commit message 请用英文写", [("Commit message请用英文写", "user", "")]),
        ("以后跑训练之前先 dry-run 一个 step", [("跑训练之前先 dry-run 一个 step", "user", "")]),
        (
            "Please keep answers in Chinese with me",
            [("Please keep answers in Chinese with me", "user", "")],
        ),
        # a preference about how the assistant answers
        ("我比较喜欢你回答的时候先给结论", [("用户喜欢你回答的时候先给结论", "user", "")]),
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
            [("用户的工单系统已换成Linear", "user", "ticket tracker")],
        ),
        (
            "Prometheus 那个保留期，我们讨论后决定改成 30 天了",
            [("用户的保留期已换成30 天", "prometheus", "retention")],
        ),
        (
            "Oh, about the timeout — we changed it to 15 seconds, 8 was too aggressive.",
            [("User's timeout is now 15 seconds", "user", "timeout")],
        ),
        # what the value is for names the attribute
        (
            "We've switched from Vault to AWS Secrets Manager for secrets, the migration is done.",
            [("User's secrets store is now AWS Secrets Manager", "user", "secrets store")],
        ),
        (
            "BTW we moved our unit tests from Jest to Vitest last sprint.",
            [("User's test framework is now Vitest", "user", "test framework")],
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
        "I have two cats btw, 一只叫 Miso 一只叫 Nori",
        "今天上海下大雨，地铁挤爆了 haha",
        "跑一下 settlement 的测试看看",
        "He said the database is Oracle.",
        "unit tests are failing again",
        "我喜欢你这个思路",
        "We moved to a new office.",
    ],
)
def test_interjections_events_and_other_peoples_words_stay_out(text):
    found = keys(text)
    assert all(d[2] == "birthday" for d in found), found


@pytest.mark.parametrize(
    ("first", "then", "predicate"),
    [
        ("settlement worker 的 retry 次数现在设的是 5 次", "actually retries are 8 now", "retries"),
        ("训练的 batch size 我们现在用 256", "batch size is 192 now", "batch size"),
        ("We track tickets in Jira.", "ticket 系统我们已经不用 Jira 了，全部迁到 Linear 了", None),
        ("Prometheus retention is set to 15 days.", "Prometheus 那个保留期，改成 30 天了", None),
        ("Experiment tracking lives in MLflow.", "实验记录我们不用 MLflow 了，都换成 W&B 了", None),
        ("secrets 都放在 Vault 里", "We switched from Vault to 1Password for secrets.", None),
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
