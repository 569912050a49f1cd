"""Text as the PostgreSQL index sees it: this module's own lexemes, then 'simple'.

No Chinese parser (zhparser, pg_jieba) is assumed on the server, and this index does
not share the SQLite index's form (:mod:`soloqueue_mem.text.cjk`): its lexemes are made
here. Words are split on anything that is not a letter or a digit (as FTS5's unicode61
does) and lower-cased; a run of CJK characters becomes its overlapping **bigrams**
followed by its last character (``上海工作`` → ``上海 海工 工作 作``).
``to_tsvector('simple', …)`` then keeps every lexeme with its position. Other words
lose the diacritics of their Latin letters and are indexed by their Porter stem
(:mod:`soloqueue_mem.text.porter`), as SQLite's ``porter unicode61
remove_diacritics 2`` index has them: ``compilers`` finds ``compiler``, ``cafe``
finds ``café``.

A query's word asks for its stem or the word as written (``'deploy' | 'deploys'``):
rows written before the stems, until they are re-indexed, hold the latter.
A query's jieba-segmented term (:func:`soloqueue_mem.text.query.weigh_query`) becomes
the phrase of its bigrams (``上海`` → ``'上海'``, ``上海市`` → ``'上海' <-> '海市'``): a
two-character word, the commonest, is one lexeme, found by the GIN index alone without
reading a row's positions. A one-character term is a prefix (``'上':*``), which
matches every bigram starting with it and the run's last character: every place it
occurs. A CJK run followed by a word within one term is matched whole (its bigrams and
last character, as indexed). The index never depends on the jieba dictionary of the
host that wrote a row, so several hosts index alike.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from soloqueue_mem.text.cjk import CJK_RANGES
from soloqueue_mem.text.porter import stem

if TYPE_CHECKING:
    from soloqueue_mem.db.adapter import Db

_TOKEN = re.compile(r"[^\W_]+")
UNLESS_TAKEN = " ON CONFLICT (id) DO NOTHING"  # an insert's end: a taken id is left alone


@cache
def _cjk_split() -> re.Pattern[str]:
    """Splits a text into other text and (captured) CJK runs."""
    return re.compile(f"((?:{CJK_RANGES})+)")


def _latin_base(token: str) -> str:
    """``token`` with its Latin letters' diacritics removed (``résumé`` → ``resume``;
    ``ø``, ``ß``, ``ł`` have none to remove); other scripts as they are."""
    if token.isascii():
        return token
    import unicodedata

    return "".join(
        "".join(c for c in unicodedata.normalize("NFD", ch) if not unicodedata.combining(c))
        if "\u00c0" <= ch <= "\u024f" or "\u1e00" <= ch <= "\u1eff"
        else ch
        for ch in token
    )


def _runs(text: str) -> list[tuple[bool, str]]:
    """``text`` lower-cased as (is_cjk, token) pairs: word tokens and whole CJK runs."""
    pieces: list[tuple[bool, str]] = []
    for n, part in enumerate(_cjk_split().split(text.lower())):
        if n % 2:
            pieces.append((True, part))
        else:
            pieces.extend((False, _latin_base(token)) for token in _TOKEN.findall(part))
    return pieces


def _bigrams(run: str) -> list[str]:
    return [run[i : i + 2] for i in range(len(run) - 1)]


def lexemes(text: str) -> list[str]:
    """The index's lexemes of ``text``, in order (see the module doc)."""
    out: list[str] = []
    for cjk, token in _runs(text):
        if cjk:
            out.extend(_bigrams(token))
            out.append(token[-1])
        else:
            out.append(stem(token))
    return out


def document(text: str) -> str:
    """The text to give ``to_tsvector('simple', …)``."""
    return " ".join(lexemes(text))


def insert_indexed(
    db: Db, table: str, columns: str, values: Sequence[Any], indexed: str, tail: str = ""
) -> Any:
    """Insert a row of ``table`` (``values`` of ``columns``) with its ``search`` column,
    the tsvector of ``indexed`` (a :func:`document`); the cursor. ``tail`` ends the
    statement (``ON CONFLICT``, ``RETURNING``)."""
    return db.execute(
        f"INSERT INTO {table} ({columns}, search)"  # noqa: S608 - constant names
        f" VALUES ({', '.join('?' * len(values))}, to_tsvector('simple', ?)){tail}",
        (*values, indexed),
    )


def term_query(term: str) -> str | None:
    """A ``to_tsquery('simple', …)`` expression matching ``term`` as a phrase."""
    runs = _runs(term)
    parts: list[str] = []
    for n, (cjk, token) in enumerate(runs):
        if not cjk:
            stemmed = stem(token)
            parts.append(f"'{token}'" if stemmed == token else f"('{stemmed}' | '{token}')")
        elif n < len(runs) - 1:  # followed by a word: the whole run, as indexed
            parts.extend(f"'{lexeme}'" for lexeme in [*_bigrams(token), token[-1]])
        elif len(token) == 1:
            parts.append(f"'{token}':*")
        else:
            parts.extend(f"'{pair}'" for pair in _bigrams(token))
    return " <-> ".join(parts) or None


def any_query(terms: list[str]) -> str | None:
    """An expression matching any of ``terms``."""
    parts = [f"({q})" for q in (term_query(t) for t in terms) if q]
    return " | ".join(parts) or None
