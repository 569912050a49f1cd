"""The only place user text becomes an FTS5 ``MATCH`` expression.

Every token is quoted (``"`` doubled), so ``"``, ``*``, ``-``, ``NEAR(``, ``:`` and
column filters in a query are plain characters; CJK words become phrases of their
characters (see :mod:`soloqueue_mem.text.cjk`); tokens are OR-joined because FTS5's
implicit AND collapses recall (LoCoMo hit@10 67% → 12%). BM25 still ranks documents
that match more of the tokens higher.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

from soloqueue_mem.errors import BadInput
from soloqueue_mem.text.cjk import cjk_run, han_run, has_cjk
from soloqueue_mem.text.lexicon import Lexicon

MAX_QUERY_CHARS = 4096
MAX_TERMS = 64


@cache
def _word() -> re.Pattern[str]:
    return re.compile(r"[^\W_]+")


# Words that match most documents and carry no meaning for BM25; dropped from a query
# unless nothing else is left. Keeping them makes a search over 1M turns scan most of
# the index for no ranking benefit.
STOPWORDS = frozenset(
    """a an and are as at be but by did do does for from had has have he her his how i
    if in into is it its me my no not of on or our she so than that the their them then
    there these they this to was we were what when where which who whom why will with you
    your 的 了 吗 呢 吧 啊 是 在 和 与 就 都 也 还 把 被 这 那 么 个 之 着 过""".split()
)


def query_terms(query: str, lexicon: Callable[[], Lexicon]) -> list[str]:
    """The search terms of ``query``: lower-cased words and segmented CJK words.

    ``lexicon`` is called only when the query contains Han characters.
    """
    if "\x00" in query:
        raise BadInput("query contains a NUL byte")
    query = query[:MAX_QUERY_CHARS]
    terms: list[str] = []
    position = 0
    for run in cjk_run().finditer(query) if not query.isascii() else ():
        terms.extend(w.lower() for w in _word().findall(query, position, run.start()))
        terms.extend(_cjk_terms(run.group(), lexicon))
        position = run.end()
    terms.extend(w.lower() for w in _word().findall(query, position))
    unique = list(dict.fromkeys(terms))
    meaningful = [t for t in unique if t not in STOPWORDS]
    return (meaningful or unique)[:MAX_TERMS]


def _cjk_terms(run: str, lexicon: Callable[[], Lexicon]) -> list[str]:
    """Han text segmented like jieba; kana and hangul runs kept whole."""
    if not han_run().search(run):
        return [run]
    from soloqueue_mem.text.segment import segment

    return [word for word in segment(run, lexicon()) if word.strip()]


def match_expression(terms: list[str]) -> str | None:
    """``"a" OR "b c"``: each term quoted; CJK terms spaced into character phrases."""
    if not terms:
        return None
    phrases = []
    for term in terms:
        text = " ".join(term) if has_cjk(term) else term
        phrases.append('"' + text.replace('"', '""') + '"')
    return " OR ".join(phrases)
