"""A correction cue (``text.cue``): a thing moved to another day or time corrects the
day it had; the same verbs moving anything else announce no change; a request to stop
going to someone corrects who does it, a prohibition corrects nothing."""

from __future__ import annotations

import pytest

from soloqueue_mem.text.cue import is_correction


@pytest.mark.parametrize(
    "said",
    [
        "还有新菜单 设计那边海报出不来 推到4月25号上线吧",
        "明白，新菜单上线推迟到 4月25号。",
        "会议延期到 11月3号",
        "年会顺延到下周五",
        "船满了，被 roll 到 10/31",
        "The launch was postponed to Friday",
        "We pushed back to 3pm",
        "The dinner got pushed to the 14th.",
        "The offsite slipped to Nov 12",
        "The call was delayed until tomorrow",
        "Standup is rescheduled to Monday",
    ],
)
def test_a_thing_moved_to_another_day_or_time_is_a_correction(said):
    assert is_correction(said)


@pytest.mark.parametrize(
    "said",
    [
        "代码推到 main 了",  # pushed code: no day
        "I pushed to main before lunch",
        "The desks were pushed to the 11th floor",  # an ordinal that is no day
        "The feature is rolled out to 3 regions",
        "We left early and were delayed to avoid traffic",
        "火势蔓延到下游",  # 延到 is no move of a day
        "他今天提前到了",  # arrived early
    ],
)
def test_the_same_verbs_moving_anything_else_are_no_correction(said):
    assert not is_correction(said)


@pytest.mark.parametrize(
    "said",
    [
        "ok so upload the stems, we're moving to Frame.io for everything",
        "We're switching to Postgres next sprint",
        "the team is migrating to Kubernetes",
        "数据库迁移到 PG 了",
    ],
)
def test_a_change_said_as_it_happens_is_a_correction(said):
    """The -ing forms of the change verbs, and 迁移到 as "migrating to"."""
    assert is_correction(said)


@pytest.mark.parametrize(
    "said",
    ["以后排班别找小周了，阿梅接手", "以后别再找老王", "报表不要再用 pdf", "不要用欧元了，改美元"],
)
def test_a_request_to_stop_going_to_someone_or_using_something_is_a_correction(said):
    assert is_correction(said)


@pytest.mark.parametrize("said", ["别用红绿区分", "短信里别用太多感叹号", "不要用动态内存分配"])
def test_a_prohibition_is_no_correction(said):
    assert not is_correction(said)


@pytest.mark.parametrize(
    "said",
    [
        "寄东莞松山湖那个厂……哦不是，寄长安镇那个厂",
        "会议室订在 3 楼，不是不是，5 楼",
        "At 3pm, no wait, 4pm",
    ],
)
def test_a_speaker_repairing_their_own_words_is_a_correction(said):
    assert is_correction(said)


@pytest.mark.parametrize("said", ["我不是，我是说这个方案太贵", "这是不是，他说的那家店"])
def test_a_plain_not_is_no_repair(said):
    assert not is_correction(said)


@pytest.mark.parametrize(
    "said",
    [
        "Corrected: the OCR upload limit is 40 MB per file.",
        "Trailer target corrected to -14 LUFS integrated.",
        "更正：上传上限是每个文件 40 MB。",  # the Chinese it answers
    ],
)
def test_corrected_is_a_correction_as_geng_zheng_is(said):
    """A changed value announced with "corrected", as 更正 announces one: an agent's
    "Corrected: …" then ranks above what it corrected on a question about the thing."""
    assert is_correction(said)


@pytest.mark.parametrize("said", ["the correct answer is 42", "Is that correct?"])
def test_correct_alone_is_no_correction(said):
    assert not is_correction(said)


@pytest.mark.parametrize(
    "said", ["sorry 打错，是 3月18日 闭展", "刚才写错了，是周三", "我打错了，是 5 号"]
)
def test_a_typo_taken_back_is_a_correction(said):
    """打错/写错 take back what was typed, as 说错了 takes back what was said."""
    assert is_correction(said)


@pytest.mark.parametrize("said", ["我打错电话了", "这个字写错字了也没关系"])
def test_a_wrong_number_dialled_is_no_correction(said):
    assert not is_correction(said)
