"""The ``export``/``import`` part of :class:`soloqueue_mem.Store` (dump format v2, on
either back end)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import IO, Any

from soloqueue_mem.api.base import StoreBase, check_ids, serialised
from soloqueue_mem.errors import NotFound


class TransferMethods(StoreBase):
    """Dumps in and out; :class:`soloqueue_mem.Store` inherits these methods."""

    @serialised
    def export(
        self,
        out: IO[str],
        *,
        group: str | None = None,
        agent: str | None = None,
        with_blobs: bool = False,
    ) -> int:
        """Write the dump (``export``) to the text file ``out``, streamed; the number of
        lines written (the header included)."""
        from contextlib import ExitStack

        from soloqueue_mem import jsonio
        from soloqueue_mem.graph.db import SqliteGraph
        from soloqueue_mem.ops.export import Scope, Sources, export, open_sources

        check_ids(group=group, agent=agent)
        written = 0
        with ExitStack() as stack:
            if self._postgres() is None:
                names = ("memory", "artifacts", "state", "graph")
                memory, artifacts, state, graph = (self._db(name, create=False) for name in names)
                graph_db = None if graph is None else SqliteGraph(graph)
                sources = Sources(memory, artifacts, state, graph_db)
            else:  # the back end's connection; this host's artifacts and graph
                sources = open_sources(stack, self.home, self.config)
            for record in export(self.home, sources, Scope(group, agent), with_blobs):
                out.write(jsonio.dumps_compact(record) + "\n")
                written += 1
        return written

    @serialised
    def import_dump(self, path: str | os.PathLike[str]) -> dict[str, Any]:
        """Import an ``export`` dump file (``import dump``): checked whole first, then
        put back idempotently; the report (``added``, ``existing``, ``conflicts``,
        ``redacted``, ``skipped``)."""
        from contextlib import ExitStack

        from soloqueue_mem.ops.import_dump import import_dump, target_opener

        def lines() -> Iterator[bytes]:
            try:
                handle = open(path, "rb")  # noqa: SIM115 - closed below
            except OSError as exc:
                raise NotFound(f"cannot read {os.fspath(path)}: {exc.strerror}") from None
            with handle:
                yield from handle

        with ExitStack() as stack:
            return import_dump(lines, target_opener(stack, self.home, self.config))
