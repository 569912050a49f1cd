"""Keywords of a text, the way jieba's ``extract_tags`` finds them: TF × IDF.

Chinese words come from the jieba-compatible segmenter; a word's IDF is estimated from
its frequency in jieba's dictionary (``log(total / freq)``; a word the dictionary does
not know counts as rare), English words of three letters or more share the median IDF.
Stopwords and single characters are left out.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from functools import cache

from soloqueue_mem.text.cjk import han_run
from soloqueue_mem.text.fts import STOPWORDS
from soloqueue_mem.text.lexicon import Lexicon
from soloqueue_mem.text.segment import segment_han

ENGLISH_IDF = 10.0
# Function words that are frequent but too long for the search stopwords' single
# characters; like jieba's own stop-word list for extract_tags.
CHINESE_STOPWORDS = frozenset(
    """我们 你们 他们 她们 它们 这个 那个 这些 那些 什么 怎么 一个 没有 就是 可以 因为
    所以 但是 如果 已经 还是 这样 那样 那么 然后 或者 而且 自己 现在 时候 总是""".split()
)  # about the median IDF of the dictionary's two-character words


@cache
def _english() -> re.Pattern[str]:
    return re.compile(r"[A-Za-z][A-Za-z0-9_+#.-]{2,}")


def keywords(text: str, lexicon: Callable[[], Lexicon], top: int = 8) -> list[str]:
    """The ``top`` keywords of ``text``, best first (ties in order of appearance).
    ``lexicon`` is called only when the text has Han characters."""
    counts: Counter[str] = Counter()
    runs = han_run().findall(text) if not text.isascii() else []
    for run in runs:
        words = segment_han(run, lexicon())
        counts.update(w for w in words if len(w) > 1 and w not in CHINESE_STOPWORDS)
    latin = han_run().sub(" ", text) if runs else text
    english = [w.lower().rstrip(".") for w in _english().findall(latin)]
    counts.update(w for w in english if w not in STOPWORDS)
    if not counts:
        return []
    total = lexicon().total if runs else 1
    known = lexicon().freqs(w for w in counts if not w.isascii()) if runs else {}

    def idf(word: str) -> float:
        if word.isascii():
            return ENGLISH_IDF
        return math.log(total / known[word]) if word in known else math.log(total)

    order = {word: n for n, word in enumerate(counts)}
    ranked = sorted(counts, key=lambda w: (-counts[w] * idf(w), order[w]))
    return ranked[:top]
