"""Reading events from stdin: capped, strictly decoded, validated before any write.

Two shapes: one JSON document (an event object, or an array of them, accepted or
rejected as a whole), and a JSONL stream (``--batch``), where each line stands alone and
a bad line is reported with its number while the good ones are logged. The stream
reader tells the writer when no more input is ready, so a slow producer (a live hook)
still gets each event acknowledged promptly.
"""

from __future__ import annotations

from collections.abc import Iterator

from soloqueue_mem import jsonio
from soloqueue_mem.errors import BadInput
from soloqueue_mem.sessions.events import Event, parse_event
from soloqueue_mem.sessions.writer import Flush, Item, Rejected

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import BinaryIO


def read_document(stream: BinaryIO, max_bytes: int) -> list[Event]:
    """Events from one JSON document; any bad part rejects the whole document."""
    return jsonio.read_document(stream, max_bytes, parse_event, "a JSON event")


def parse_array(items: list[object]) -> list[Event]:
    """Every item as an event; the first bad one rejects them all, naming its number."""
    return jsonio.parse_items(items, parse_event)


def read_batch(stream: BinaryIO, max_line_bytes: int) -> Iterator[Item]:
    """``(line, event)`` or :class:`Rejected` per non-blank line, :class:`Flush` when idle."""
    from soloqueue_mem.streams import TOO_LONG, numbered_lines  # not for one document

    for number, raw in numbered_lines(stream, max_line_bytes):
        if raw is None:
            yield Flush()
            continue
        if raw is TOO_LONG:
            yield Rejected(number, f"line longer than {max_line_bytes} bytes")
            continue
        if not raw or raw.isspace():
            continue
        try:
            yield number, parse_event(jsonio.loads(raw, line=number), line=number)
        except BadInput as exc:
            yield Rejected(number, exc.reason)
