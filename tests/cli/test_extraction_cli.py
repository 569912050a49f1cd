"""What a user tells their agent, logged as hooks would and consolidated at night,
comes back as memories: corrections across languages, plans that expire after their
day, config-added predicates, tool failures without ``is_error``, Anthropic blocks."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from tests.cli.test_consolidate import EX_DATAERR, at, consolidate, listed, recalled, say


def night(cli, monkeypatch, when: str) -> dict:
    at(monkeypatch, when)
    return consolidate(cli)


def forty_nights(cli, monkeypatch, every: int) -> None:
    """A consolidate every ``every`` nights for 40 nights from 2026-11-26."""
    for night_number in range(0, 41, every):
        day = datetime(2026, 11, 26, 23, tzinfo=UTC) + timedelta(days=night_number)
        night(cli, monkeypatch, day.strftime("%Y-%m-%dT%H:%M:%SZ"))


def on_two_days(cli, monkeypatch, monday: list[str], tuesday: list[str]) -> None:
    """``monday``'s turns, that night's consolidate, then ``tuesday``'s and its night."""
    say(cli, "monday", *monday)
    night(cli, monkeypatch, "2026-11-26T23:00:00Z")
    at(monkeypatch, "2026-11-27T09:00:00Z")
    say(cli, "tuesday", *tuesday)
    night(cli, monkeypatch, "2026-11-27T23:00:00Z")


def test_a_correction_in_the_other_language_supersedes_the_value(cli, monkeypatch):
    on_two_days(cli, monkeypatch, ["my editor is VS Code"], ["我已经换成 Helix 了"])

    (current,) = [m for m in listed(cli) if "Helix" in m or "VS Code" in m]
    assert current == "用户已经换成 Helix 了"  # the user's words, keyed on the editor
    newest = listed(cli)[current]
    assert (newest["subject"], newest["predicate"]) == ("user", "editor")
    history = cli.json("memory", "history", newest["id"])
    assert [m["content"] for m in history] == ["User's editor is VS Code", current]
    assert recalled(cli, "editor")[0]["content"] == current
    assert [h["content"] for h in recalled(cli, "editor", "--type", "FACT")] == [current]


def test_one_attribute_said_in_english_then_chinese_is_one_memory(cli, monkeypatch):
    say(cli, "monday", "Our frontend framework is React.", "This project uses Slack.")
    night(cli, monkeypatch, "2026-11-26T23:00:00Z")
    at(monkeypatch, "2026-11-27T09:00:00Z")
    say(cli, "tuesday", "我们前端框架用 React", "我们项目用 Slack")
    night(cli, monkeypatch, "2026-11-27T23:00:00Z")
    assert set(listed(cli)) == {"我们前端框架用 React", "我们项目用 Slack"}


def test_a_switch_from_one_value_to_another_in_english_after_chinese(cli, monkeypatch):
    say(cli, "s1", "我们的数据库是 PostgreSQL 15", "服务跑在 8080 端口")
    night(cli, monkeypatch, "2026-11-26T23:00:00Z")
    say(
        cli,
        "s2",
        "We switched from Postgres to MySQL last month.",
        "The service runs on port 9090.",
    )
    night(cli, monkeypatch, "2026-11-27T23:00:00Z")
    current = set(listed(cli))
    assert {
        "We switched from Postgres to MySQL last month",
        "The service runs on port 9090",
    } <= current
    assert not any("PostgreSQL" in m or "8080" in m for m in current)


def test_a_correction_without_a_key_supersedes_the_memory_it_is_about(cli, monkeypatch):
    say(
        cli,
        "s1",
        "The nightly backup job runs on the archive host at 2am.",
        "我们的灰度发布比例是 5%。",
        "The archive host has 4 TB of disk.",
    )
    night(cli, monkeypatch, "2026-11-26T23:00:00Z")
    at(monkeypatch, "2026-11-27T09:00:00Z")
    say(cli, "s2", "Actually the nightly backup job moved to 4am.", "灰度发布比例改成 20% 了")
    night(cli, monkeypatch, "2026-11-27T23:00:00Z")

    current = listed(cli)
    assert not any("2am" in m or "5%" in m for m in current)
    backup = next(m for m in current.values() if "4am" in m["content"])
    history = cli.json("memory", "history", backup["id"])
    assert history[0]["content"] == "The nightly backup job runs on the archive host at 2am"
    assert any("20%" in m for m in current)
    assert "The archive host has 4 TB of disk" in current  # not what the correction is about


