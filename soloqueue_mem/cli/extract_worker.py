"""The background process of ``extract_on_log``: ``python -m
soloqueue_mem.cli.extract_worker ROOT LOCK_FD TARGETS_JSON``.

Started by ``log`` (see :func:`start`), detached from it; it inherits a shared lock on
``.extract.lock`` and holds it until it is done (on PostgreSQL too: the lock is this
host's, the claims are the database's, :mod:`soloqueue_mem.lifecycle.on_log`). A failure
here loses nothing: the turns it did not extract are extracted when the session is
digested.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from soloqueue_mem import jsonio
from soloqueue_mem.cli.detached import spawn

LOCK_FILE = ".extract.lock"


def start(root: Path, targets: list[list]) -> None:
    """Start a worker for ``targets`` (``[group, agent, session, turn_index]``)."""
    import fcntl

    fd = os.open(root / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)  # waits only while someone waits for all workers
        spawn(__name__, [str(root), str(fd), jsonio.dumps_compact(targets)], inherit_fd=fd)
    finally:
        os.close(fd)  # the worker's copy keeps the lock


def main(argv: list[str]) -> None:
    from soloqueue_mem.clock import now
    from soloqueue_mem.config import load_config
    from soloqueue_mem.home import Home
    from soloqueue_mem.lifecycle.vocabulary import vocabulary
    from soloqueue_mem.sessions.events import SessionKey
    from soloqueue_mem.storage import open_backend

    home, targets = Home(Path(argv[1])), jsonio.loads(argv[3])
    config = load_config(home.config_file)
    keys = [(SessionKey(*target[:3]), target[3]) for target in targets]
    words = vocabulary(config.predicates)
    try:
        backend = open_backend(home, config)
        try:
            backend.extract_on_log(keys, now(), words)
        finally:
            backend.close()
    finally:
        os.close(int(argv[2]))


if __name__ == "__main__":
    main(sys.argv)
