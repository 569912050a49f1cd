"""The only place user text becomes an FTS5 ``MATCH`` expression.

Every token is quoted (``"`` doubled), so ``"``, ``*``, ``-``, ``NEAR(``, ``:`` and
column filters in a query are plain characters; CJK words are put in the indexes'
form (:mod:`soloqueue_mem.text.cjk`): a word of two or more characters becomes the
phrase of its bigrams, a lone character the prefix query ``"c"*``; tokens are
OR-joined because FTS5's implicit AND collapses recall (LoCoMo hit@10 67% → 12%).
BM25 still ranks documents that match more of the tokens higher.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from soloqueue_mem.text.cjk import cjk_run, has_cjk, index_form
from soloqueue_mem.text.lexicon import Lexicon
from soloqueue_mem.text.query import MAX_TERMS, weigh_query
from soloqueue_mem.text.stopwords import STOPWORDS

# Search of an index (turns or memories) by its FTS5 table: a query matching at most
# BROAD_MATCHES rows is ranked exactly; a broader one only over its RECENT_WINDOW newest
# matches and the matches of its rarer terms.
BROAD_MATCHES = 5_000
RECENT_WINDOW = 2_000

__all__ = ["MAX_TERMS", "STOPWORDS", "match_expression", "query_terms"]


def query_terms(query: str, lexicon: Callable[[], Lexicon]) -> list[str]:
    """The search terms of ``query``: lower-cased words, segmented CJK words and their
    search-mode sub-words, stopwords dropped, at most ``MAX_TERMS`` (the best by weight:
    :func:`soloqueue_mem.text.query.weigh_query`), in query order.

    ``lexicon`` is called only when the query contains Han characters.
    """
    return [term.text for term in weigh_query(query, lexicon).terms]


def match_expression(terms: list[str]) -> str | None:
    """``"a" OR "b c"``: each term quoted, CJK terms in the index form."""
    if not terms:
        return None
    return " OR ".join(map(phrase, terms))


def phrase(term: str) -> str:
    """One quoted FTS5 phrase matching ``term`` wherever the index holds it.

    A CJK run ending the term may go on in the text, where its last character starts a
    bigram: the run's trailing lone character is dropped from the phrase, and a run of
    one character becomes a prefix (every token starting with it)."""
    prefix = ""
    if has_cjk(term):
        last_run = cjk_run().findall(term)[-1]
        ends_in_run = term.endswith(last_run)
        term = index_form(term).strip()
        if ends_in_run and len(last_run) > 1:
            term = term.rsplit(" ", 1)[0]
        elif ends_in_run:
            prefix = "*"
    return '"' + term.replace('"', '""') + '"' + prefix


INDEX_TOKENIZER = "porter unicode61 remove_diacritics 2"  # as every FTS index of the store


def holders(bodies: list[str], matches: list[str]) -> list[set[int]]:
    """For each FTS5 expression of ``matches``, the positions of the ``bodies`` it
    matches, tokenized exactly as the store's indexes are.

    The phrase of a CJK word (:func:`phrase` of a term of CJK letters only) matches
    exactly the texts holding the word: its bigrams stand in one run, so that check is
    a substring test. Any other expression is run on an FTS5 table of the texts in a
    private in-memory database, so the cost is theirs, not the store's."""
    words = [_cjk_word(match) for match in matches]
    others = [match for match, word in zip(matches, words, strict=True) if word is None]
    latin = not any(has_cjk(match) for match in others)
    found = iter(_fts_holders(bodies, others, latin) if others else [])
    return [
        next(found) if word is None else {n for n, body in enumerate(bodies) if word in body}
        for word in words
    ]


def _cjk_word(match: str) -> str | None:
    """The word whose phrase ``match`` is, when the word is CJK letters only (a single
    character's prefix query, or a phrase of overlapping bigrams), else None."""
    if len(match) < 3 or match[0] != '"' or match.count('"') != 2:
        return None
    body, _, tail = match[1:].partition('"')
    tokens = body.split(" ")
    if tail == "*" and len(tokens) == 1 and len(tokens[0]) == 1:
        word = tokens[0]
    elif tail or any(len(t) != 2 for t in tokens):
        return None
    elif any(a[1] != b[0] for a, b in zip(tokens, tokens[1:], strict=False)):
        return None
    else:
        word = tokens[0] + "".join(t[1] for t in tokens[1:])
    return word if all(_is_cjk_letter(char) for char in word) else None


def _is_cjk_letter(char: str) -> bool:
    import unicodedata

    return has_cjk(char) and unicodedata.category(char) == "Lo"


def word_holders(bodies: list[str], words: list[str]) -> list[set[int]]:
    """For each of ``words``, the positions of the ``bodies`` holding it (:func:`holders`
    of each word's own expression)."""
    return holders(bodies, [match_expression([word]) or "" for word in words])


def _fts_holders(bodies: list[str], matches: list[str], latin: bool = False) -> list[set[int]]:
    """The holders of each of ``matches`` through a scratch FTS5 table of ``bodies``;
    ``latin``: no expression holds a CJK character, so each CJK run need only be set
    apart (:func:`_runs_apart`), not cut into the bigrams of the index form."""
    import sqlite3

    from soloqueue_mem.text.cjk import index_forms

    scratch = sqlite3.connect(":memory:")
    try:
        scratch.execute(f"CREATE VIRTUAL TABLE pool USING fts5(body, tokenize='{INDEX_TOKENIZER}')")
        forms = _runs_apart(bodies) if latin else index_forms(bodies)
        with scratch:
            scratch.executemany("INSERT INTO pool (rowid, body) VALUES (?, ?)", enumerate(forms))
        sql = "SELECT rowid FROM pool WHERE pool MATCH ?"
        return [{row[0] for row in scratch.execute(sql, (match,))} for match in matches]
    finally:
        scratch.close()


def _runs_apart(bodies: list[str]) -> list[str]:
    """The bodies with each CJK run set apart by spaces, whole. For an expression
    without CJK characters this matches exactly the texts the index form matches: no
    token of a run can equal one of its tokens, and a run gives tokens in either form
    exactly when it holds a letter or digit, so the same words stand next to each
    other (a phrase's words stay apart across a run of letters, and join across a run
    of punctuation only). Far fewer tokens to index: a run of letters is one token,
    not one for each of its characters."""
    return [body if body.isascii() else cjk_run().sub(_apart, body) for body in bodies]


def _apart(run: re.Match[str]) -> str:
    return " " + run.group() + " "  # a function: cheaper per run than a template
