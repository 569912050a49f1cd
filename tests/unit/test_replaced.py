"""What a statement names as the value it gives up (``text.replaced``): the earlier of
two values of one kind around a change, and never a range or a list."""

from __future__ import annotations

import pytest

from soloqueue_mem.storage.postgres.schema import MIGRATIONS as POSTGRES_STEPS
from soloqueue_mem.storage.sqlite.schema_memory import MIGRATIONS as SQLITE_STEPS
from soloqueue_mem.text.handover import aliases
from soloqueue_mem.text.replaced import RULE_VERSION, replaced_value


@pytest.mark.parametrize(
    ("said", "given_up"),
    [
        ("48 小时太早了客户都忘了，改成提前 24 小时吧", "48 小时"),
        ("Standup moved from 10:00 to 10:15", "10:00"),
        ("从 Python 3.10 升级到 3.12", "3.10"),
        ("端口 8080 改成 8443", "8080"),
        ("The rate changed from 0.12 to 0.14 USD per word", "0.12"),
        ("期中不是28号，是6月2号", "28号"),  # 不是 … 是, as before
        ("ETD 10/27 那条船满了，被 roll 到 10/31", "10/27"),  # moved to another day
        ("The review was on 3:30 but got pushed to 4:15", "3:30"),
    ],
)
def test_the_earlier_of_two_values_of_one_kind_around_a_change_is_given_up(said, given_up):
    assert replaced_value(said) == given_up


@pytest.mark.parametrize(
    "said",
    [
        "上班时间 9 点到 18 点",  # a range, no change
        "Actually the window is 10:00 to 12:00",  # the cue is not where the range starts
        "会议改到 3 点，4 点结束",  # nothing changes between the two
        "我们 2 个人把会议改到 10 点",  # people and hours are not one kind
        "The release moved to 3.12",  # one value: nothing named as given up
    ],
)
def test_a_range_a_list_or_values_of_other_kinds_name_nothing(said):
    assert replaced_value(said) == ""


@pytest.mark.parametrize(
    ("said", "given_up"),
    [
        ("also the trailer: not -16, it's -14 LUFS, I misread their spec", "-16"),
        ("The review is not Tuesday but Wednesday", "Tuesday"),
        ("Not Postgres, it is MySQL now", "Postgres"),
    ],
)
def test_not_x_its_y_gives_up_x_as_buzhi_x_shi_y_does(said, given_up):
    """The English of "不是28号，是6月2号"."""
    assert replaced_value(said) == given_up


@pytest.mark.parametrize(
    ("said", "given_up"),
    [
        ("The consult fee is $175, not $150 — I updated the site", "150"),
        ("They land on 6 November, not 3 November. Can you move everything?", "3 November"),
        ("Correction: rate limit is now 200 requests per minute, not 100.", "100"),
        ("还有，我记错了，Flutter 版本其实是 3.22，不是 3.19。", "3.19"),
        ("对，5673，不是 5672。", "5672"),
        ("等下 是 19.8 美金一公斤，而不是 21.5", "21.5"),
    ],
)
def test_a_number_said_again_gives_up_the_one_after_not(said, given_up):
    """A number said again, "$175, not $150", is "not $150, it's $175" said the other
    way round; in Chinese "3.22，不是 3.19" is 不是X，是Y reversed. The later number is
    the one given up."""
    assert replaced_value(said) == given_up


@pytest.mark.parametrize(
    "said",
    [
        "I ran 40 km, not bad for me",  # no number after "not"
        "we do code review in Gerrit, not GitHub PRs",
    ],
)
def test_a_number_and_not_before_a_word_or_another_kind_gives_up_nothing(said):
    assert replaced_value(said) == ""


@pytest.mark.parametrize(
    "said",
    [
        "not only Redis but also Kafka",  # a plain word is no value
        "it's not here, it's there",
        "We do not use it, but we could",
        "I'm not 100% sure, but it's Friday",
    ],
)
def test_not_before_a_plain_word_gives_up_nothing(said):
    assert replaced_value(said) == ""


@pytest.mark.parametrize(
    ("said", "given_up"),
    [
        ("One mail from Mirela: the Act 2 deadline moved from June 26 to July 3", "June 26"),
        ("Season 3 premiere moved from April 7 to April 21.", "April 7"),
        ("Change of plan: the audit is on March 14 instead of March 12", "March 12"),
        ("They land on 6 November, not 3 November.", "3 November"),
        ("The launch moved from Sept. 5 to Sept. 19", "Sept. 5"),
    ],
)
def test_a_date_with_the_months_name_is_given_up_whole(said, given_up):
    """A date with a month's name is one value: its day alone is not ("from June 26 to
    July 3" named nothing, "instead of March 12" named March)."""
    assert replaced_value(said) == given_up


@pytest.mark.parametrize(
    "said",
    [
        "Actually the festival runs from June 26 to June 30",  # a range: no cue before it
        "We moved the launch from 26 June to June 26",  # one day written two ways
    ],
)
def test_a_range_of_dates_or_one_day_said_twice_gives_up_nothing(said):
    assert replaced_value(said) == ""