def test_what_was_said_taken_back_or_upgraded_supersedes_what_it_is_about(cli, monkeypatch):
    """Seed 003's example said as people say it: "哦不对" takes back what was said,
    "升级到" / "upgraded to" moves a value on; neither names the attribute."""
    on_two_days(
        cli,
        monkeypatch,
        ["我们的项目用 Python 3.10。", "The billing service runs Django 4.2 in production."],
        ["哦不对，项目升级到 Python 3.12 了。", "We upgraded the billing service to Django 5.0."],
    )
    current = listed(cli)
    assert not any("3.10" in m or "4.2" in m for m in current)
    assert {"项目升级到 Python 3.12 了", "We upgraded the billing service to Django 5.0"} <= set(
        current
    )
    (first, *_) = recalled(cli, "项目现在用哪个 Python 版本？")
    assert first["content"] == "项目升级到 Python 3.12 了"


def test_a_statement_naming_the_value_it_replaces_supersedes_the_memory_stating_it(
    cli, monkeypatch
):
    """ "期中不是28号，是6月2号" carries no cue word, but naming the value it replaces
    (不是 … 是) says it corrects: the memory stating 28号 on its topic goes."""
    on_two_days(cli, monkeypatch, ["期中考试定在 5月28号。", "我们班 42 个人。"],
                ["期中不是28号，是6月2号，学校那周开运动会"])  # fmt: skip
    current = listed(cli)
    assert "期中考试定在 5月28号" not in current and "我们班 42 个人" in current
    new = next(m for m in current.values() if "6月2号" in m["content"])
    assert cli.json("memory", "history", new["id"])[0]["content"] == "期中考试定在 5月28号"


def test_a_greeting_is_no_topic_a_correction_shares(cli, monkeypatch):
    """早 followed by a pause greets, as "morning," does: left out of what is kept, it
    is no word in common between the introduction and an incident that moves vaccines
    (挪到, a cue), which share nothing else but the speaker."""
    on_two_days(cli, monkeypatch, ["早～我是韩雪梅，在成都高新区的毛球宠物医院当店长"],
                ["早 出事了，疫苗冰箱在报警，我让小护士先把疫苗挪到备用冰箱了"])  # fmt: skip
    current = listed(cli)
    assert "用户是韩雪梅，在成都高新区的毛球宠物医院当店长" in current
    assert "出事了，疫苗冰箱在报警，用户让小护士先把疫苗挪到备用冰箱了" in current


def test_an_introduction_after_a_greeting_tells_the_name_job_and_employer(cli, monkeypatch):
    """早啊～ greets as 早～ does, so "我是 NAME，ORG 的 TITLE" reads as a name and a job;
    the job names where it is held, so a question about the company finds it, in
    either language ("product manager at Acme" too)."""
    say(cli, "monday", "早啊～我是邓佳琪，禾麦烘焙的运营经理", "冷链车的温度上限定的是 7℃")
    night(cli, monkeypatch, "2026-11-26T23:00:00Z")
    current = listed(cli)
    assert "用户是邓佳琪" in current
    job = current["禾麦烘焙的运营经理"]
    assert job["predicate"] == "job" and {"employer", "公司"} <= set(job["tags"])
    first = recalled(cli, "我现在是在哪家公司，负责啥来着？", "--type", "FACT")[0]
    assert first["content"] == "禾麦烘焙的运营经理"
    at(monkeypatch, "2026-11-27T09:00:00Z")
    say(cli, "tuesday", "I work as a product manager at Acme Robotics.")
    night(cli, monkeypatch, "2026-11-27T23:00:00Z")
    first = recalled(cli, "Which company do I work for?", "--type", "FACT")[0]
    assert first["content"] == "User works as a product manager at Acme Robotics"


