"""Which characters are CJK, and the index form of a text.

The full-text index keeps one token per CJK character (FTS5's ``unicode61`` would
otherwise treat a whole run of Han characters as one token). Queries turn each
segmented word into a phrase of its characters, which matches exactly where the word
occurs: word-level precision from the query side, no segmentation on the write path.
"""

from __future__ import annotations

import re
from functools import cache

# Kana, Han (extension A through the unified block), hangul syllables, compatibility
# ideographs. Written as single-range alternatives: a multi-range class costs ~4 ms to
# compile, these ~3 ms; compiled on first use so ASCII-only processes never pay it.
CJK_RANGES = "[\u3040-\u30ff]|[\u3400-\u9fff]|[\uac00-\ud7af]|[\uf900-\ufaff]"


@cache
def cjk_run() -> re.Pattern[str]:
    """A maximal run of CJK characters."""
    return re.compile(f"(?:{CJK_RANGES})+")


@cache
def han_run() -> re.Pattern[str]:
    return re.compile("[\u4e00-\u9fd5]+")


def has_cjk(text: str) -> bool:
    return not text.isascii() and cjk_run().search(text) is not None


def _spaced(match: re.Match[str]) -> str:
    return " " + " ".join(match.group()) + " "


def index_form(text: str) -> str:
    """The text as the FTS5 index sees it: CJK characters separated by spaces."""
    return text if text.isascii() else cjk_run().sub(_spaced, text)


def estimate_tokens(text: str) -> int:
    """A cheap token estimate: one per CJK character, one per four other characters.

    Used where no tokenizer is loaded (the ``log`` hot path); the context builder
    replaces it with exact counts when it needs them.
    """
    cjk = 0 if text.isascii() else sum(map(len, cjk_run().findall(text)))
    return cjk + (len(text) - cjk + 3) // 4
