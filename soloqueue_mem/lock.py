"""Whole-store maintenance locks: ``flock`` on a dedicated file (``.gc.lock``).

Saves hold it shared from blob write to row commit; GC holds it exclusive while it
re-checks and deletes. ``flock`` (not POSIX record locks, which vanish when any other
descriptor of the file is closed in the same process) is released by the kernel when
the holder dies, and the descriptor is close-on-exec so children never inherit it.
The exclusive holder writes its pid and start time into the file, so contention can
say who holds it.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from typing import Any

from soloqueue_mem import faults
from soloqueue_mem.errors import StorageError, TempFail

TYPE_CHECKING = False
if TYPE_CHECKING:
    from soloqueue_mem.home import StrPath


def _open(path: StrPath) -> int:
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise StorageError(f"cannot open lock {path}: {exc.strerror}") from None


def shared(path: StrPath) -> _Shared:
    """Hold the lock shared (many at once); waits while an exclusive holder works."""
    return _Shared(path)


def exclusive(
    path: StrPath,
    what: str,
    wait: bool = False,
    timeout: float | None = None,
    note_holder: bool = True,
) -> _Exclusive:
    """Hold the lock alone. Without ``wait``, a held lock raises TempFail (exit 75)
    naming the holder; with ``wait``, block (up to ``timeout`` seconds if given).
    ``note_holder=False`` leaves the file's content alone (a lock on a state file)."""
    return _Exclusive(path, what, wait, timeout, note_holder)


class _Shared:
    """The context manager of :func:`shared` (a class: ``contextlib`` costs the graph's
    enqueue path, which only checks the worker's lock, about a millisecond)."""

    def __init__(self, path: StrPath) -> None:
        self.path = path
        self.fd = -1

    def __enter__(self) -> None:
        self.fd = _open(self.path)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_SH)
        except BaseException:
            os.close(self.fd)
            raise

    def __exit__(self, *exc: object) -> None:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
        finally:
            os.close(self.fd)


class _Exclusive:
    """The context manager of :func:`exclusive`."""

    def __init__(
        self, path: StrPath, what: str, wait: bool, timeout: float | None, note_holder: bool
    ) -> None:
        self.path, self.what, self.wait = path, what, wait
        self.timeout, self.note_holder = timeout, note_holder
        self.fd = -1

    def __enter__(self) -> None:
        self.fd = _open(self.path)
        try:
            _acquire(self.fd, self.path, self.what, self.wait, self.timeout)
            if self.note_holder:
                os.ftruncate(self.fd, 0)
                record = {"pid": os.getpid(), "what": self.what, "since": time.time()}
                os.pwrite(self.fd, json.dumps(record).encode(), 0)
        except BaseException:
            os.close(self.fd)  # closing releases a lock taken before the failure
            raise

    def __exit__(self, *exc: object) -> None:
        try:
            if self.note_holder:
                os.ftruncate(self.fd, 0)
            fcntl.flock(self.fd, fcntl.LOCK_UN)
        finally:
            os.close(self.fd)


def _acquire(fd: int, path: StrPath, what: str, wait: bool, timeout: float | None) -> None:
    deadline = None if timeout is None else time.monotonic() + timeout
    delay = 0.01
    blocked = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if not wait:
                raise TempFail(
                    f"another {what} is running ({holder(path)}); try again later or use --wait"
                ) from None
            if deadline is not None and time.monotonic() >= deadline:
                name = os.path.basename(path)
                raise TempFail(
                    f"{name} stayed held for {timeout:g} s ({holder(path)}); try again later"
                ) from None
        if not blocked:
            blocked = True
            faults.fault("lock.blocked")
        if deadline is None:
            fcntl.flock(fd, fcntl.LOCK_EX)  # no deadline: let the kernel wake us
            return
        time.sleep(delay)
        delay = min(delay * 2, 0.5)


def holder(path: StrPath) -> str:
    """Who holds the exclusive lock, as far as the lock file tells."""
    try:
        info = json.loads(_read(path) or b"{}")
        since = time.strftime("%H:%M:%S", time.localtime(info["since"]))
        return f"pid {info['pid']} since {since}"
    except (OSError, ValueError, KeyError, TypeError):
        return "held by another process"


def read_state(path: StrPath) -> dict[str, Any]:
    """A run's JSON state file (``.gc_state``, ``.consolidate_state``); {} if unreadable."""
    try:
        data = json.loads(_read(path) or b"{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _read(path: StrPath) -> bytes:
    with open(path, "rb") as file:
        return file.read()


def write_state(path: StrPath, state: dict[str, Any]) -> None:
    """Rewrite a state file in place: the run holds its flock, so no rename."""
    fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(state).encode(), 0)
    finally:
        os.close(fd)