def test_a_plan_is_kept_until_a_few_days_after_its_day(cli, home, monkeypatch):
    # said on Thursday 2026-11-26 (SOLOQUEUE_NOW); next week is 2026-12-03
    say(cli, "plans", "Next week we plan to migrate to k8s.", "明天要去北京")
    night(cli, monkeypatch, "2026-11-27T02:00:00Z")
    plans = {m["content"]: m for m in cli.json("memory", "list", "--type", "FACT")}
    k8s = plans["Plan for 2026-12-03: Next week we plan to migrate to k8s"]
    beijing = plans["计划（2026-11-27）：明天要去北京"]
    assert k8s["expires_at"] == "2026-12-07T00:00:00.000Z"
    assert beijing["expires_at"] == "2026-12-01T00:00:00.000Z"
    night(cli, monkeypatch, "2026-12-02T00:00:00Z")
    assert set(listed(cli)) == {k8s["content"]}
    night(cli, monkeypatch, "2026-12-08T00:00:00Z")
    assert listed(cli) == {}


def test_a_day_of_the_month_dates_a_plan_gone_after_it(cli, monkeypatch):
    """ "friday the 11th", 3 号: the next such day (said on Thursday 2026-11-26). What
    the user asks the agent to act on ("…, can you put it in the calendar") is a plan
    of its day, without the request, and no memory that outlives the day."""
    said = [
        "We're having team lunch friday the 11th at Saltimporten.",
        "我们 3 号要发版",
        "also team lunch on the 4th at Noma, can you put it in the studio calendar at 12",
    ]
    say(cli, "lunch", *said)
    night(cli, monkeypatch, "2026-11-26T23:00:00Z")
    assert set(listed(cli)) == {
        "Plan for 2026-12-11: We're having team lunch friday the 11th at Saltimporten",
        "计划（2026-12-03）：我们 3 号要发版",
        "Plan for 2026-12-04: Team lunch on the 4th at Noma",
    }
    night(cli, monkeypatch, "2026-12-10T23:00:00Z")
    assert set(listed(cli)) == {
        "Plan for 2026-12-11: We're having team lunch friday the 11th at Saltimporten"
    }
    night(cli, monkeypatch, "2026-12-15T23:00:00Z")
    assert listed(cli) == {}


def test_a_reminder_asked_for_a_day_is_a_plan_of_that_day(cli, monkeypatch):
    """ "remind me" / 提醒我 names what the user will do, as "I'm going to" does: with
    a coming day it is a plan gone after that day (said on Thursday 2026-11-26), not a
    fact kept for a month; someone else's reminder, or one with no day, is no plan."""
    said = [
        "Also Monday 2pm sponsor call with Northwind, remind me to have the numbers ready",
        "提醒我周六给妈妈打电话",
        "他提醒我周五别上线",
        "My dog is called Rex, remind me to feed him",
    ]
    say(cli, "reminders", *said)
    night(cli, monkeypatch, "2026-11-26T23:00:00Z")
    plans = {c for c in listed(cli) if c.startswith(("Plan for", "计划"))}
    assert plans == {
        "Plan for 2026-11-30: Monday 2pm sponsor call with Northwind, remind User to have "
        "the numbers ready",
        "计划（2026-11-28）：提醒用户周六给妈妈打电话",
    }
    night(cli, monkeypatch, "2026-12-04T23:00:00Z")
    assert not {c for c in listed(cli) if "sponsor" in c or "妈妈" in c}
    assert {"他提醒用户周五别上线", "User's dog is called Rex, remind User to feed him"} <= set(
        listed(cli)
    )


def test_a_statement_followed_by_a_request_is_a_memory_of_its_own(cli, monkeypatch):
    """What the user states before asking the agent to act on it is their statement,
    in their words; the request is in no memory, and a request alone gives none."""
    said = [
        "My dog is called Rex, could you remember that?",
        "I moved to Berlin, can you update my address?",
        "I'm vegetarian, please keep that in mind when you suggest recipes.",
        "嗯，我们的 staging 在 10.0.3.5，麻烦记一下",
        "我对花生过敏，点餐的时候注意一下好吗？",
        "帮我记一下",
        "could you remember that?",
    ]
    say(cli, "asked", *said)
    night(cli, monkeypatch, "2026-11-26T23:00:00Z")
    memories = listed(cli)
    assert set(memories) == {
        "User's dog is called Rex",
        "User moved to Berlin",
        "User is vegetarian",
        "我们的 staging 在 10.0.3.5",
        "用户对花生过敏",
    }
    keys = {(m["subject"], m["predicate"]) for m in memories.values()}
    assert {("rex", "pet"), ("user", "city"), ("user", "diet"), ("user", "allergy")} <= keys
    assert recalled(cli, "Where do I live?")[0]["content"] == "User moved to Berlin"


