"""The bilingual table (text/bilingual.py) keeps its own rules: whole words on both
sides, no lone Chinese character but an animal's own name, and twins only across
languages."""

from __future__ import annotations

from soloqueue_mem.text.bilingual import (
    CATEGORIES,
    MAX_TRANSLATIONS,
    PETS,
    translated,
    translations,
)
from soloqueue_mem.text.query import QueryTerm


def test_every_row_pairs_single_english_words_with_chinese_words_of_two_characters():
    lone = set()
    for rows in CATEGORIES:
        for english, chinese in rows:
            assert english and chinese
            assert all(word.isascii() and " " not in word for word in english), english
            assert not any(word.isascii() for word in chinese), chinese
            lone |= {(word, rows is PETS) for word in chinese if len(word) < 2}
    assert lone == {("猫", True), ("狗", True)}  # Chinese names a cat or a dog alone


def test_a_pet_is_found_by_its_kind_or_its_breed_in_the_other_language():
    assert translations("cat")[0] == "猫"
    assert "柯基" in translations("dog")
    assert "dog" in translations("柯基")


def test_a_word_finds_its_twins_in_the_other_language_only():
    assert translations("Allergies") == ("过敏",)
    assert translations("翻译") == ("translate",)  # one English form per stem
    assert translations("the") == ()


def test_a_word_the_table_lists_takes_its_own_row_s_twins_not_a_stem_sharer_s():
    """ "customer" and "customs" share the stem "custom" and not a sense: a word the
    table lists is looked up as written, another by its stem."""
    assert translations("Customer") == ("客户",)
    assert translations("customs") == ("海关", "报关", "清关")
    assert translations("response") == ("回答", "回复")
    assert translations("responsible") == ("负责", "负责人")
    assert translations("allergies") == translations("allergy")  # not listed: its stem


def test_twins_join_their_word_s_group_at_half_its_weight_and_are_bounded():
    terms = [QueryTerm("wedding", 0.8, 3), QueryTerm("结婚", 1.0, 4)]
    # 结婚 and wedding are in the query already: their other twins join, heaviest first
    assert translated(terms) == [QueryTerm("married", 0.5, 4), QueryTerm("婚礼", 0.4, 3)]
    many = [QueryTerm(day, 1.0, n) for n, day in enumerate(["monday", "tuesday", "friday"])]
    assert len(translated(many)) == MAX_TRANSLATIONS


def test_each_word_gets_its_first_twin_before_any_word_gets_a_second():
    """A word with many twins (monday: 周一, 星期一, 礼拜一) does not take the places of
    another word's only twin (daughter: 女儿) when the twins are bounded."""
    words = ["monday", "sunday", "wife", "daughter"]
    twins = [t.text for t in translated([QueryTerm(w, 1.0, n) for n, w in enumerate(words)])]
    assert twins[:4] == ["周一", "周日", "老婆", "女儿"]
    assert len(twins) == MAX_TRANSLATIONS
