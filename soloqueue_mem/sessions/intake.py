"""Reading events from stdin: capped, strictly decoded, validated before any write.

Two shapes: one JSON document (an event object, or an array of them, accepted or
rejected as a whole), and a JSONL stream (``--batch``), where each line stands alone and
a bad line is reported with its number while the good ones are logged. The stream
reader tells the writer when no more input is ready, so a slow producer (a live hook)
still gets each event acknowledged promptly.
"""

from __future__ import annotations

import os
import select
from collections.abc import Iterator
from typing import BinaryIO

from soloqueue_mem import jsonio
from soloqueue_mem.errors import BadInput
from soloqueue_mem.sessions.events import Event, parse_event
from soloqueue_mem.sessions.writer import Flush, Item, Rejected


def read_document(stream: BinaryIO, max_bytes: int) -> list[Event]:
    """Events from one JSON document; any bad part rejects the whole document."""
    data = stream.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise BadInput(f"input is larger than {max_bytes} bytes (use --batch for streams)")
    if not data.strip():
        raise BadInput("no input: expected a JSON event on stdin")
    value = jsonio.loads(data, line=1)
    if isinstance(value, list):
        events = []
        for number, item in enumerate(value, start=1):
            try:
                events.append(parse_event(item))
            except BadInput as exc:
                raise BadInput(f"item {number}: {exc.reason}") from None
        return events
    return [parse_event(value, line=1)]


def read_batch(stream: BinaryIO, max_line_bytes: int) -> Iterator[Item]:
    """``(line, event)`` or :class:`Rejected` per non-blank line, :class:`Flush` when idle."""
    for number, raw in _lines(stream, max_line_bytes):
        if raw is None:
            yield Flush()
            continue
        if raw is _TOO_LONG:
            yield Rejected(number, f"line longer than {max_line_bytes} bytes")
            continue
        if not raw.strip():
            continue
        try:
            yield number, parse_event(jsonio.loads(raw, line=number), line=number)
        except BadInput as exc:
            yield Rejected(number, exc.reason)


_TOO_LONG = b"\0too long"


def _lines(stream: BinaryIO, limit: int) -> Iterator[tuple[int, bytes | None]]:
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
            yield number, _TOO_LONG if skipping else line
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
        yield number, _TOO_LONG if skipping else buffer


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
            yield number, _TOO_LONG
        else:
            yield number, line
