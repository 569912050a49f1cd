"""Weighted query terms: stopwords, search-mode sub-words, weights, the term cap."""

from __future__ import annotations

import sqlite3

import pytest

from soloqueue_mem.text.lexicon import Lexicon
from soloqueue_mem.text.query import (
    CONTEXT_SHARE,
    CONTEXT_WORDS,
    MAX_TERMS,
    QueryTerm,
    coverage,
    fold_context,
    weigh_query,
)


@pytest.fixture(scope="module")
def lexicon(built_lexicon) -> Lexicon:
    return Lexicon(sqlite3.connect(f"file:{built_lexicon}?mode=ro", uri=True))


def texts(terms: list[QueryTerm]) -> list[str]:
    return [t.text for t in terms]


def test_chinese_function_words_are_set_apart(lexicon):
    query = weigh_query("我觉得你会感到我们的猫很可爱吗", lambda: lexicon)
    assert texts(query.terms) == ["猫", "可爱"]
    assert {"我", "觉得", "你", "会", "感到", "我们"} <= set(texts(query.stopwords))


def test_a_query_of_stopwords_only_keeps_them(lexicon):
    assert texts(weigh_query("what is it", lambda: lexicon).terms) == ["what", "is", "it"]
    assert texts(weigh_query("我们怎么了", lambda: lexicon).terms) == ["我们", "怎么", "了"]


def test_search_mode_sub_words_join_their_word_group(lexicon):
    terms = weigh_query("圣诞节礼物", lambda: lexicon).terms
    by_text = {t.text: t for t in terms}
    assert by_text["圣诞"].group == by_text["圣诞节"].group != by_text["礼物"].group
    assert by_text["圣诞"].weight < by_text["圣诞节"].weight


def test_common_sub_words_are_left_out(lexicon):
    # 工作 (jieba frequency ~66,000) inside 工作日 would match much of any store
    assert texts(weigh_query("工作日", lambda: lexicon).terms) == ["工作日"]


def test_rarer_and_repeated_words_weigh_more(lexicon):
    weights = {t.text: t.weight for t in weigh_query("电影 科幻", lambda: lexicon).terms}
    assert weights["科幻"] > weights["电影"]  # jieba frequency 80 vs 4,918
    weights = {
        t.text: t.weight for t in weigh_query("deploy rollback deploy", lambda: lexicon).terms
    }
    assert weights == {"deploy": 1.0, "rollback": pytest.approx(1 / (1 + 0.5 * 0.6931), 1e-3)}


def test_a_long_query_keeps_its_end_rather_than_its_beginning():
    def refuse() -> Lexicon:
        raise AssertionError("lexicon opened")

    earlier = " ".join(f"old{n}" for n in range(200))
    terms = weigh_query(f"{earlier} where is the billing runbook", refuse).terms
    assert len(terms) == MAX_TERMS
    assert texts(terms)[-2:] == ["billing", "runbook"]
    assert "old0" not in texts(terms)
    assert {t.weight for t in terms} == {1.0}  # where a word is said does not weigh it


def test_a_word_with_its_sub_words_covers_its_group_once():
    terms = [QueryTerm("圣诞节", 1.0, 0), QueryTerm("圣诞", 0.5, 0), QueryTerm("礼物", 1.0, 1)]
    weights = [t.weight for t in terms]
    assert coverage(terms, weights, [True, True, False]) == 0.5
    assert coverage(terms, weights, [False, True, True]) == 0.75
    assert coverage(terms, weights, [True, True, True]) == 1.0


def test_recent_turns_add_few_light_words_and_the_question_keeps_its_own(lexicon):
    question = weigh_query("when is the standup?", lambda: lexicon).terms
    pasted = " ".join(f"kubernetes{n} autoscaler{n} nodepool{n}" for n in range(60))
    folded = fold_context(question, f"{pasted} 部署流水线 standup", lambda: lexicon)
    assert folded[: len(question)] == question
    added = folded[len(question) :]
    assert "standup" not in texts(added)  # the question holds it already
    assert 0 < len({t.group for t in added}) <= CONTEXT_WORDS
    heads: dict[int, float] = {}
    for term in added:
        heads[term.group] = max(heads.get(term.group, 0.0), term.weight)
    assert sum(heads.values()) <= CONTEXT_SHARE * sum(t.weight for t in question) + 1e-9
    assert fold_context(question, "  ", lambda: lexicon) == question