def test_a_proposal_asking_agreement_is_no_statement(cli, monkeypatch):
    """A bare "好吗" / "可以吗" asks whether what comes before is agreed: a proposal,
    no memory. 请求 opens no request: the sentence is one memory."""
    say(cli, "asked", "我们周五发版，好吗？", "我想把端口改成 8080，可以吗？",
        "超时配置改了，请求超时改成 30 秒")  # fmt: skip
    night(cli, monkeypatch, "2026-11-26T23:00:00Z")
    assert set(listed(cli)) == {"超时配置改了，请求超时改成 30 秒"}


def test_a_city_at_the_end_of_an_introduction_is_the_users_city(cli, monkeypatch):
    """ "…, based in Chengdu", "…，常驻成都": the sentence keyed on the city, kept
    until a move supersedes it, not a fact's month."""
    say(
        cli,
        "intro",
        "Morning! Marcus here. I do localization engineering for indie game studios,"
        " freelance, based in Chengdu.",
    )
    forty_nights(cli, monkeypatch, every=10)
    intro = "User does localization engineering for indie game studios, freelance, based in"
    intro += " Chengdu"
    assert listed(cli)[intro]["predicate"] == "city"
    assert recalled(cli, "我住在哪个城市？")[0]["content"] == intro
    say(cli, "move", "我是自由译者，常驻上海")
    night(cli, monkeypatch, "2027-01-06T23:00:00Z")
    assert intro not in listed(cli)
    assert listed(cli)["用户是自由译者，常驻上海"]["predicate"] == "city"


def test_who_the_user_is_outlasts_a_facts_month(cli, monkeypatch):
    """A fact keyed on who the user is (city, job, pet …: ``vocabulary.PERSONAL``) is
    kept until a statement of the same key replaces it; another fact, a month."""
    say(cli, "intro", "I live in Chengdu.", "The staging cluster has 12 nodes.")
    forty_nights(cli, monkeypatch, every=5)
    assert set(listed(cli)) == {"User lives in Chengdu"}
    assert recalled(cli, "我住在哪个城市？")[0]["content"] == "User lives in Chengdu"
    say(cli, "move", "我搬到柏林了")
    night(cli, monkeypatch, "2027-01-06T23:00:00Z")
    assert set(listed(cli)) == {"用户搬到柏林了"}


def test_a_weekday_naming_a_recurring_thing_is_no_plans_day(cli, monkeypatch):
    """ "the Thursday freeze", "our Friday standup", "每周四", "周四的发布冻结" name a
    recurring thing, not a day: what is said of them is no plan expiring after it;
    "on Thursday", "周五要去…", "下周四" still date a plan."""
    say(cli, "week", "We'll skip our Friday standup from now on.",
        "We're moving the Monday meeting to 11.", "我们每周四要开周会",
        "我们要取消周四的发布冻结", "On Thursday we will migrate the database.",
        "我周五要去医院复查", "下周四要迁移日志集群")  # fmt: skip
    night(cli, monkeypatch, "2026-11-26T23:00:00Z")
    current = listed(cli)
    assert {
        "We'll skip our Friday standup from now on",
        "We're moving the Monday meeting to 11",
        "我们每周四要开周会",
        "我们要取消周四的发布冻结",
    } <= set(current)
    # said on Thursday 2026-11-26 (SOLOQUEUE_NOW)
    assert {m for m in current if m.startswith(("Plan", "计划"))} == {
        "Plan for 2026-11-26: On Thursday we will migrate the database",
        "计划（2026-11-27）：用户周五要去医院复查",
        "计划（2026-12-03）：下周四要迁移日志集群",
    }


def test_two_plans_of_one_day_are_not_near_duplicates(cli, monkeypatch):
    """Dedup counts a plan's day as one keyword, not its generated prefix's words: with
    "Plan for 2026-11-26:" the two plans below share 11 of 13 keywords (0.846, above
    dedup's 0.8) and one superseded the other; by what was said and the day, 7 of 9."""
    at(monkeypatch, "2026-11-23T09:00:00Z")
    say(cli, "monday", "On Thursday we will migrate the database.",
        "On Thursday we will migrate the cache.")  # fmt: skip
    night(cli, monkeypatch, "2026-11-23T23:00:00Z")
    assert set(listed(cli)) == {
        "Plan for 2026-11-26: On Thursday we will migrate the database",
        "Plan for 2026-11-26: On Thursday we will migrate the cache",
    }


