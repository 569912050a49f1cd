"""Reading a byte stream line by line with a cap on each line, for JSONL input.

A line over the limit is never held whole: its bytes are skipped up to its end and
:data:`TOO_LONG` stands for it. On a pipe or terminal the reader also says when no
more input is ready right now (``None``), so a slow producer can be acknowledged.
"""

from __future__ import annotations

import os
import select
from collections.abc import Iterator

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import BinaryIO

TOO_LONG = b"\0too long"  # stands for a line over the limit (its bytes are dropped)


def numbered_lines(stream: BinaryIO, limit: int) -> Iterator[tuple[int, bytes | None]]:
    """Numbered lines; ``None`` means "nothing more is ready right now"."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None
    if fd is None:
        yield from _buffered_lines(stream, limit)
        return
    buffer = b""
    start = 0  # where the unread part of ``buffer`` begins
    number = 0
    skipping = False  # inside an over-long line, waiting for its end
    while True:
        cut = buffer.find(b"\n", start)
        if cut >= 0:
            line, start = buffer[start : cut + 1], cut + 1
            number += 1
            yield number, TOO_LONG if skipping else line
            skipping = False
            continue
        buffer, start = buffer[start:], 0
        if len(buffer) > limit:
            buffer, skipping = b"", True
        if not select.select([fd], [], [], 0)[0]:
            yield 0, None
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        buffer += chunk
    if buffer or skipping:
        number += 1
        yield number, TOO_LONG if skipping else buffer


def _buffered_lines(stream: BinaryIO, limit: int) -> Iterator[tuple[int, bytes | None]]:
    number = 0
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        number += 1
        if len(line) > limit and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):
                line = stream.readline(limit + 1)
            yield number, TOO_LONG
        else:
            yield number, line
