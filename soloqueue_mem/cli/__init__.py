"""The ``soloqueue-mem`` command line: parse, call the core, render. Nothing else.

Start-up matters because hooks run ``log`` once per agent turn. A plain ``log`` or
``artifact save`` call (only options the fast parser knows, valid values) is parsed by
``cli.fast`` without importing Typer, whose import alone costs 3.5 times a bare Python
process that inserts a row in SQLite; everything else, ``log --help`` and every error
included, goes through the Typer app in ``cli.app``. Rich, jieba and tiktoken load only
inside the functions that need them.
"""

from __future__ import annotations

import io
import os
import sys

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import Any


def __getattr__(name: str) -> Any:
    """``app``, ``build_app`` and ``COMMANDS`` live in :mod:`soloqueue_mem.cli.app`."""
    if name in ("build_app", "COMMANDS", "command_named"):
        from soloqueue_mem.cli import app as app_module

        return getattr(app_module, name)
    if name == "app":  # the full app, for tests and completion scripts
        from soloqueue_mem.cli.app import build_app

        return build_app()
    raise AttributeError(name)


def _guard_standard_streams() -> None:
    """Reopen closed fds 0-2 on /dev/null before anything else opens a file.

    Trigger: started with ``>&-`` or ``<&-``. Why: the next file opened (a database,
    a session log) would get fd 1 and receive whatever is printed. Outcome: output
    is discarded instead of corrupting data.
    """
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            os.open(os.devnull, os.O_RDWR)  # the lowest free descriptor: this one
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115


class _WholeWrites(io.FileIO):
    """stdout's file, each write finished or failed: never silently cut short."""

    def write(self, data: Any) -> int | None:  # type: ignore[override]  # None: would block
        view = memoryview(data).cast("B")
        done = 0
        while done < len(view):
            written = super().write(view[done:])
            if written is None:  # a non-blocking stdout that is full: as before, the
                return done or None  # buffered layer's BlockingIOError
            done += written
        return done


def _stdout_writes_whole() -> None:
    """Put stdout's text layer on :class:`_WholeWrites`.

    Trigger: the reader of a pipe goes away (``| head -c 10``) during a write larger
    than the pipe has room for. Why: the kernel takes part of it and returns that
    count; Python's buffered and text layers hand the short count back or ignore it
    (CPython gh-85393), so the rest was dropped without an error and a table, a
    session export or ``artifact read`` exited 0. Outcome: the next write raises
    BrokenPipeError, which the boundary turns into exit 141 with nothing on stderr.
    Only the process's own stdout is replaced (not a test's capture).
    """
    stdout = sys.stdout
    if stdout is not sys.__stdout__ or not isinstance(stdout, io.TextIOWrapper):
        return
    stdout.flush()
    raw = _WholeWrites(stdout.fileno(), "w", closefd=False)
    sys.stdout = io.TextIOWrapper(
        io.BufferedWriter(raw),
        encoding=stdout.encoding,
        errors=stdout.errors,
        line_buffering=stdout.line_buffering,
        write_through=stdout.write_through,
    )


def _guard_terminal() -> None:
    """On a terminal, stdout sanitises whatever is printed (see ``TerminalStream``)."""
    if sys.stdout.isatty():
        from soloqueue_mem.sanitize import TerminalStream

        sys.stdout = TerminalStream(sys.stdout)  # type: ignore[assignment]


def main() -> None:
    _guard_standard_streams()
    _stdout_writes_whole()
    _guard_terminal()
    argv = sys.argv[1:]
    from soloqueue_mem.cli.fast import run_fast

    code = run_fast(argv)
    if code is not None:
        sys.exit(code)
    from soloqueue_mem.cli.app import build_app, command_named

    build_app(command_named(argv))()
