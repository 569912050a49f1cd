"""Start a background process that outlives the command that started it."""

from __future__ import annotations

import os
import sys


def spawn(module: str, args: list[str], inherit_fd: int | None = None) -> None:
    """``python -m module args…`` in its own session, stdio on /dev/null, never reaped.
    ``inherit_fd`` (say, a held lock) stays open in the child."""
    if inherit_fd is not None:
        os.set_inheritable(inherit_fd, True)
    argv = [sys.executable, "-m", module, *args]
    quiet = [(os.POSIX_SPAWN_OPEN, n, os.devnull, os.O_RDWR, 0) for n in (0, 1, 2)]
    # posix_spawn, not subprocess: no import on a fast command's path, and no child to reap.
    os.posix_spawn(sys.executable, argv, os.environ, file_actions=quiet, setsid=True)
