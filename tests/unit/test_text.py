"""The text module: jieba-equal segmentation, the index form, safe MATCH expressions."""

from __future__ import annotations

import math
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from soloqueue_mem.text.cjk import estimate_tokens, index_form
from soloqueue_mem.text.fts import match_expression, query_terms
from soloqueue_mem.text.lexicon import Lexicon, open_lexicon
from soloqueue_mem.text.segment import segment

SENTENCES = [
    "我今天在北京的办公室里调试了一个脚本，发现数据库连接超时的问题。",
    "李小龙和王小明去了绿禾公园，看到了一朵开得特别美的樱花。",
    "明天要记得把配置改成5000毫秒，然后重新跑一遍测试。",
    "工信处女干事每月经过下属科室都要亲口交代24口交换机等技术性器件的安装工作",
    "他来到了网易杭研大厦",
    "小明硕士毕业于中国科学院计算所，后在日本京都大学深造",
    "结婚的和尚未结婚的",
    "我不喜欢看喜剧片，更喜欢科幻电影《流浪地球》。",
]


@pytest.fixture(scope="module")
def lexicon(built_lexicon) -> Lexicon:
    conn = sqlite3.connect(f"file:{built_lexicon}?mode=ro", uri=True)
    return Lexicon(conn)


def han_words(words: list[str]) -> list[str]:
    return [w for w in words if any("\u4e00" <= ch <= "\u9fd5" for ch in w)]


def test_segmentation_of_chinese_equals_jieba(lexicon, tmp_path):
    import jieba

    jieba.dt.tmp_dir = str(tmp_path)  # its cache file stays out of /tmp

    for sentence in SENTENCES:
        assert han_words(segment(sentence, lexicon)) == han_words(jieba.lcut(sentence)), sentence


def test_a_bulk_lexicon_segments_as_the_sqlite_one_and_jieba(built_lexicon, tmp_path):
    """After BULK_AFTER lookups (a consolidate of many sessions) the whole dictionary
    is in memory: the same words, search words, keywords and frequencies."""
    import jieba

    from soloqueue_mem.text.keywords import keywords
    from soloqueue_mem.text.segment import segment_for_search

    jieba.dt.tmp_dir = str(tmp_path)
    texts = [*SENTENCES, "".join(SENTENCES), "数据库连接池" * 5, "不是一个词语吧", "x"]
    sqlite = Lexicon(sqlite3.connect(f"file:{built_lexicon}?mode=ro", uri=True), 10**9)
    bulk = Lexicon(sqlite3.connect(f"file:{built_lexicon}?mode=ro", uri=True), bulk_after=0)
    assert bulk.freqs(["数据库", "不是一个词语吧"]) == sqlite.freqs(["数据库", "不是一个词语吧"])
    assert bulk.table() is not None and sqlite.table() is None
    for text in texts:
        assert segment(text, bulk) == segment(text, sqlite), text
        assert han_words(segment(text, bulk)) == han_words(jieba.lcut(text)), text
        assert segment_for_search(text, bulk) == segment_for_search(text, sqlite), text
        assert keywords(text, lambda: bulk) == keywords(text, lambda: sqlite), text


def test_the_lexicon_is_built_from_jieba_when_missing(tmp_path, monkeypatch):
    import soloqueue_mem.text.lexicon as module

    monkeypatch.undo()  # the suite's fixture copies a prebuilt file; build for real here
    (tmp_path / "cache").mkdir(mode=0o700)
    (tmp_path / "cache" / "lexicon-jieba-5233254-f1.sqlite3").write_bytes(b"an older format")
    lex = open_lexicon(tmp_path / "cache")
    assert lex.freqs(["数据库", "不是一个词语吧"]) == {"数据库": lex.freqs(["数据库"])["数据库"]}
    (built,) = (tmp_path / "cache").glob("lexicon-jieba-*.sqlite3")  # the older one removed
    assert built.stat().st_mode & 0o777 == 0o600
    assert not list((tmp_path / "cache").glob(".*tmp"))
    assert module.open_lexicon(None).total == lex.total  # read-only stores build in memory


def test_index_form_turns_cjk_runs_into_bigrams_only():
    assert index_form("hello world") == "hello world"
    assert index_form("调试ok数据库") == " 调试 试 ok 数据 据库 库 "
    assert index_form("こんにちは") == " こん んに にち ちは は "
    assert index_form("a京b") == "a 京 b"


