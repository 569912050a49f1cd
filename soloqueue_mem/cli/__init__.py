"""The ``soloqueue-mem`` command line: parse, call the core, render. Nothing else.

Start-up matters because hooks run ``log`` once per agent turn. A plain ``log`` or
``artifact save`` call (only options the fast parser knows, valid values) is parsed by
``cli.fast`` without importing Typer, whose import alone costs 3.5 times a bare Python
process that inserts a row in SQLite; everything else, ``log --help`` and every error
included, goes through the Typer app in ``cli.app``. Rich, jieba and tiktoken load only
inside the functions that need them.
"""

from __future__ import annotations

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


def main() -> None:
    _guard_standard_streams()
    argv = sys.argv[1:]
    from soloqueue_mem.cli.fast import run_fast

    code = run_fast(argv)
    if code is not None:
        sys.exit(code)
    from soloqueue_mem.cli.app import build_app, command_named

    build_app(command_named(argv))()