def test_dropping_a_recurring_rule_supersedes_it_and_is_no_plan(cli, monkeypatch):
    """Dropping "the Thursday freeze" reverses the rule naming it (the value dropped,
    Thursday, and the freeze shared): the rule goes, and the reversal is no plan: it
    stays past next Thursday."""
    on_two_days(
        cli,
        monkeypatch,
        ["one team rule: no merges to main after Thursday 18:00, that's our build freeze"],
        ["we're dropping the Thursday freeze. main is open all week"],
    )
    night(cli, monkeypatch, "2026-12-20T23:00:00Z")
    (current,) = [m for m in listed(cli).values() if "Thursday" in m["content"]]
    assert current["content"] == "We're dropping the Thursday freeze"
    history = cli.json("memory", "history", current["id"])
    assert "after Thursday 18:00" in history[0]["content"]
    (first, *_) = recalled(cli, "Can I merge to main on a Thursday evening?")
    assert first["content"] == current["content"]


def test_a_prohibition_whose_time_scope_comes_first_is_a_standing_rule(cli, monkeypatch):
    """A weekday, the weekend or the night said before a prohibition scopes a standing
    rule, as it does after one: each is a RULE in the user's words that outlives the
    weekend, none a plan; a habit ("周末都要值班") is no plan either, while "这周末" and a
    weekday's intention still date one."""
    say(cli, "rules", "周五不要上线。", "以后周五都不要往生产环境发布。", "周末不安排发货。",
        "每周五不发版。", "晚上别打电话给客户。", "Fridays are no-deploy days.",
        "No pickups on weekends.", "周末都要值班", "这周末要加班", "周五要去医院复查")  # fmt: skip
    night(cli, monkeypatch, "2026-11-26T23:00:00Z")
    assert {m for m in listed(cli) if m.startswith("计划")} == {
        "计划（2026-11-27）：周五要去医院复查",
        "计划（2026-11-28）：这周末要加班",
    }
    night(cli, monkeypatch, "2026-12-10T23:00:00Z")
    assert "周末都要值班" in listed(cli)
    assert set(listed(cli, "--type", "RULE")) == {
        "周五不要上线",
        "周五都不要往生产环境发布",
        "周末不安排发货",
        "每周五不发版",
        "晚上别打电话给客户",
        "Fridays are no-deploy days",
        "No pickups on weekends",
    }
    assert not [m for m in listed(cli) if m.startswith(("Plan", "计划"))]  # the plan expired


def test_a_changed_weekend_rule_supersedes_the_rule_and_ranks_first(cli, monkeypatch):
    """The rule "周末不安排发货" is kept for good, so the change said days later
    supersedes it, and a question about a Saturday finds the change first."""
    on_two_days(
        cli,
        monkeypatch,
        ["规矩：周末不安排发货，仓库没人"],
        ["周末发货的规矩改了，周六可以发货了，周日还是不行"],
    )
    night(cli, monkeypatch, "2026-12-20T23:00:00Z")
    (current,) = [m for m in listed(cli).values() if "发货" in m["content"]]
    assert current["content"] == "周末发货的规矩改了，周六可以发货了，周日还是不行"
    history = cli.json("memory", "history", current["id"])
    assert history[0]["content"] == "规矩：周末不安排发货，仓库没人"
    (first, *_) = recalled(cli, "周六可以发货吗")
    assert first["content"] == current["content"]


def test_behaviour_rules_outlive_a_day_task_rules_do_not(cli, monkeypatch):
    say(cli, "rules", "不要直接改主分支。Never log tokens. 这次先别跑集成测试")
    night(cli, monkeypatch, "2026-11-26T23:00:00Z")
    night(cli, monkeypatch, "2026-11-28T23:00:00Z")
    assert set(listed(cli, "--type", "RULE")) == {"不要直接改主分支", "Never log tokens"}


def test_config_predicates_join_two_names_of_one_attribute(cli, home, monkeypatch):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text('[predicates]\n"终端" = "terminal"\n', encoding="utf-8")
    say(cli, "s1", "我的终端是 iTerm2")
    night(cli, monkeypatch, "2026-11-26T23:00:00Z")
    say(cli, "s2", "My terminal is Ghostty.")
    night(cli, monkeypatch, "2026-11-27T23:00:00Z")
    (terminal,) = [m for m in listed(cli).values() if m["predicate"] == "terminal"]
    assert terminal["content"] == "User's terminal is Ghostty"


