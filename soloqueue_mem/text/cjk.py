"""Which characters are CJK, and the index form of a text.

The full-text index keeps one token per CJK character (FTS5's ``unicode61`` would
otherwise treat a whole run of Han characters as one token). Queries turn each
segmented word into a phrase of its characters, which matches exactly where the word
occurs: word-level precision from the query side, no segmentation on the write path.
"""

from __future__ import annotations

import re

# Han (with extension A and compatibility ideographs), kana, hangul syllables.
CJK_CLASS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_CJK_CHAR = re.compile(f"([{CJK_CLASS}])")
HAN_RUN = re.compile("[\u4e00-\u9fd5]+")


def has_cjk(text: str) -> bool:
    return _CJK_CHAR.search(text) is not None


def index_form(text: str) -> str:
    """The text as the FTS5 index sees it: CJK characters separated by spaces."""
    return _CJK_CHAR.sub(r" \1 ", text) if has_cjk(text) else text


def estimate_tokens(text: str) -> int:
    """A cheap token estimate: one per CJK character, one per four other characters.

    Used where no tokenizer is loaded (the ``log`` hot path); the context builder
    replaces it with exact counts when it needs them.
    """
    cjk = len(_CJK_CHAR.findall(text))
    return cjk + (len(text) - cjk + 3) // 4
