"""The offline path of seed 002 §6 (no model configured): extractive rules.

- Segmentation (§6.2): each user or assistant message is a turn boundary; inside it the
  text splits at sentence ends (。！？!?；; and ". ") and line breaks; neighbouring short
  sentences of one message are joined while the piece stays within ``MAX_PIECE`` (200)
  characters, and a longer sentence is cut at a comma or space (hard at 200).
  Pronouns: a piece that *starts* with a third-person pronoun (它/他/她/它们/他们/她们,
  It/He/She/They/This/That) gets it replaced by the previous piece's best keyword that
  is a name (capitalised inside the piece), else its best Chinese keyword — usually the
  thing just talked about ("我们选了 PostgreSQL。它支持 JSONB" → "PostgreSQL 支持
  JSONB"). With neither, the pronoun stays; nothing else is resolved.
- Content (§6.3): keywords are the text's top 3-5 jieba TF-IDF keywords
  (:func:`soloqueue_mem.text.keywords.keywords`); the phrase is the first clause, cut to
  20 characters. Compression to a target length keeps the highest-scoring sentences
  (score: the keywords they hold, the better the keyword the more it counts) in their
  original order, and cuts the best one when none fits.
- Relation names (§6.4): "涉及" when the new node and the focus node share a keyword,
  otherwise none.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import NamedTuple

from soloqueue_mem.text.keywords import keywords as tfidf_keywords
from soloqueue_mem.text.lexicon import Lexicon

MAX_PIECE = 200
PHRASE_CHARS = 20
MAX_KEYWORDS = 5
SHARED_KEYWORD_RELATION = "涉及"
SPOKEN_ROLES = ("user", "assistant")


class Processed(NamedTuple):
    content: str
    phrase: str
    keywords: list[str]


@cache
def _sentence_end() -> re.Pattern[str]:
    return re.compile(r"(?<=[。！？!?；;])|(?<=\.)\s+|\n+")


@cache
def _clause_end() -> re.Pattern[str]:
    return re.compile(r"(?<=[，,、：:])|\s+")


@cache
def _leading_pronoun() -> re.Pattern[str]:
    return re.compile(r"^(?:它们|他们|她们|它|他|她|(?:It|He|She|They|This|That)\b)\s*")


def segment(messages: list[dict[str, str]], lexicon: Callable[[], Lexicon]) -> list[str]:
    """The pieces of the messages' spoken text, in order, pronouns resolved."""
    pieces: list[str] = []
    for message in messages:
        if message.get("role") in SPOKEN_ROLES:
            pieces += _pieces(message.get("content") or "")
    resolved: list[str] = []
    for piece in pieces:
        match = _leading_pronoun().match(piece)
        if match and resolved:
            referent = _referent(resolved[-1], lexicon)
            if referent:
                piece = (referent + " " + piece[match.end() :]).strip()
                piece = piece if len(piece) <= MAX_PIECE else piece[:MAX_PIECE]
        resolved.append(piece)
    return resolved


def _referent(previous: str, lexicon: Callable[[], Lexicon]) -> str | None:
    """What a pronoun most likely points at: the previous piece's best keyword that is
    a name (capitalised inside it), else its best Chinese keyword, else nothing."""
    found = tfidf_keywords(previous, lexicon, MAX_KEYWORDS)
    for word in found:
        match = re.search(re.escape(word), previous, re.IGNORECASE)
        if match and match.start() > 0 and match.group(0)[:1].isupper():
            return match.group(0)
    return next((word for word in found if not word.isascii()), None)


def _pieces(text: str) -> list[str]:
    sentences = [s.strip() for s in _sentence_end().split(text) if s and s.strip()]
    pieces: list[str] = []
    for sentence in sentences:
        for part in [sentence] if len(sentence) <= MAX_PIECE else _cut(sentence, MAX_PIECE):
            joinable = pieces and len(pieces[-1]) + 1 + len(part) <= MAX_PIECE
            if joinable and (_short(pieces[-1]) or _short(part)):
                pieces[-1] = _join(pieces[-1], part)
            else:
                pieces.append(part)
    return pieces


def _short(piece: str) -> bool:
    """A piece this short says too little alone ("好的。", "OK.")."""
    return len(piece) < 10


def _join(left: str, right: str) -> str:
    return left + (" " if left[-1:].isascii() and right[:1].isascii() else "") + right


def _cut(sentence: str, limit: int) -> list[str]:
    """``sentence`` in parts of at most ``limit`` characters, cut at clause boundaries."""
    parts: list[str] = []
    current = ""
    for clause in _clause_end().split(sentence):
        if not clause:
            continue
        while len(clause) > limit:
            if current:
                parts.append(current)
                current = ""
            parts.append(clause[:limit])
            clause = clause[limit:]
        candidate = _join(current, clause) if current else clause
        if len(candidate) <= limit:
            current = candidate
        else:
            parts.append(current)
            current = clause
    if current:
        parts.append(current)
    return [part.strip() for part in parts if part.strip()]


def process(text: str, lexicon: Callable[[], Lexicon], target: int | None = None) -> Processed:
    """Content, phrase and keywords of ``text``; shortened to ``target`` characters when
    given."""
    found = tfidf_keywords(text, lexicon, MAX_KEYWORDS)
    content = text if target is None or len(text) <= target else _compress(text, found, target)
    if content != text:
        kept = [word for word in found if word.lower() in content.lower()]
        found = kept or tfidf_keywords(content, lexicon, MAX_KEYWORDS)
    return Processed(content, phrase(content), found)


def phrase(text: str) -> str:
    """The first clause of ``text``, at most ``PHRASE_CHARS`` characters."""
    first = re.split(r"[。！？!?；;\n]|\.\s", text.strip(), maxsplit=1)[0].strip() or text.strip()
    cut = first[:PHRASE_CHARS]
    following = first[PHRASE_CHARS : PHRASE_CHARS + 1]
    if following.isascii() and following.isalnum() and " " in cut:
        cut = cut[: cut.rindex(" ")]  # not in the middle of an English word
    return cut.rstrip(" ，,、：:")


def _compress(text: str, found: list[str], target: int) -> str:
    sentences = [s.strip() for s in _sentence_end().split(text) if s and s.strip()]
    if len(sentences) < 2:
        sentences = [c.strip() for c in re.split(r"(?<=[，,、：:])", text) if c.strip()]
    weights = {word.lower(): len(found) - rank for rank, word in enumerate(found)}

    def score(sentence: str) -> float:
        lowered = sentence.lower()
        return sum(w for word, w in weights.items() if word in lowered) / (1 + len(sentence) / 50)

    ranked = sorted(range(len(sentences)), key=lambda n: (-score(sentences[n]), n))
    chosen: list[int] = []
    used = 0
    for n in ranked:
        extra = len(sentences[n]) + (1 if chosen else 0)
        if used + extra <= target:
            chosen.append(n)
            used += extra
    if not chosen:
        best = sentences[ranked[0]][:target]
        cut = best.rfind(" ") if best.isascii() else -1
        return (best[:cut] if cut > 0 else best).strip()
    return "".join(_spaced(sentences[n]) for n in sorted(chosen)).strip()[:target]


def _spaced(sentence: str) -> str:
    return sentence + " " if sentence[-1:].isascii() else sentence


def relation(new: Processed, focus_keywords: list[str]) -> str | None:
    """The rule-based relation name between a new node and a focus node."""
    shared = {w.lower() for w in new.keywords} & {w.lower() for w in focus_keywords}
    return SHARED_KEYWORD_RELATION if shared else None
