"""Which characters are CJK, and the index form of a text.

FTS5's ``unicode61`` would treat a whole run of Han characters as one token, so the
full-text indexes see each maximal CJK run ``c1 c2 … cn`` as its overlapping bigrams
``c1c2 c2c3 … c(n-1)cn`` followed by the run's last character alone: every character
occurrence starts exactly one token. A query word of two or more characters becomes
the phrase of its bigrams, which matches exactly where the word occurs inside a run; a
single character becomes the prefix query ``"c"*`` (:func:`soloqueue_mem.text.fts.
match_expression`). Word-level precision from the query side, no segmentation on the
write path, and a common word costs the posting list of its bigrams, not those of its
(much commoner) characters.

:func:`spaced_form`, one token per CJK character, is the form the indexes had before
(memory.db migration 13 re-indexed them); the PostgreSQL back end keeps it.
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
# all (a ``log --batch``), the compiled expression (~8x faster) pays for itself. A
# process that has compiled it already (any query with CJK text) always uses it.
_LOOP_LIMIT = 4096
_LOOP_BUDGET = 32768
_looped = 0


def _use_loop(text: str) -> bool:
    """Whether to scan ``text`` with the plain loop rather than the expression."""
    global _looped
    if len(text) > _LOOP_LIMIT or _looped > _LOOP_BUDGET or cjk_run.cache_info().currsize:
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


def spaced_form(text: str) -> str:
    """CJK characters separated by spaces: one token per character (the PostgreSQL
    back end's form, and the SQLite indexes' before migration 13)."""
    return text if text.isascii() else cjk_run().sub(_spaced, text)


def run_tokens(run: str) -> list[str]:
    """The index tokens of one CJK run: its bigrams, then its last character."""
    return [run[n : n + 2] for n in range(len(run))]


def _bigrams(run: str) -> str:
    return " " + " ".join(run_tokens(run)) + " "


def _run_form(match: re.Match[str]) -> str:
    return _bigrams(match.group())


def index_form(text: str) -> str:
    """The text as the FTS5 indexes see it: each CJK run as its bigrams and last
    character, set apart by spaces (see the module docstring)."""
    if text.isascii():
        return text
    if not _use_loop(text):
        return cjk_run().sub(_run_form, text)
    parts: list[str] = []
    done = 0  # text before this offset is in parts
    start = -1  # where the current CJK run began, -1 outside a run
    for offset, char in enumerate(text):
        if _is_cjk(char):
            if start < 0:
                start = offset
        elif start >= 0:
            parts += (text[done:start], _bigrams(text[start:offset]))
            done, start = offset, -1
    if start >= 0:
        parts += (text[done:start], _bigrams(text[start:]))
        done = len(text)
    parts.append(text[done:])
    return "".join(parts)


def index_forms(texts: list[str]) -> list[str]:
    """:func:`index_form` of many texts: the regular expression pays for itself here."""
    pattern = cjk_run()
    return [text if text.isascii() else pattern.sub(_run_form, text) for text in texts]


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
