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
from soloqueue_mem.clock import iso
from soloqueue_mem.errors import BadInput
from soloqueue_mem.sessions.events import Event, parse_event, redacted, to_record

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import BinaryIO

    from soloqueue_mem.redact import Redactor
    from soloqueue_mem.sessions.writer import Item


def read_document(stream: BinaryIO, max_bytes: int) -> list[Event]:
    """Events from one JSON document; any bad part rejects the whole document."""
    return jsonio.read_document(stream, max_bytes, parse_event, "a JSON event")


def parse_array(items: list[object]) -> list[Event]:
    """Every item as an event; the first bad one rejects them all, naming its number."""
    return jsonio.parse_items(items, parse_event)


def read_batch(stream: BinaryIO, max_line_bytes: int) -> Iterator[Item]:
    """``(line, event)`` or :class:`Rejected` per non-blank line, :class:`Flush` when idle."""
    from soloqueue_mem.sessions.writer import Flush, Rejected  # not for one document
    from soloqueue_mem.streams import TOO_LONG, numbered_lines

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


def with_batch_keys(items: Iterator[Item], redactor: Redactor | None) -> Iterator[Item]:
    """The batch's items, each event without an ``event_id`` given a deterministic one,
    so that logging the same file again adds nothing (the ids are deduplicated within
    their session, which is therefore part of the key).

    With a ``redactor``, every event comes out redacted (the writer need not read it
    again: redaction is a batch's largest cost). The key hashes the event as it is
    stored (secrets redacted, so the id never holds a digest of one): role, content,
    tool calls and results, metadata, and its timestamp. A line without a timestamp is
    stamped when logged, so it is keyed by its place instead: the key of the line before
    it in the same session of this batch. A re-run, or a longer file that begins with
    the same lines, adds only what is new; the same message sent twice stays two turns.
    """
    import hashlib

    from soloqueue_mem.sessions.writer import Flush, Rejected

    before: dict[tuple[str | None, str | None, str | None], str | None] = {}
    for item in items:
        if not isinstance(item, Rejected | Flush):
            line, event = item
            stream = (event.group, event.agent, event.session)
            if redactor is not None:
                event = redacted(event, redactor)
            if event.event_id is None:
                stamp = "" if event.timestamp is None else iso(event.timestamp)
                record = to_record(event, 0, stamp)
                if event.timestamp is None:
                    record["after"] = before.get(stream)
                digest = hashlib.sha256(jsonio.dumps_compact(record).encode()).hexdigest()
                event = event._replace(event_id=f"batch:{digest[:32]}")
            item = (line, event)
            before[stream] = event.event_id
        yield item
