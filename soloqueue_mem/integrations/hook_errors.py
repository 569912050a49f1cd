"""The hook error log, ``logs/hook-errors.jsonl`` in the data directory.

Hooks fail open: an error never reaches the agent as a failure, so it is appended
here (one JSON object a line: ``at``, ``hook``, ``event``, ``code``, ``message``) and
counted by ``stats``.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from soloqueue_mem import jsonio
from soloqueue_mem.clock import iso
from soloqueue_mem.fsio import write_all
from soloqueue_mem.home import Home, ensure_private_dir

MAX_MESSAGE = 2000  # characters of one error message kept


def errors_file(home: Home) -> Path:
    return home.root / "logs" / "hook-errors.jsonl"


def append_error(
    home: Home, hook: str, event: str | None, code: str, message: str, now: datetime
) -> None:
    """Append one error line (creating the store and ``logs/`` when missing)."""
    home.ensure()
    path = errors_file(home)
    ensure_private_dir(home.root, path.parent)
    entry = {"at": iso(now), "hook": hook, "event": event, "code": code}
    line = jsonio.dumps({**entry, "message": message[:MAX_MESSAGE]})
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(path, flags, 0o600)
    try:
        write_all(fd, (line + "\n").encode("utf-8", "replace"))
    finally:
        os.close(fd)


def count_errors(home: Home) -> int:
    """How many errors the hooks have logged (0: none, or no log yet)."""
    try:
        with open(errors_file(home), "rb") as log:
            return sum(1 for line in log if line.strip())
    except (FileNotFoundError, NotADirectoryError):
        return 0
