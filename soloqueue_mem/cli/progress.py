"""A Rich progress line on stderr, only when a person is watching (a terminal)."""

from __future__ import annotations

import sys
from typing import Any


class ProgressLine:
    """``with ProgressLine(quiet, "scanning blobs") as line:`` — ``line`` is None when
    stderr is not a terminal (cron, pipes) or ``quiet``; else it has :meth:`advance`
    and :meth:`update`. Rich is imported only in the first case."""

    def __init__(self, quiet: bool, label: str) -> None:
        self.enabled = not quiet and sys.stderr.isatty()
        self.label = label
        self.bar: Any = None
        self.task: Any = None

    def __enter__(self) -> ProgressLine | None:
        if not self.enabled:
            return None
        from rich.console import Console
        from rich.progress import Progress

        self.bar = Progress(transient=True, console=Console(stderr=True))
        self.bar.start()
        self.task = self.bar.add_task(self.label, total=None)
        return self

    def advance(self, count: int) -> None:
        self.bar.advance(self.task, count)

    def update(self, done: int, total: int) -> None:
        self.bar.update(self.task, completed=done, total=total)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