def test_token_estimate():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd" * 10) == 10
    assert estimate_tokens("数据库") == 4  # 1.2 per CJK character for cl100k_base
    assert estimate_tokens("数据库", "o200k_base") == 3  # 0.7 for o200k_base, rounded up
    assert estimate_tokens("hi") == 1  # rounded up: a text is never free
    assert estimate_tokens("数据库，好。") == 7  # full-width punctuation: one each


def test_query_terms_segment_chinese_and_drop_stopwords(lexicon):
    terms = query_terms("What did I say about 数据库的连接?", lambda: lexicon)
    assert terms == ["say", "about", "数据库", "数据", "据库", "连接"]  # with sub-words
    assert query_terms("the", lambda: lexicon) == ["the"]  # only stopwords: keep them


def test_ascii_queries_never_open_the_lexicon():
    def explode() -> Lexicon:
        raise AssertionError("lexicon opened")

    assert query_terms("plain english words", explode) == ["plain", "english", "words"]


def test_match_expression_quotes_every_term():
    assert match_expression(["a", 'he"llo', "数据库"]) == '"a" OR "he""llo" OR "数据 据库"'
    assert match_expression(["京"]) == '"京"*'  # any token the character starts
    assert match_expression([]) is None


@pytest.fixture(scope="module")
def fts():
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE t USING fts5("
        "body, content='', tokenize='porter unicode61 remove_diacritics 2')"
    )
    conn.execute(
        "INSERT INTO t(rowid, body) VALUES (1, ?)", (index_form("some text 数据库 with words"),)
    )
    return conn


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
        max_size=200,
    )
)
def test_any_query_gives_a_valid_match_expression(fts, lexicon, query):
    expression = match_expression(query_terms(query, lambda: lexicon))
    if expression is not None:
        fts.execute("SELECT rowid FROM t WHERE t MATCH ?", (expression,)).fetchall()


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab 数据库こんにちは한국어\uf900。，\u4dc0"), max_size=80))
def test_the_short_text_loop_equals_the_regex(text):
    import soloqueue_mem.text.cjk as cjk

    expected = cjk.cjk_run().sub(lambda m: " " + " ".join(cjk.run_tokens(m.group())) + " ", text)
    assert cjk.index_forms([text]) == [expected]
    han = sum(map(len, cjk.cjk_run().findall(text)))
    cjk._looped = 0  # the loop's budget is per process: exercise the loop every time
    cjk.cjk_run.cache_clear()  # a compiled expression is always used
    assert index_form(text) == expected
    ascii_chars = sum(char.isascii() for char in text)
    tokens = 1.2 * han + (len(text) - han - ascii_chars) + ascii_chars / 4.3
    cjk.cjk_run.cache_clear()
    assert estimate_tokens(text) == math.ceil(round(tokens, 6))


def test_past_the_loop_budget_a_process_gives_the_same_forms():
    import soloqueue_mem.text.cjk as cjk

    text = "调试ok数据库 hello 한국어。"
    cjk._looped = 0
    cjk.cjk_run.cache_clear()
    short = (index_form(text), estimate_tokens(text))
    assert cjk._looped == 2 * len(text)  # both looped
    cjk._looped = cjk._LOOP_BUDGET + 1  # as after a batch's first few hundred turns
    try:
        assert (index_form(text), estimate_tokens(text)) == short
        cjk._looped = 0  # once compiled (by a query, say) the expression is always used
        assert (index_form(text), estimate_tokens(text)) == short
        assert cjk._looped == 0
    finally:
        cjk._looped = 0


def test_from_the_file_a_run_costs_only_the_substrings_that_can_become_words(built_lexicon):
    """The lexicon file lists the prefixes of words: segmenting looks up a substring
    only when the one a character shorter is a word or a prefix of one (before, every
    substring of up to 16 characters was looked up: ~15 per character), and a recall's
    hits are segmented together, one lookup per substring length for all their runs."""
    from soloqueue_mem.text.cjk import han_run
    from soloqueue_mem.text.segment import prepare_for_search, segment_for_search

    asked: list[list[str]] = []

    class Counting(Lexicon):
        def entries(self, words):
            asked.append(list(words))
            return super().entries(asked[-1])

    def opened() -> Counting:
        return Counting(sqlite3.connect(f"file:{built_lexicon}?mode=ro", uri=True), 10**9)

    runs = [m.group() for text in SENTENCES for m in han_run().finditer(text)]
    each = [segment_for_search(run, opened()) for run in runs]
    assert sum(map(len, asked)) < 3 * sum(map(len, runs))
    asked.clear()
    together = opened()
    prepare_for_search(SENTENCES, together)
    assert len(asked) <= 16  # the longest word's length
    assert [segment_for_search(run, together) for run in runs] == each
    assert len(asked) <= 16  # nothing looked up again
