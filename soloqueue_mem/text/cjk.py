"""Which characters are CJK, and the index form of a text.

The full-text index keeps one token per CJK character (FTS5's ``unicode61`` would
otherwise treat a whole run of Han characters as one token). Queries turn each
segmented word into a phrase of its characters, which matches exactly where the word
occurs: word-level precision from the query side, no segmentation on the write path.
"""

from __future__ import annotations

import math
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


# Below this length a plain loop is cheaper than compiling the regular expression
# (~3 ms, paid once per process): most single ``log`` calls never compile it. The loop
# costs ~0.1 us a character, so once a process has looped over this many characters in
# all (a ``log --batch``), the compiled expression (~8x faster) pays for itself.
_LOOP_LIMIT = 4096
_LOOP_BUDGET = 32768
_looped = 0


def _use_loop(text: str) -> bool:
    """Whether to scan ``text`` with the plain loop rather than the expression."""
    global _looped
    if len(text) > _LOOP_LIMIT or _looped > _LOOP_BUDGET:
        return False
    _looped += len(text)
    return True


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return (
        0x3040 <= code <= 0x30FF
        or 0x3400 <= code <= 0x9FFF
        or 0xAC00 <= code <= 0xD7AF
        or 0xF900 <= code <= 0xFAFF
    )


def _spaced(match: re.Match[str]) -> str:
    return " " + " ".join(match.group()) + " "


def index_form(text: str) -> str:
    """The text as the FTS5 index sees it: CJK characters separated by spaces."""
    if text.isascii():
        return text
    if not _use_loop(text):
        return cjk_run().sub(_spaced, text)
    parts: list[str] = []
    in_run = False
    for char in text:
        if _is_cjk(char):
            parts.append(" ")
            in_run = True
        elif in_run:
            parts.append(" ")
            in_run = False
        parts.append(char)
    if in_run:
        parts.append(" ")
    return "".join(parts)


def index_forms(texts: list[str]) -> list[str]:
    """:func:`index_form` of many texts: the regular expression pays for itself here."""
    pattern = cjk_run()
    return [text if text.isascii() else pattern.sub(_spaced, text) for text in texts]


# Tokens per CJK character for each encoding, and ASCII characters per token (both),
# fitted on MemoryBank (Chinese), LoCoMo (English) and this package's code so that each
# total is within 10% of the encoding (benchmarks/bench_context.py measures it). Other
# characters, full-width punctuation among them, count one token each.
CJK_TOKENS = {"cl100k_base": 1.2, "o200k_base": 0.7}
ASCII_PER_TOKEN = 4.3


def estimate_tokens(text: str, encoding: str = "cl100k_base") -> int:
    """A cheap token estimate of ``encoding``'s count (cl100k's for an encoding not
    calibrated): no tokenizer loaded, so usable on the ``log`` hot path.

    Recall's budget and the turns' stored ``token_estimate`` use the cl100k form; a
    stored estimate is never recomputed, so rows written before a recalibration stay.
    """
    ascii_chars = len(text) if text.isascii() else len(text.encode("ascii", "ignore"))
    if ascii_chars == len(text):
        cjk = 0
    elif not _use_loop(text):
        cjk = sum(map(len, cjk_run().findall(text)))
    else:
        cjk = sum(1 for char in text if _is_cjk(char))
    other = len(text) - ascii_chars - cjk
    per_cjk = CJK_TOKENS.get(encoding, CJK_TOKENS["cl100k_base"])
    # rounded up: the estimate of joined texts never exceeds the sum of theirs
    return math.ceil(round(cjk * per_cjk + other + ascii_chars / ASCII_PER_TOKEN, 6))
