"""The weighted search terms of a query: what a search looks for, and how much each counts.

A query becomes words: lower-cased Latin words, Chinese words cut as jieba's search
mode cuts them, kana and hangul runs whole. Each distinct word is weighted by

- rarity: for a Chinese word the idf its frequency in jieba's dictionary gives
  (``log(total / freq)``; a word the dictionary does not know counts as rare), for any
  other word ``LATIN_IDF``, about the median of the dictionary's words;
- repetition: ``1 + ln(count) / 2`` for a word said ``count`` times.

Stopwords (:mod:`.stopwords`) are set apart unless nothing else is left. A Chinese word
longer than two characters brings the dictionary words inside it as extra terms in its
group (jieba's ``cut_for_search``: 圣诞节 also finds text about 圣诞), each at
``SUBWORD_SHARE`` of its own weight. A sub-word as common as the few hundred commonest
dictionary words (idf below ``COMMON_IDF``: 工作 in 工作日) is left out: it would match
much of any store, costing ``trace`` a scan while barely moving BM25.

At most ``MAX_TERMS`` terms are kept: the heaviest words (the later ones among equals,
as a pasted dialogue asks about its last lines), then the heaviest sub-words
of kept words while room is left; they are returned in the order they appear in the
query, the best weighing 1.0.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from math import log

from soloqueue_mem.errors import BadInput
from soloqueue_mem.text.cjk import cjk_run, han_run
from soloqueue_mem.text.lexicon import Lexicon
from soloqueue_mem.text.stopwords import STOPWORDS
from soloqueue_mem.tuples import NamedTuple

MAX_QUERY_CHARS = 4096
MAX_TERMS = 64
LATIN_IDF = 10.0
COMMON_IDF = 8.0  # jieba dictionary frequency above ~20,000 (工作, 时间, 北京)
SUBWORD_SHARE = 0.5


class QueryTerm(NamedTuple):
    """One search term: ``group`` numbers the query word it stands for (a word and its
    sub-words share one, so a ranking can count the word once); ``weight`` is in (0, 1]."""

    text: str
    weight: float
    group: int


class _Word(NamedTuple):
    text: str
    idf: float
    subwords: tuple[tuple[str, float], ...]  # (sub-word, its idf)


@cache
def _latin_word() -> re.Pattern[str]:
    return re.compile(r"[^\W_]+")


class WeightedQuery(NamedTuple):
    """A query's ``terms`` and, apart, the ``stopwords`` dropped from them (weighted the
    same way, sharing the group numbering): a ranking may fall back on them when the
    terms find too little."""

    terms: list[QueryTerm]
    stopwords: list[QueryTerm]


def weigh_query(query: str, lexicon: Callable[[], Lexicon]) -> WeightedQuery:
    """The search terms of ``query`` with their weights (see the module docstring).

    When the query is made of stopwords only, they are its ``terms``. ``lexicon`` is
    called only when the query contains Han characters.

    Raises:
        BadInput: the query contains a NUL byte.
    """
    if "\x00" in query:
        raise BadInput("query contains a NUL byte")
    query = query[:MAX_QUERY_CHARS]
    said: dict[str, list[_Word]] = {}
    for word in _words(query, lexicon):
        said.setdefault(word.text, []).append(word)
    heads: list[QueryTerm] = []
    subs: dict[str, QueryTerm] = {}
    for group, (text, times) in enumerate(said.items()):
        last = times[-1]
        base = 1 + log(len(times)) / 2
        heads.append(QueryTerm(text, last.idf * base, group))
        for sub, idf in last.subwords if text not in STOPWORDS else ():
            weight = SUBWORD_SHARE * idf * base
            if sub in said or sub in STOPWORDS or idf < COMMON_IDF:
                continue
            if sub not in subs or subs[sub].weight < weight:
                subs[sub] = QueryTerm(sub, weight, group)
    content = [term for term in heads if term.text not in STOPWORDS]
    if not content:
        return WeightedQuery(_scaled(_best(heads, [])), [])
    terms = _best(content, list(subs.values()))
    stopwords = _best([term for term in heads if term.text in STOPWORDS], [])
    top = max(term.weight for term in terms)
    return WeightedQuery(_scaled(terms, top), _scaled(stopwords, top))


def weigh_texts(texts: list[str], lexicon: Callable[[], Lexicon]) -> list[WeightedQuery]:
    """:func:`weigh_query` of each of ``texts``, their Chinese segmented all at once
    (:func:`soloqueue_mem.text.segment.prepare_for_search`)."""
    if any(not text.isascii() and han_run().search(text) for text in texts):
        from soloqueue_mem.text.segment import prepare_for_search

        prepare_for_search([text[:MAX_QUERY_CHARS] for text in texts], lexicon())
    return [weigh_query(text, lexicon) for text in texts]


def _best(heads: list[QueryTerm], subs: list[QueryTerm]) -> list[QueryTerm]:
    """The heaviest words, the later ones among equals (a pasted dialogue asks about its
    last lines), then sub-words of kept words while room is left, in query order."""
    kept = sorted(heads, key=lambda t: (-t.weight, -t.group))[:MAX_TERMS]
    groups = {t.group for t in kept}
    room = MAX_TERMS - len(kept)
    kept += sorted((s for s in subs if s.group in groups), key=lambda t: -t.weight)[:room]
    order = {t.text: n for n, t in enumerate(heads + subs)}
    return sorted(kept, key=lambda t: (t.group, order[t.text]))


def _scaled(terms: list[QueryTerm], top: float | None = None) -> list[QueryTerm]:
    """Weights divided by ``top`` (default: the heaviest of ``terms``), at most 1."""
    top = top or max((t.weight for t in terms), default=1.0) or 1.0
    return [t._replace(weight=min(1.0, t.weight / top)) for t in terms]


def _words(query: str, lexicon: Callable[[], Lexicon]) -> Iterator[_Word]:
    """Every word of the query in order: Latin words between CJK runs, CJK runs cut."""
    position = 0
    for run in cjk_run().finditer(query) if not query.isascii() else ():
        yield from _latin(query, position, run.start())
        yield from _cjk(run.group(), lexicon)
        position = run.end()
    yield from _latin(query, position, len(query))


def _latin(query: str, start: int, end: int) -> Iterator[_Word]:
    for match in _latin_word().finditer(query, start, end):
        yield _Word(match.group().lower(), LATIN_IDF, ())


def _cjk(run: str, lexicon: Callable[[], Lexicon]) -> Iterator[_Word]:
    """Han text cut in jieba's search mode; kana and hangul pieces kept whole."""
    position = 0
    for han in han_run().finditer(run):
        if han.start() > position:
            yield _Word(run[position : han.start()], LATIN_IDF, ())
        yield from _han(han.group(), lexicon())
        position = han.end()
    if position < len(run):
        yield _Word(run[position:], LATIN_IDF, ())


