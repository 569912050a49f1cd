"""A rules memory is the user's own statement: whatever the user says, every memory the
quick rules keep maps back to what was said by the documented substitutions only
(``lifecycle.own_words``), never a rewrite that can garble ("我们的项目叫 Aurora" once
became "用户的们的项目叫Aurora", filed as a pet)."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from soloqueue_mem.clock import parse_timestamp
from soloqueue_mem.lifecycle.extract import from_text
from soloqueue_mem.lifecycle.own_words import maps_back, own_words
from tests.conftest import NOW

SAID_AT = parse_timestamp(NOW)
FRAGMENTS = st.sampled_from(
    [
        "我们的项目叫 Aurora", "我叫王磊", "在一家游戏公司上班", "我家那只柯基叫 Tofu",
        "TTL 设成 300 秒", "以后回答都用中文", "我们用 Stripe 和支付宝收款", "发布列车每周四发车",
        "我对花生过敏", "老家在东北", "RabbitMQ", "跑在 5673 端口", "我们的数据库是 TiDB",
        "我已经换成 Helix 了", "明天要去北京", "别帮我约会议", "对了", "嗯", "其实",
        "I like Rust", "my editor is vim", "I'm allergic to peanuts", "we switched to MySQL",
        "I don't like tabs", "always answer in English", "btw", "no", "Actually",
        "Next week we plan to migrate to k8s", "He said", "if we use Kafka", "I mean",
        "Our message broker is RabbitMQ", "I'm Alice, the SRE lead", "Priya here",
        "the timeout is 30 seconds", "我 prefer 用 VS Code", "I", "my", "我", "我们", "me",
    ]
)  # fmt: skip
JOINTS = st.sampled_from(["，", "。", ", ", ". ", " ", "；", "！", "? ", "——", "\n", ""])
NOISE = st.text(alphabet="我们的是I my和and 叫is", max_size=8)
TEXTS = st.lists(
    st.tuples(st.one_of(FRAGMENTS, NOISE), JOINTS).map("".join), min_size=1, max_size=6
).map("".join)


@settings(max_examples=100, deadline=None)
@given(TEXTS)
@example("我的 是II，")  # an attribute of only a space: once a KeyError, now a keyless fact
def test_every_rules_memory_maps_back_to_what_was_said(text):
    for draft in from_text(text, SAID_AT):
        assert maps_back(draft.content, text), (draft.content, text)
        assert "用户们" not in draft.content


def test_the_substitutions_are_the_documented_ones():
    assert own_words("我们的项目叫 Aurora") == "我们的项目叫 Aurora"
    assert own_words("我的编辑器是 Helix") == "用户的编辑器是 Helix"
    assert own_words("I'm allergic to peanuts") == "User is allergic to peanuts"
    assert own_words("I really like Rust and my cat likes me") == (
        "User really likes Rust and User's cat likes User"
    )
    assert (
        own_words("I don't like tabs, I've moved on") == "User doesn't like tabs, User has moved on"
    )
    assert own_words("I switched to Helix") == "User switched to Helix"  # no verb list: as said
    # a Chinese character touching an English word ends it
    assert own_words("对了I like Rust，") == "对了User likes Rust，"
