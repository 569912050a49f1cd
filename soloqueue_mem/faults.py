"""Fault points for crash tests (RELIABILITY §4): a no-op unless testing is enabled.

``SOLOQUEUE_FAULT=<point>:<action>`` with ``SOLOQUEUE_TESTING=1`` makes the process act
at that point: ``kill`` (SIGKILL itself), ``stop`` (SIGSTOP itself, until the test
sends SIGCONT: a race replayed in a chosen order), ``eio``/``enospc`` (raise that
OSError), ``sleep=MS``, or ``mark`` (write ``fault <point>`` to stderr: an event a test
awaits). Read from the environment here rather than in the CLI's composition root
because a crash test must reach code paths that take no configuration.
"""

from __future__ import annotations

import os

POINTS = (
    "log.mid_write",  # half of the JSONL bytes written, then the action
    "log.before_commit",  # JSONL appended, index transaction not yet committed
    "log.after_commit",  # committed, not yet acknowledged on stdout
    "artifact.after_tmp_write",  # content staged in a temporary file, not fsynced
    "artifact.after_fsync",  # temporary file fsynced, not renamed
    "artifact.after_rename",  # blob at its final path, folder not fsynced, no row
    "artifact.after_row_commit",  # row committed, not yet acknowledged
    "artifact.skip_lock",  # negative control for the save/GC race: saves take no lock
    "gc.after_phase1_commit",  # expired rows deleted, blobs untouched
    "gc.after_k_unlinks",  # phase 2 stopped after deleting some blobs (k = 1)
    "digest.before_write",  # a session's stretch extracted, its transaction not begun
    "lock.blocked",  # an exclusive lock taken with wait found the lock held: it waits now
    "graph.mid_task",  # a graph task's nodes written, its transaction not committed
    "migrate.after_batch",  # migrate --to: a batch committed to PostgreSQL, the rest not
    "reindex.mid_batch",  # PostgreSQL re-index: a batch's rows rewritten, not committed
    "reindex.after_batch",  # PostgreSQL re-index: a batch and its progress committed
    "import.before_commit",  # import: a session's log appended, its index not committed
    "serve.handler",  # serve: a request's handler starts, in its worker thread
)


def _configured() -> tuple[str, str] | None:
    if os.environ.get("SOLOQUEUE_TESTING") != "1":
        return None
    spec = os.environ.get("SOLOQUEUE_FAULT", "")
    point, _, action = spec.partition(":")
    return (point, action) if point else None


_ACTIVE = _configured()


def fault(point: str) -> None:
    """Act at ``point`` if the test configuration names it."""
    if _ACTIVE is None or _ACTIVE[0] != point:
        return
    import errno
    import signal  # its enums cost a bare process's start-up: only when a test acts
    import time

    action = _ACTIVE[1]
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif action == "stop":
        os.kill(os.getpid(), signal.SIGSTOP)
    elif action in ("eio", "enospc"):
        code = errno.EIO if action == "eio" else errno.ENOSPC
        raise OSError(code, os.strerror(code))
    elif action.startswith("sleep="):
        time.sleep(int(action.removeprefix("sleep=")) / 1000)
    elif action == "mark":
        os.write(2, f"fault {point}\n".encode())


def is_active(point: str) -> bool:
    return _ACTIVE is not None and _ACTIVE[0] == point