def _han(run: str, lexicon: Lexicon) -> Iterator[_Word]:
    from soloqueue_mem.text.segment import segment_for_search

    rare = log(lexicon.total)
    for word in segment_for_search(run, lexicon):
        idf = log(lexicon.total / word.freq) if word.freq else rare
        subwords = tuple((sub, log(lexicon.total / freq)) for sub, freq in word.subwords)
        yield _Word(word.text, idf, subwords)


def coverage(terms: list[QueryTerm], weights: Iterable[float], held: Iterable[bool]) -> float:
    """The share of the query a text covers, given each term's ``weights`` and whether
    the text ``held`` it: per word group the heaviest term held, over the heaviest of
    each group, so a word found with its sub-words counts once."""
    best: dict[int, float] = {}
    found: dict[int, float] = {}
    for term, weight, has in zip(terms, weights, held, strict=True):
        best[term.group] = max(best.get(term.group, 0.0), weight)
        if has:
            found[term.group] = max(found.get(term.group, 0.0), weight)
    return sum(found.values()) / (sum(best.values()) or 1.0)


_SENTENCE_END = re.compile(r"(?<=[。！？!?\n])|(?<=\w\w\w\.)\s+")  # "Dr. Seuss" is one


def last_sentence(query: str) -> str | None:
    """The last sentence of a query of several (what a pasted dialogue, a log or a
    multi-sentence message asks now), or None for a one-sentence query."""
    said = [part for part in _SENTENCE_END.split(query) if part and _latin_word().search(part)]
    return said[-1].strip() if len(said) > 1 else None


CONTEXT_WORDS = 8  # at most this many words of the recent turns join a query
# their weights sum to at most this share of the question's: tuned on the long-query
# sets' tuned half (0.5, 0.3, 0.2; a previous message on another topic cost 0.2 least)
CONTEXT_SHARE = 0.2


def fold_context(
    terms: list[QueryTerm], recent: str, lexicon: Callable[[], Lexicon]
) -> list[QueryTerm]:
    """``terms`` (the question's) with the words of ``recent`` (the conversation's last
    turns) that the question does not already hold, weighed so the question keeps its
    weight: only the ``CONTEXT_WORDS`` heaviest of them (the later ones among equals),
    all of them together weighing at most ``CONTEXT_SHARE`` of the question's words
    together (and each at most ``CONTEXT_SHARE`` of its weight). A long pasted turn adds
    a few rare words at a small weight; it cannot outweigh a short question."""
    said = weigh_query(recent, lexicon).terms if recent.strip() else []
    have = {term.text for term in terms}
    fresh = [term for term in said if term.text not in have and term.text not in STOPWORDS]
    heads: dict[int, float] = {}
    for term in fresh:
        heads[term.group] = max(heads.get(term.group, 0.0), term.weight)
    kept = sorted(heads, key=lambda group: (-heads[group], -group))[:CONTEXT_WORDS]
    if not kept:
        return terms
    question = _group_weights(terms)
    added = sum(heads[group] for group in kept)
    scale = min(CONTEXT_SHARE, CONTEXT_SHARE * question / added)
    first = max((term.group for term in terms), default=-1) + 1
    number = {group: first + n for n, group in enumerate(sorted(kept))}
    return terms + [
        QueryTerm(term.text, term.weight * scale, number[term.group])
        for term in fresh
        if term.group in number
    ]


def _group_weights(terms: list[QueryTerm]) -> float:
    """The summed weight of the query's words (a word with its sub-words counts once)."""
    best: dict[int, float] = {}
    for term in terms:
        best[term.group] = max(best.get(term.group, 0.0), term.weight)
    return sum(best.values())
