"""A plain in-process BM25 ranker: the baseline every recall benchmark prints beside
the product.

Okapi BM25 (k1 = 1.2, b = 0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5))) over exactly
the texts the store holds. Words: Chinese runs cut with jieba's search mode
(``jieba.lcut_for_search``), every other run of letters and digits lower-cased and
Porter-stemmed. No stopword list, no query expansion, no recency: what a user would
get from an off-the-shelf BM25 index over the same items.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Generic, TypeVar

K1 = 1.2
B = 0.75
_RUNS = re.compile(r"([\u3400-\u9fff\uf900-\ufaff]+)|([^\W_]+)")
Key = TypeVar("Key", bound=Hashable)


def words(text: str) -> list[str]:
    """BM25's terms: jieba search-mode words for Chinese, Porter stems otherwise."""
    import jieba

    from soloqueue_mem.text.porter import stem

    found: list[str] = []
    for han, other in _RUNS.findall(text):
        if han:
            found += [w for w in jieba.lcut_for_search(han) if w.strip()]
        else:
            found.append(stem(other.lower()))
    return found


def length_bucket(query: str) -> str:
    """The query-length bucket every recall benchmark reports (characters)."""
    size = len(query)
    return "<100" if size < 100 else "100-299" if size < 300 else ">=300"


class Bm25(Generic[Key]):
    """An index of ``(key, text)`` pairs; :meth:`search` returns keys best first."""

    def __init__(self, docs: Sequence[tuple[Key, str]]) -> None:
        self.keys = [key for key, _ in docs]
        self.counts = [Counter(words(text)) for _, text in docs]
        self.lengths = [sum(c.values()) for c in self.counts]
        self.average = sum(self.lengths) / max(len(self.lengths), 1) or 1.0
        df: Counter[str] = Counter()
        for counts in self.counts:
            df.update(counts.keys())
        n = len(docs)
        self.idf = {w: math.log(1 + (n - d + 0.5) / (d + 0.5)) for w, d in df.items()}

    def search(self, query: str, k: int) -> list[Key]:
        terms = [w for w in dict.fromkeys(words(query)) if w in self.idf]
        scored = []
        for number, counts in enumerate(self.counts):
            norm = K1 * (1 - B + B * self.lengths[number] / self.average)
            score = sum(
                self.idf[w] * counts[w] * (K1 + 1) / (counts[w] + norm)
                for w in terms
                if w in counts
            )
            if score > 0:
                scored.append((-score, number))
        scored.sort()
        return [self.keys[number] for _, number in scored[:k]]