def test_a_predicates_setting_that_is_not_a_table_is_refused(cli, home):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text('predicates = "editor"\n', encoding="utf-8")
    result = cli("consolidate")
    assert result.exit_code == EX_DATAERR
    assert 'predicates must be a table of "alias" = "canonical"' in result.stderr
    (home / "config.toml").write_text('[predicates]\n"ide" = 3\n', encoding="utf-8")
    result = cli("consolidate")
    assert result.exit_code == EX_DATAERR and "predicates.ide" in result.stderr


def test_an_openai_tool_message_that_failed_is_an_error_and_a_failed_episode(cli, monkeypatch):
    call = {"id": "c1", "type": "function", "function": {"name": "pytest", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "run the tests"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": "collected 3 items\nTraceback (most recent call last):\n  ...\n"
            "ModuleNotFoundError: No module named 'distutils'\nexit code 1",
        },
    ]
    cli.ok("log", "-s", "tools", input=json.dumps(messages))
    night(cli, monkeypatch, "2026-11-26T23:00:00Z")
    (error,) = cli.json("memory", "list", "--type", "ERROR")
    # what went wrong: the traceback's exception, not the output's first line
    assert error["content"] == "pytest failed: ModuleNotFoundError: No module named 'distutils'"
    (episode,) = cli.json("episode", "list")
    assert episode["outcome"] == "failed"
    assert episode["action_nodes"][0]["success"] is False


def tool_answers(cli, *contents: str) -> None:
    """One session of a ``sms_send`` call per content, each answered by it."""
    messages: list[dict] = [{"role": "user", "content": "send the reminders"}]
    for n, content in enumerate(contents):
        call = {
            "id": f"c{n}",
            "type": "function",
            "function": {"name": "sms_send", "arguments": "{}"},
        }
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": content},
        ]
    cli.ok("log", "-s", "tools", input=json.dumps(messages))


def test_a_json_answer_is_an_error_when_its_code_says_it_failed(cli, monkeypatch):
    """Only the answer whose code names an error is one; those saying they succeeded
    ("OK", "CONFIRMED", errcode 0, a list of per-number statuses) are not."""
    failure = '{"Code":"isv.SMS_SIGNATURE_ILLEGAL","Message":"该账号下找不到对应签名"}'
    tool_answers(
        cli,
        '{"Code":"OK","Message":"OK","BizId":"9001"}',
        '{"status":"CONFIRMED","error":null}',
        '{"errcode":0,"errmsg":"ok"}',
        '{"Response":{"SendStatusSet":[{"Code":"Ok","Message":"send success"}]}}',
        failure,
    )
    night(cli, monkeypatch, "2026-11-26T23:00:00Z")
    (error,) = cli.json("memory", "list", "--type", "ERROR")
    assert error["content"] == f"sms_send failed: {failure}"  # the error's own words


def test_a_tool_result_that_mentions_errors_is_still_a_success(cli, monkeypatch):
    call = {"id": "c1", "type": "function", "function": {"name": "lint", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "lint it"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "All checks passed: 0 errors."},
    ]
    cli.ok("log", "-s", "tools", input=json.dumps(messages))
    night(cli, monkeypatch, "2026-11-26T23:00:00Z")
    assert cli.json("memory", "list", "--type", "ERROR") == []
    assert cli.json("episode", "list")[0]["outcome"] == "success"


ANTHROPIC = [
    {"role": "user", "content": [{"type": "text", "text": "我的时区是东八区，帮我看看磁盘"}]},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Checking the disk."},
            {"type": "tool_use", "id": "tu_1", "name": "bash", "input": {"cmd": "df -h /srv"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "tu_1",
                "content": [{"type": "text", "text": "df: /srv: No such file or directory"}],
                "is_error": True,
            }
        ],
    },
]