@pytest.mark.parametrize(
    "said",
    [
        "结论先给你：1) BOM 目标改为 ¥135；2) EVT build 推到 8月27日；3) PR 改为一个人 approve",
        "整理成表：1) 年底前完成差距分析；2) 成品暂存改到旅顺新港冷库",
        "两件事：1、端口改成 8443 2、日志级别调到 debug",
    ],
)
def test_the_numbers_of_a_lists_items_are_no_values(said):
    """A list's "1)" and "2)" are no values of one kind around a change."""
    assert replaced_value(said) == ""


def test_a_list_item_still_names_the_value_it_changes():
    said = "两件事：1) 端口从 8080 改成 8443；2) 日志级别不变"
    assert replaced_value(said) == "8080"


def test_each_version_of_the_rule_has_a_schema_step_on_each_back_end():
    """Expiry reads the value stored with a memory: a new version of the rule comes
    with the step deriving the column again on both back ends (m017 and m018 …)."""
    for steps in (SQLITE_STEPS, POSTGRES_STEPS):
        deriving = [s for s in steps if callable(s) and "replaced_value" in s.__name__]
        assert len(deriving) == RULE_VERSION


@pytest.mark.parametrize(
    ("said", "who_left"),
    [
        ("阿杰下周去漳州那边开新项目了，同安的收尾交给蔡雨婷", "阿杰"),  # goes elsewhere
        ("然后测试对接人换了，以后找小林，老周调去做网关了", "老周"),
        ("Dana moved to their marketing team, Felix took over as PM", "Dana"),
        ("阿杰下周调去做新品线了，以后 OTA 的事找小林", "阿杰"),  # a time before the verb
        # off to other work, or away for a while, after the one taking over
        ("主图以后交给 Kelly 吧，阿杰去专心做视频", "阿杰"),
        ("好的，主图设计从阿杰交接给 Kelly，阿杰转做视频。", "阿杰"),
        ("网关交给小林，老周下个月借调去总部", "老周"),
        ("Ciarán's gone on secondment so Niamh Gallagher is supervising Heron", "Ciarán"),
        ("Dana is moving to work on billing, Felix takes over the API", "Dana"),
        # away on leave, the new lead said as 由X带
        ("Leo 下周开始休陪产假，install 改由陈默带", "Leo"),
        ("小王下个月休产假，前台由小李负责", "小王"),
    ],
)
def test_a_handover_gives_up_the_one_who_left(said, who_left):
    assert replaced_value(said) == who_left


@pytest.mark.parametrize(
    "said",
    [
        "阿杰下周去漳州那边开新项目了",  # nobody takes over: no role is named
        "下周去漳州那边看风电场了，资料交给蔡雨婷",  # nobody leaves
        "阿杰去专心做视频",  # nobody takes over
        "小王下个月休产假",  # nobody takes over
        "Dana is going to work on billing, Felix is leading the API",  # a plan: nobody leaves
    ],
)
def test_going_elsewhere_without_a_handover_names_no_one(said):
    assert replaced_value(said) == ""


@pytest.mark.parametrize(
    ("name", "said", "other"),
    [
        ("阿杰", "同安项目现场负责人是陈杰（阿杰），对接都走他", "陈杰"),
        ("陈杰", "同安项目现场负责人是陈杰（阿杰），对接都走他", "阿杰"),
        ("Bob", "Our site lead is Robert (Bob), ping him first", "Robert"),
        ("Robert", "Our site lead is Robert (Bob), ping him first", "Bob"),
    ],
)
def test_a_name_and_its_alias_in_parentheses_are_one_person(name, said, other):
    assert aliases(name, [said, "阿杰说过（下周见）"]) == {other}


@pytest.mark.parametrize(
    ("said", "given_up"),
    [
        ("以后排班别找小周了哈，她下个月休产假，阿梅接手前台排班", "小周"),
        ("以后别再找老王，采购归蒋莉", "老王"),
        ("不要用欧元了，改美元", "欧元"),
        ("我们不再用 Jenkins 了", "Jenkins"),  # before 了, not "Jenkins 了"
    ],
)
def test_a_request_to_stop_going_to_someone_or_using_something_gives_them_up(said, given_up):
    assert replaced_value(said) == given_up


@pytest.mark.parametrize(
    "said",
    [
        "别用红绿区分",  # a rule: nothing was used before
        "别找我了",  # a pronoun is no value
        "不用找了",
        "不再用了",
    ],
)
def test_a_prohibition_or_a_pronoun_gives_up_nothing(said):
    assert replaced_value(said) == ""


@pytest.mark.parametrize(
    ("said", "taken_back"),
    [
        ("EVT 的样机记得寄东莞松山湖那个厂……哦不是，寄长安镇那个厂，组装在长安", "东莞松山湖"),
        ("周会定在周二……哦不是，周三", "周二"),  # 二 alone is part of a word
        ("买了三斤苹果……啊不是，三斤梨", "苹果"),
        ("Send it to Dana, no wait, send it to Felix instead", "Dana"),
    ],
)
def test_a_speaker_repairing_their_words_gives_up_what_the_repeat_says_differently(
    said, taken_back
):
    assert replaced_value(said) == taken_back


@pytest.mark.parametrize(
    "said",
    [
        "No wait, I got the churn window wrong",  # nothing before the repair
        "我刚才说的不对……哦不是，没事",  # nothing said again
        "我不是，我是说这个方案太贵",  # 不是 with no trailing-off or interjection before it
    ],
)
def test_a_repair_repeating_nothing_names_nothing(said):
    assert replaced_value(said) == ""
