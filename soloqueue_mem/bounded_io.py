"""Reading what a user names, with bounds (issue 30 M5).

A path given to read is opened only when it is a regular file: a FIFO would block
the command until a writer comes, and ``/dev/zero`` or ``/dev/urandom`` never end.
The open itself does not block on a FIFO (``O_NONBLOCK``, dropped again for a regular
file). What is read from a file or stdin then passes through :class:`Capped`, which
refuses the stream once it gives more than its cap, so nothing unbounded is ever
written or held. Both refusals are BadInput (exit 65) with one line naming the path
or the setting.
"""

from __future__ import annotations

import fcntl
import os
import stat
from typing import IO, BinaryIO

from soloqueue_mem.errors import BadInput, NotFound


class NotRegularFile(BadInput, code="not_regular_file"):
    """A FIFO, a socket, a device or a folder where a regular file was asked for."""


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """The regular file at ``path``, open for binary reading; NotRegularFile for a
    FIFO, a socket, a device or a folder, NotFound when it cannot be opened."""
    name = os.fspath(path)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise NotFound(f"cannot read {name}: {exc.strerror}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise NotRegularFile(
            f"{name} is not a regular file (a {_kind(mode)}): give a file, or '-' to read stdin"
        )
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    return os.fdopen(fd, "rb")


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "device"


class Capped:
    """``source`` read through, refused (BadInput) once it gives more than ``cap``
    bytes; ``setting`` names the configuration key that sets the cap."""

    def __init__(self, source: IO[bytes], cap: int, setting: str) -> None:
        self.source = source
        self.cap = cap
        self.setting = setting
        self.given = 0

    def read(self, size: int = -1) -> bytes:
        room = self.cap - self.given + 1  # one byte past the cap tells it was passed
        data = self.source.read(room if size < 0 else min(size, room))
        self.given += len(data)
        if self.given > self.cap:
            raise BadInput(f"the input is larger than {self.setting} ({self.cap} bytes)")
        return data


def read_capped_line(source: IO[bytes], cap: int, setting: str, number: int) -> bytes:
    """The next line of ``source`` (b"" at its end); BadInput naming line ``number``
    when it is longer than ``cap`` bytes."""
    line = source.readline(cap + 1)
    if len(line) > cap:
        raise BadInput(f"the line is longer than {setting} ({cap} bytes)", number)
    return line
