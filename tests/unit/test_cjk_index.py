"""The bigram index form: a query finds exactly the texts holding its word in a CJK run."""

from __future__ import annotations

import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from soloqueue_mem.text.cjk import cjk_run, index_form, spaced_form
from soloqueue_mem.text.fts import INDEX_TOKENIZER, holders, match_expression

# few characters, so that words recur across texts; a space and full-width punctuation
# end runs, Latin letters sit between them
ALPHABET = "北京首都是一个项目数据库한국ab 。"
HAN = "北京首都是一个项目数据库한국"

texts = st.lists(st.text(alphabet=ALPHABET, max_size=30), min_size=1, max_size=12)


def _index(bodies: list[str]) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        f"CREATE VIRTUAL TABLE t USING fts5(body, content='', tokenize='{INDEX_TOKENIZER}')"
    )
    conn.executemany(
        "INSERT INTO t (rowid, body) VALUES (?, ?)", enumerate(map(index_form, bodies))
    )
    return conn


def _found(conn: sqlite3.Connection, word: str) -> set[int]:
    match = match_expression([word])
    return {row[0] for row in conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (match,))}


def _holding(bodies: list[str], word: str) -> set[int]:
    return {
        n for n, body in enumerate(bodies) if any(word in run for run in cjk_run().findall(body))
    }


@settings(max_examples=200, deadline=None)
@given(texts)
def test_every_character_and_substring_of_a_run_is_found(bodies):
    conn = _index(bodies)
    for n, body in enumerate(bodies):
        for run in cjk_run().findall(body):
            for start in range(len(run)):
                for end in range(start + 1, min(len(run), start + 5) + 1):
                    assert n in _found(conn, run[start:end]), (body, run[start:end])


@settings(max_examples=200, deadline=None)
@given(texts, st.text(alphabet=HAN, min_size=1, max_size=4))
def test_a_word_matches_exactly_the_texts_holding_it_in_a_run(bodies, word):
    assert _found(_index(bodies), word) == _holding(bodies, word)
    # the same through the scratch index recall ranks its candidates with
    assert holders(bodies, [match_expression([word]) or ""]) == [_holding(bodies, word)]


def test_a_word_across_two_runs_no_longer_matches():
    """The character form matched 北 。京 as the phrase 北京; the bigram form does not."""
    conn = _index(["去北。京都", "北京"])
    assert _found(conn, "北京") == {1}
    assert spaced_form("北。京") == " 北 。 京 "  # the old form, kept for PostgreSQL


def test_latin_words_keep_their_form():
    conn = _index(["Deploy the 数据库 server", "servers"])
    assert _found(conn, "server") == {0, 1}  # porter stems both
    assert match_expression(["server"]) == '"server"'


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text(alphabet=ALPHABET + "ク・ー", max_size=30), min_size=1, max_size=12),
    st.lists(
        st.one_of(
            st.text(alphabet=HAN + "ク", min_size=1, max_size=4),
            st.sampled_from(["ab", "a 北京", "クー", "京・", "ー"]),
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_holders_substring_path_agrees_with_the_fts_index(bodies: list[str], words: list[str]):
    """A CJK word's holders are found by a substring test, others through FTS5: both
    give what the store's index gives for every expression."""
    from soloqueue_mem.text.fts import _fts_holders

    matches = [match_expression([word]) for word in words]
    assert holders(bodies, matches) == _fts_holders(bodies, matches)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.text(alphabet="北京ク・゠゙한ab cD-é。", max_size=30) | st.just("ab・cd ab北cd"),
        min_size=1,
        max_size=12,
    ),
    st.lists(st.sampled_from(["ab", "cd", "ab cd", "é", "ab-cd", "cds"]), min_size=1, max_size=4),
)
def test_latin_expressions_match_alike_with_runs_only_set_apart(
    bodies: list[str], words: list[str]
):
    """Expressions without CJK characters are matched against texts whose CJK runs are
    only set apart, not cut into bigrams: the same texts as with the index form, across
    runs of letters, of punctuation (・) and of combining marks alike."""
    from soloqueue_mem.text.fts import _fts_holders

    matches = [match_expression([word]) or "" for word in words]
    assert _fts_holders(bodies, matches, latin=True) == _fts_holders(bodies, matches)
