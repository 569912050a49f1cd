"""Text as the PostgreSQL index sees it: the project's own tokenization, then 'simple'.

No Chinese parser (zhparser, pg_jieba) is assumed on the server. The text module
spaces CJK characters apart (:func:`soloqueue_mem.text.cjk.spaced_form`, the SQLite
indexes' form before they moved to bigrams), words split on anything that is not a
letter or a digit (as FTS5's unicode61 does), lower-cased. ``to_tsvector('simple', …)``
then keeps every token with its position, and a query's jieba-segmented term
(:func:`soloqueue_mem.text.query.weigh_query`) becomes a phrase of its characters
(``'上' <-> '海'``), exactly how FTS5 matches it. The index thus never depends on the
jieba dictionary of the host that wrote a row, and several hosts index alike.
"""

from __future__ import annotations

import re

from soloqueue_mem.text.cjk import spaced_form

_TOKEN = re.compile(r"[^\W_]+")


def document(text: str) -> str:
    """The text to give ``to_tsvector('simple', …)``."""
    return " ".join(_TOKEN.findall(spaced_form(text).lower()))


def term_query(term: str) -> str | None:
    """A ``to_tsquery('simple', …)`` expression matching ``term`` as a phrase."""
    tokens = _TOKEN.findall(spaced_form(term).lower())
    return " <-> ".join(f"'{token}'" for token in tokens) or None


def any_query(terms: list[str]) -> str | None:
    """An expression matching any of ``terms``."""
    parts = [f"({q})" for q in (term_query(t) for t in terms) if q]
    return " | ".join(parts) or None
