"""Writing a dump: its lines and end record, and ``export -o``'s file (issue 30 M1/L6).

The file is written under a temporary name in the target's folder (``.NAME.*.tmp``,
mode 0600: a dump holds everything the store holds), fsynced, then linked to its name
(never over an existing file) and the folder fsynced: a reader, or a crash, sees no
file or the whole one, never a dump cut short.
"""

from __future__ import annotations

import errno
import hashlib
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from soloqueue_mem import jsonio
from soloqueue_mem.errors import NotFound, UsageError
from soloqueue_mem.ops.dump_format import end_record


def dump_text(records: Iterable[dict[str, Any]]) -> Iterator[str]:
    """The dump's lines: ``records`` (header first), then the end record."""
    digest = hashlib.sha256()
    counts: dict[str, int] = {}
    for number, record in enumerate(records):
        line = jsonio.dumps_compact(record) + "\n"
        yield line
        digest.update(line.encode("utf-8"))
        if number:  # the header is not a record
            counts[record["kind"]] = counts.get(record["kind"], 0) + 1
    yield jsonio.dumps_compact(end_record(counts, digest.hexdigest())) + "\n"


def write_dump(records: Iterable[dict[str, Any]], write: Callable[[str], object]) -> int:
    """Write the dump of ``records`` (header first); the number of lines written."""
    lines = 0
    for line in dump_text(records):
        write(line)
        lines += 1
    return lines


@contextmanager
def new_file(path: str) -> Iterator[IO[str]]:
    """A text file that appears at ``path`` whole, once the block ends without an
    error (UsageError when ``path`` exists: never overwritten)."""
    if os.path.lexists(path):
        raise UsageError(f"{path} exists; export never overwrites a file")
    folder, name = os.path.split(os.path.abspath(path))
    temporary = os.path.join(folder, f".{name}.{os.urandom(6).hex()}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600)  # fmt: skip
    except OSError as exc:
        raise NotFound(f"cannot write {path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        _publish(temporary, path)
        _fsync_folder(folder)
    finally:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass


def _publish(temporary: str, path: str) -> None:
    """Give the finished file its name, never replacing a file that took it meanwhile."""
    try:
        os.link(temporary, path)
    except FileExistsError:
        raise UsageError(f"{path} exists; export never overwrites a file") from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP):
            raise NotFound(f"cannot write {path}: {exc.strerror}") from None
        if os.path.lexists(path):  # a file system without hard links
            raise UsageError(f"{path} exists; export never overwrites a file") from None
        os.rename(temporary, path)


def _fsync_folder(folder: str) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
