"""The CC-CEDICT glosses query translation keeps (text/dictionary.py)."""

from __future__ import annotations

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
