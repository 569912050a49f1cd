"""Append-only JSONL (canonical) and Markdown (readable) session logs.

Appends happen under an exclusive ``flock`` on the JSONL file, one ``os.write`` per
batch of complete lines. A file that does not end in a newline has a torn tail from a
crashed writer: before the next append the fragment is moved to ``<file>.torn`` and the
file is cut back to its last newline, so a fragment is never merged into a record
(RELIABILITY I9). Readers skip an unparsable final line and report it.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator

from soloqueue_mem import faults, jsonio
from soloqueue_mem.errors import BadInput, StorageError
from soloqueue_mem.fsio import write_all
from soloqueue_mem.tuples import NamedTuple

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import Any

    from soloqueue_mem.home import StrPath

_APPEND = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
_TAIL_PROBE = 64 * 1024


class SessionLog:
    """An open, locked session log (JSONL plus its Markdown twin)."""

    def __init__(self, path: StrPath, fsync: bool = False) -> None:
        path = self.path = os.fspath(path)
        self.md_path = os.path.splitext(path)[0] + ".md"
        self._fsync = fsync
        try:
            self._fd = os.open(path, _APPEND, 0o600)
        except OSError as exc:
            raise StorageError(f"cannot open {path}: {exc.strerror}") from None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            self._set_aside_torn_tail()
            self.size = os.fstat(self._fd).st_size
        except BaseException as exc:
            os.close(self._fd)  # and its lock: a long-lived process must not keep either
            if isinstance(exc, OSError):
                raise StorageError(f"cannot open {exc.filename or path}: {exc.strerror}") from None
            raise

    def close(self) -> None:
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)

    def __enter__(self) -> SessionLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _set_aside_torn_tail(self) -> None:
        size = os.fstat(self._fd).st_size
        if size == 0 or os.pread(self._fd, 1, size - 1) == b"\n":
            return
        keep = _line_start(self._fd, size)
        fragment = _pread_all(self._fd, keep, size - keep)
        torn = self.path + ".torn"
        fd = os.open(torn, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, fragment + b"\n")
            os.fsync(fd)  # the fragment is the only copy of those bytes
        finally:
            os.close(fd)
        os.ftruncate(self._fd, keep)

    def append(self, records: list[dict[str, Any]], markdown: str) -> int:
        """Append ``records`` in one write, then the Markdown; return the new size."""
        data = "".join(jsonio.dumps_compact(r) + "\n" for r in records).encode("utf-8")
        try:
            if faults.is_active("log.mid_write"):
                write_all(self._fd, data[: len(data) // 2])
                faults.fault("log.mid_write")
            write_all(self._fd, data)
            if self._fsync:
                os.fsync(self._fd)
            self._append_markdown(markdown)
        except OSError as exc:
            self.truncate(self.size)
            raise StorageError(f"cannot write {self.path}: {exc.strerror}") from None
        self.size += len(data)
        return self.size

    def truncate(self, size: int) -> None:
        """Undo appends past ``size`` (the index transaction failed)."""
        os.ftruncate(self._fd, size)
        self.size = size

    def _append_markdown(self, text: str) -> None:
        fd = os.open(self.md_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            write_all(fd, text.encode("utf-8"))
        finally:
            os.close(fd)


def _pread_all(fd: int, offset: int, length: int) -> bytes:
    chunks = []
    while length > 0:
        chunk = os.pread(fd, min(length, 1 << 20), offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
        length -= len(chunk)
    return b"".join(chunks)


def _line_start(fd: int, end: int) -> int:
    """Offset just after the newline that precedes position ``end``."""
    position = end
    while position > 0:
        start = max(0, position - _TAIL_PROBE)
        chunk = os.pread(fd, position - start, start)
        cut = chunk.rfind(b"\n")
        if cut >= 0:
            return start + cut + 1
        position = start
    return 0


class LogLine(NamedTuple):
    number: int
    offset: int
    record: dict[str, Any] | None
    error: str | None = None


def read_lines(path: StrPath, offset: int = 0) -> Iterator[LogLine]:
    """Records from ``offset`` on; a bad line carries its error; a torn tail is the
    final line without a newline (reported as an error, never as a record)."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed in finally
    except FileNotFoundError:
        return
    number = 0
    try:
        handle.seek(offset)
        position = offset
        for raw in handle:
            number += 1
            start, position = position, position + len(raw)
            if not raw.endswith(b"\n"):
                yield LogLine(number, start, None, "torn tail (incomplete last line)")
                return
            try:
                record = jsonio.loads(raw)
            except BadInput as exc:
                yield LogLine(number, start, None, str(exc))
                continue
            if isinstance(record, dict):
                yield LogLine(number, start, record)
            else:
                yield LogLine(number, start, None, "not a JSON object")
    finally:
        handle.close()
