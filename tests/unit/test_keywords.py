"""Episode tags: jieba-style TF-IDF keywords of Chinese and English text."""

from __future__ import annotations

import pytest

from soloqueue_mem.text.keywords import keywords
from soloqueue_mem.text.lexicon import Lexicon, open_lexicon


@pytest.fixture(scope="module")
def lexicon(built_lexicon) -> Lexicon:
    return open_lexicon(built_lexicon.parent)


def test_chinese_words_rank_by_count_and_rarity(lexicon):
    text = "数据库连接总是超时。数据库的连接池太小，我们的数据库在北京。"
    found = keywords(text, lambda: lexicon)
    assert found[0] == "数据库"  # three times, and a rarer word than 连接
    assert "我们" not in found and "的" not in found  # stopwords and single characters
    assert all(len(word) > 1 for word in found)


def test_english_needs_no_dictionary():
    def refuse() -> Lexicon:
        raise AssertionError("the dictionary was opened for English text")

    found = keywords("The deploy failed. Deploy again with the staging config.", refuse)
    assert found[:2] == ["deploy", "failed"]
    assert "the" not in found and "with" not in found


def test_the_same_text_gives_the_same_keywords(lexicon):
    text = "用 PostgreSQL 存储会话，连接池大小 20；the pool size matters"
    assert keywords(text, lambda: lexicon) == keywords(text, lambda: lexicon)
    assert len(keywords(text, lambda: lexicon, top=3)) == 3
