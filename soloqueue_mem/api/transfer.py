"""The ``export``/``import`` part of :class:`soloqueue_mem.Store` (dump format v3, on
either back end)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from soloqueue_mem.api.base import StoreBase, check_ids, serialised
from soloqueue_mem.tuples import Any

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import IO

    from soloqueue_mem.integrations.claude_transcript import FileResult


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
        lines written (the header and the end record included)."""
        from contextlib import ExitStack

        from soloqueue_mem.ops.dump_file import write_dump
        from soloqueue_mem.ops.export import Scope, export
        from soloqueue_mem.storage.transfer import open_sources

        check_ids(group=group, agent=agent)
        with ExitStack() as stack:
            sources = open_sources(stack, self.home, self.config)
            records = export(self.home, sources, Scope(group, agent), with_blobs)
            return write_dump(records, out.write)

    @serialised
    def import_dump(self, path: str | os.PathLike[str] | IO[bytes]) -> dict[str, Any]:
        """Import an ``export`` dump (``import dump``), a file's path or a seekable binary
        file (it is read twice): checked whole first, then put back idempotently; the
        report (``added``, ``existing``, ``conflicts``, ``redacted``, ``skipped``)."""
        from contextlib import ExitStack

        from soloqueue_mem.bounded_io import open_regular
        from soloqueue_mem.ops.import_dump import dump_lines, import_dump
        from soloqueue_mem.storage.transfer import target_opener

        cap = self.config.max_dump_line_bytes
        with ExitStack() as stack:
            source = (
                stack.enter_context(open_regular(path))
                if isinstance(path, (str, os.PathLike))
                else path
            )
            opener = target_opener(stack, self.home, self.config)
            return import_dump(lambda: dump_lines(source, cap), opener)

    @serialised
    def import_memories_v1(
        self, data: bytes, *, group: str = "default", agent: str = "default"
    ) -> dict[str, Any]:
        """Import a v1 ``memories.json`` document (``import memories-v1``): every entry is
        converted first (``BadInput`` before any write), then stored under (group,
        agent); the report."""
        from soloqueue_mem import jsonio
        from soloqueue_mem.ops.memories_v1 import convert_all

        check_ids(group=group, agent=agent)
        memories = convert_all(jsonio.loads(data), group, agent, self.now())
        return self._storage().import_v1(memories)

    @serialised
    def import_claude_code(
        self,
        files: Sequence[str | os.PathLike[str]],
        *,
        group: str = "default",
        agent: str = "default",
        progress: Callable[[int], None] | None = None,
    ) -> list[FileResult]:
        """Import Claude Code transcripts (``import claude-code``) into sessions of
        (group, agent), idempotently; one result per file, its bad lines in
        ``.rejected`` (the others are imported). ``progress(lines)`` as it goes."""
        from pathlib import Path

        from soloqueue_mem.integrations.claude_transcript import import_transcripts
        from soloqueue_mem.storage.catalog import offloader

        check_ids(group=group, agent=agent)
        self.home.ensure()
        now = self.now()
        offload = offloader(self.home, self.config, now)
        try:
            paths = [Path(file) for file in files]
            storage = self._storage()
            scope = (group, agent)
            return list(
                import_transcripts(storage, paths, scope, self.config, now, offload, progress)
            )
        finally:
            offload.close()
