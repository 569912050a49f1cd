"""The only place user text becomes an FTS5 ``MATCH`` expression.

Every token is quoted (``"`` doubled), so ``"``, ``*``, ``-``, ``NEAR(``, ``:`` and
column filters in a query are plain characters; CJK words become phrases of their
characters (see :mod:`soloqueue_mem.text.cjk`); tokens are OR-joined because FTS5's
implicit AND collapses recall (LoCoMo hit@10 67% → 12%). BM25 still ranks documents
that match more of the tokens higher.
"""

from __future__ import annotations

from collections.abc import Callable

from soloqueue_mem.text.cjk import has_cjk
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
    """``"a" OR "b c"``: each term quoted; CJK terms spaced into character phrases."""
    if not terms:
        return None
    phrases = []
    for term in terms:
        text = " ".join(term) if has_cjk(term) else term
        phrases.append('"' + text.replace('"', '""') + '"')
    return " OR ".join(phrases)


INDEX_TOKENIZER = "porter unicode61 remove_diacritics 2"  # as every FTS index of the store


def holders(bodies: list[str], matches: list[str]) -> list[set[int]]:
    """For each FTS5 expression of ``matches``, the positions of the ``bodies`` it
    matches, tokenized exactly as the store's indexes are: the texts go into an FTS5
    table of a private in-memory database, so the cost is theirs, not the store's."""
    import sqlite3

    from soloqueue_mem.text.cjk import index_forms

    scratch = sqlite3.connect(":memory:")
    try:
        scratch.execute(f"CREATE VIRTUAL TABLE pool USING fts5(body, tokenize='{INDEX_TOKENIZER}')")
        with scratch:
            scratch.executemany(
                "INSERT INTO pool (rowid, body) VALUES (?, ?)", enumerate(index_forms(bodies))
            )
        sql = "SELECT rowid FROM pool WHERE pool MATCH ?"
        return [{row[0] for row in scratch.execute(sql, (match,))} for match in matches]
    finally:
        scratch.close()