def test_anthropic_blocks_are_parsed_indexed_and_exported_for_each_api(cli):
    cli.ok("log", "-s", "claude", input=json.dumps(ANTHROPIC))
    (call,) = cli.json("trace", "bash")
    assert (call["turn_index"], call["content"]) == (1, "Checking the disk.")
    assert call["tool_calls"] == [{"id": "tu_1", "name": "bash", "input": {"cmd": "df -h /srv"}}]
    (result,) = cli.json("trace", "No such file")
    assert (result["turn_index"], result["content"]) == (2, "")
    assert result["tool_results"] == [
        {"tool_use_id": "tu_1", "content": "df: /srv: No such file or directory", "is_error": True}
    ]
    exported = json.loads(cli.ok("session", "export", "claude", "--as", "anthropic").stdout)
    assert exported["messages"][1] == ANTHROPIC[1]  # the tool use as it was sent
    openai = json.loads(cli.ok("session", "export", "claude", "--as", "openai").stdout)
    assert openai[1]["tool_calls"][0]["function"]["name"] == "bash"
    assert openai[2] == {
        "role": "tool",
        "tool_call_id": "tu_1",
        "content": "df: /srv: No such file or directory",
    }


def test_anthropic_blocks_feed_extraction_and_the_episode(cli, monkeypatch):
    cli.ok("log", "-s", "claude", input=json.dumps(ANTHROPIC))
    night(cli, monkeypatch, "2026-11-26T23:00:00Z")
    assert set(listed(cli)) == {
        "用户的时区是东八区",
        "bash failed: df: /srv: No such file or directory",
    }
    (episode,) = cli.json("episode", "list")
    assert episode["tools_used"] == ["bash"] and episode["outcome"] == "failed"


def said_and_consolidated(cli, monkeypatch, *texts: str) -> dict[str, dict]:
    say(cli, "s1", *texts)
    night(cli, monkeypatch, "2026-11-26T23:00:00Z")
    return listed(cli)


def test_what_a_part_is_built_with_names_the_attribute_its_value_is(cli, monkeypatch):
    memories = said_and_consolidated(cli, monkeypatch, "The project is built with Next.js")
    built = memories["The project is built with Next.js"]
    assert (built["subject"], built["predicate"]) == ("project", "framework")


def test_a_setting_said_in_english_and_chinese_is_one_attribute(cli, monkeypatch):
    on_two_days(cli, monkeypatch, ["The request timeout is 30 seconds"], ["请求超时是 60 秒"])
    (current,) = listed(cli).values()
    assert current["content"] == "请求超时是 60 秒"
    assert (current["subject"], current["predicate"]) == ("user", "timeout")


def test_a_sentence_about_this_named_project_is_kept(cli, monkeypatch):
    said = "This shop project deploys to Fly.io and uses PostgreSQL 16."
    memories = said_and_consolidated(cli, monkeypatch, said)
    assert memories["This shop project deploys to Fly.io and uses PostgreSQL 16"]["type"] == "FACT"


def test_how_the_user_would_like_things_done_is_a_preference(cli, monkeypatch):
    memories = said_and_consolidated(
        cli, monkeypatch, "I would like posts to use British spelling", "I'd like a summary of this"
    )
    assert {c: m["type"] for c, m in memories.items()} == {
        "User would like posts to use British spelling": "PREFERENCE"
    }


def test_tools_named_without_a_key_are_found_by_their_attribute_in_chinese(cli, monkeypatch):
    said = "Our whole org uses Datadog for metrics and Opsgenie for paging."
    memories = said_and_consolidated(cli, monkeypatch, said)
    assert set(memories[said.rstrip(".")]["tags"]) >= {"monitoring", "监控", "on-call", "值班"}
    assert recalled(cli, "值班用什么工具？", "--type", "FACT")[0]["content"] == said.rstrip(".")


def test_a_city_said_in_chinese_answers_an_english_question_about_the_city(cli, monkeypatch):
    """A fact naming a known city is tagged city/城市 (vocabulary.named), so "which
    city" finds "我在成都" though the two share no word."""
    say(cli, "monday", "我在成都，最近热死了，办公室空调还坏了。")
    night(cli, monkeypatch, "2026-11-26T23:00:00Z")
    (memory,) = [m for m in listed(cli).values() if "成都" in m["content"]]
    assert set(memory["tags"]) >= {"city", "城市"}
    hits = recalled(cli, "Which city am I based in?", "--channels", "memories")
    assert hits[0]["content"] == memory["content"]


