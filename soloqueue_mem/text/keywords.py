"""Keywords of a text, the way jieba's ``extract_tags`` finds them: TF × IDF.

Chinese words come from the jieba-compatible segmenter; a word's IDF is estimated from
its frequency in jieba's dictionary (``log(total / freq)``; a word the dictionary does
not know counts as rare), English words of three letters or more share the median IDF.
Stopwords (:mod:`.stopwords`) and single Chinese characters are left out.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from functools import cache

from soloqueue_mem.text.cjk import han_run
from soloqueue_mem.text.lexicon import Lexicon
from soloqueue_mem.text.query import LATIN_IDF
from soloqueue_mem.text.segment import segment_han
from soloqueue_mem.text.stopwords import STOPWORDS


@cache
def _english() -> re.Pattern[str]:
    return re.compile(r"[A-Za-z][A-Za-z0-9_+#.-]{2,}")


def keywords(text: str, lexicon: Callable[[], Lexicon], top: int = 8) -> list[str]:
    """The ``top`` keywords of ``text``, best first (ties in order of appearance).
    ``lexicon`` is called only when the text has Han characters."""
    counts: Counter[str] = Counter()
    runs = han_run().findall(text) if not text.isascii() else []
    dictionary: Lexicon | None = None
    if runs:
        dictionary = lexicon()
        for run in runs:
            words = segment_han(run, dictionary)
            counts.update(w for w in words if len(w) > 1 and w not in STOPWORDS)
    latin = han_run().sub(" ", text) if runs else text
    english = [w.lower().rstrip(".") for w in _english().findall(latin)]
    counts.update(w for w in english if w not in STOPWORDS)
    if not counts:
        return []
    total = dictionary.total if dictionary else 1
    known = dictionary.freqs(w for w in counts if not w.isascii()) if dictionary else {}

    def idf(word: str) -> float:
        if word.isascii():
            return LATIN_IDF
        return math.log(total / known[word]) if word in known else math.log(total)

    order = {word: n for n, word in enumerate(counts)}
    ranked = sorted(counts, key=lambda w: (-counts[w] * idf(w), order[w]))
    return ranked[:top]
