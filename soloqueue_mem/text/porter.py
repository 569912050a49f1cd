"""The Porter stemmer (M. F. Porter, "An algorithm for suffix stripping", 1980), as
SQLite's FTS5 ``porter`` tokenizer applies it to the words of the SQLite index.

The PostgreSQL index stems its English words with this so that ``deploys``,
``deployed`` and ``deploying`` find each other there as they do in SQLite (its
``simple`` configuration does not stem, and the server's ``english`` one is Porter's
later algorithm, with stop words). Like FTS5 it works on a word's UTF-8 bytes: a
byte that is not an ASCII letter counts as a consonant (``straße`` → ``straß``), and
words shorter than 3 or longer than 64 bytes are left as they are. Words come
lower-cased.
"""

from __future__ import annotations

from functools import lru_cache

_VOWELS = frozenset("aeiou")


def _consonant(word: str, i: int) -> bool:
    ch = word[i]
    if ch in _VOWELS:
        return False
    if ch == "y":
        return i == 0 or not _consonant(word, i - 1)
    return True


def _measure(stem: str) -> int:
    """m in [C](VC)^m[V]: the number of vowel-consonant sequences."""
    m, previous_vowel = 0, False
    for i in range(len(stem)):
        vowel = not _consonant(stem, i)
        if previous_vowel and not vowel:
            m += 1
        previous_vowel = vowel
    return m


def _has_vowel(stem: str) -> bool:
    return any(not _consonant(stem, i) for i in range(len(stem)))


def _double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _consonant(word, len(word) - 1)


def _cvc(word: str) -> bool:
    """*o: ends consonant-vowel-consonant, the last not w, x or y."""
    n = len(word)
    return (
        n >= 3
        and _consonant(word, n - 3)
        and not _consonant(word, n - 2)
        and _consonant(word, n - 1)
        and word[-1] not in "wxy"
    )


def _step1a(word: str) -> str:
    if (word.endswith("sses") and len(word) > 4) or (word.endswith("ies") and len(word) > 3):
        return word[:-2]  # FTS5 keeps a letter before the suffix: "ies" -> "ie"
    if word.endswith("ss"):
        return word
    if word.endswith("s"):
        return word[:-1]
    return word


def _step1b(word: str) -> str:
    if word.endswith("eed"):
        return word[:-1] if _measure(word[:-3]) > 0 else word
    for suffix in ("ed", "ing"):
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            return _step1b_tidy(stem) if _has_vowel(stem) else word
    return word


def _step1b_tidy(stem: str) -> str:
    if stem.endswith(("at", "bl", "iz")):
        return stem + "e"
    if _double_consonant(stem) and stem[-1] not in "lsz":
        return stem[:-1]
    if _measure(stem) == 1 and _cvc(stem):
        return stem + "e"
    return stem


def _step1c(word: str) -> str:
    return word[:-1] + "i" if word.endswith("y") and _has_vowel(word[:-1]) else word


_STEP2 = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"),
    ("izer", "ize"), ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"),
    ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"), ("ator", "ate"),
    ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"),
    ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"), ("logi", "log"),
)  # fmt: skip
_STEP3 = (
    ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"),
    ("ful", ""), ("ness", ""),
)  # fmt: skip
_STEP4 = (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
    "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
)  # fmt: skip


def _replace(word: str, rules: tuple[tuple[str, str], ...], least: int) -> str:
    """The longest matching rule's replacement where the stem's m > ``least``; a
    longest match whose stem is too short ends the step (no shorter rule applies)."""
    best = max((r for r in rules if word.endswith(r[0])), key=lambda r: len(r[0]), default=None)
    if best is None:
        return word
    stem = word[: -len(best[0])]
    return stem + best[1] if _measure(stem) > least else word


def _step4(word: str) -> str:
    suffix = max((s for s in _STEP4 if word.endswith(s)), key=len, default=None)
    if suffix is None:
        return word
    stem = word[: -len(suffix)]
    if _measure(stem) <= 1 or (suffix == "ion" and not stem.endswith(("s", "t"))):
        return word
    return stem


def _step5(word: str) -> str:
    if word.endswith("e"):
        m = _measure(word[:-1])
        if m > 1 or (m == 1 and not _cvc(word[:-1])):
            word = word[:-1]
    if word.endswith("ll") and _measure(word) > 1:
        word = word[:-1]
    return word


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """``word``'s Porter stem, as FTS5 makes it."""
    raw = word.encode("utf-8").decode("latin-1")  # one character per byte
    if not 3 <= len(raw) <= 64:
        return word
    raw = _step1c(_step1b(_step1a(raw)))
    raw = _step5(_step4(_replace(_replace(raw, _STEP2, 0), _STEP3, 0)))
    try:
        return raw.encode("latin-1").decode("utf-8")
    except UnicodeDecodeError:  # a cut inside a character (a "double consonant" byte)
        return word