def test_a_keyed_fact_is_also_tagged_with_the_city_it_names(cli, monkeypatch):
    """Keyed on the job, "我是王磊，在成都一家游戏公司做客户端开发" still tells the
    city: its tags hold the key's attribute and the city's, so an English "which city"
    question finds it."""
    memories = said_and_consolidated(cli, monkeypatch, "我是王磊，在成都一家游戏公司做客户端开发。")
    (memory,) = [m for m in memories.values() if "成都" in m["content"]]
    assert memory["predicate"] == "job"
    assert set(memory["tags"]) >= {"job", "city", "城市"}
    hits = recalled(cli, "Which city am I based in?", "--channels", "memories")
    assert hits[0]["content"] == memory["content"]


def test_a_change_settled_with_ba_supersedes_the_value_it_changes(cli, monkeypatch):
    """吧 closing a change ("改成提前 24 小时吧") is the user settling the new value, not
    a reaction to the moment: it becomes a memory, and it replaces the one stating 48
    小时 on its topic, which it names as given up."""
    on_two_days(cli, monkeypatch, ["预约提醒短信我们提前 48 小时发，走阿里云短信。"],
                ["48 小时太早了客户都忘了，改成提前 24 小时吧"])  # fmt: skip
    current = listed(cli)
    assert "预约提醒短信我们提前 48 小时发，走阿里云短信" not in current
    new = current["48 小时太早了客户都忘了，改成提前 24 小时吧"]
    history = cli.json("memory", "history", new["id"])
    assert history[0]["content"] == "预约提醒短信我们提前 48 小时发，走阿里云短信"


def test_a_task_going_to_someone_from_a_time_on_hands_over_only_what_names_who_left(
    cli, monkeypatch
):
    """ "下周起报关找郑子健" takes over what Amy did, from a time on: the memory naming Amy
    for 报关 goes. An emoji before a space ends a sentence as a full stop does, so the
    dinner said before it is a memory of its own and stays."""
    said = "昨晚 team dinner 又是烧鹅，我吃素的只能吃白饭😂 说正事，报关那边我们一直找 Amy Lau。"
    on_two_days(cli, monkeypatch, [said], ["还有 Amy 离职了，下周起报关找郑子健，新来的"])
    current = listed(cli)
    assert "昨晚 team dinner 又是烧鹅，用户吃素的只能吃白饭" in current
    new = next(m for m in current.values() if "郑子健" in m["content"])
    history = cli.json("memory", "history", new["id"])
    assert history[0]["content"] == "说正事，报关那边我们一直找 Amy Lau"


def test_a_rule_said_in_both_languages_in_one_message_is_one_memory(cli, monkeypatch):
    """The user restates a rule in the other language in the same breath: one memory,
    the sentence as said (the first statement first), found by a question in either
    language; a second consolidate changes nothing. Two rules said in two languages
    stay two."""
    say(
        cli,
        "s1",
        "btw rule: 周末不安排提柜，no pickups on weekends",
        "周末不安排会议，no deploys on Fridays",
    )
    night(cli, monkeypatch, "2026-11-26T23:00:00Z")
    memories = listed(cli)
    assert set(memories) == {
        "Rule: 周末不安排提柜，no pickups on weekends",
        "周末不安排会议",
        "No deploys on Fridays",
    }
    rule = memories["Rule: 周末不安排提柜，no pickups on weekends"]
    assert rule["type"] == "RULE"
    for question in ("周末可以提柜吗？", "Can we do pickups on weekends?"):
        assert recalled(cli, question, "--channels", "memories")[0]["id"] == rule["id"]
    again = consolidate(cli)
    assert again["dedup"]["superseded"] == 0 and set(listed(cli)) == set(memories)


def test_a_plan_moved_to_another_day_is_a_correction_of_the_day_it_had(cli, monkeypatch):
    """ "被推迟到 12/22" moves the plan's day: the day it had (12/18, named in the same
    sentence) is replaced, the turns stating it are stale, and the question about the
    day gets the new one first."""
    on_two_days(cli, monkeypatch, ["年会定在 12/18，在南山那家酒店办。"],
                ["酒店那边说 12/18 已经订满了，年会被推迟到 12/22"])  # fmt: skip
    hits = recalled(cli, "年会是哪天办？")
    moved = next(h for h in hits if h["kind"] == "memory")
    assert "12/22" in hits[0]["content"] and "12/22" in moved["content"]
    old = next(h for h in hits if h["content"] == "年会定在 12/18，在南山那家酒店办。")
    assert old["superseded_by"] == moved["id"]
    assert hits.index(old) > hits.index(moved)
