"""Claude Code transcripts (``~/.claude/projects/<project>/<session>.jsonl``) as events.

Each line of a transcript is one record; ``user`` and ``assistant`` records carry an
Anthropic message (``message.role``, ``message.content``: a string or a list of
``text`` / ``thinking`` / ``tool_use`` / ``tool_result`` blocks), which ``log``'s own
parser reads. Every other record (``summary``, ``system``, snapshots) and meta
messages are skipped. The record's ``uuid`` becomes the event id, so importing a
transcript again (or a longer copy of it) adds only what is new; ``sessionId`` names
the session (else the file name does), ``timestamp`` the turn's time.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from soloqueue_mem import jsonio
from soloqueue_mem.config import Config
from soloqueue_mem.errors import BadInput, InvalidId, NotFound
from soloqueue_mem.home import validate_id
from soloqueue_mem.sessions.events import Event, parse_event
from soloqueue_mem.sessions.writer import Flush, Item, Offload, Rejected
from soloqueue_mem.streams import TOO_LONG, numbered_lines

if TYPE_CHECKING:
    from soloqueue_mem.storage.base import Backend

MESSAGE_TYPES = ("user", "assistant")
TAIL_BYTES = 1024 * 1024  # how much of a transcript's end is read for the last reply


def transcript_event(record: Any, session: str | None) -> Event | None:
    """The event a transcript record stands for (``session`` when it names none);
    None when the record is not a message or holds nothing to keep."""
    if not isinstance(record, dict):
        raise BadInput(f"expected a JSON object, got {type(record).__name__}")
    if record.get("type") not in MESSAGE_TYPES or record.get("isMeta"):
        return None
    message = record.get("message")
    if not isinstance(message, dict):
        raise BadInput(f"a {record['type']} record needs a 'message' object")
    event: dict[str, Any] = {"role": message.get("role"), "content": message.get("content")}
    for key, source in (("event_id", "uuid"), ("timestamp", "timestamp"), ("session", "sessionId")):
        if record.get(source) is not None:
            event[key] = record[source]
    if "session" not in event and session is not None:
        event["session"] = session
    event["metadata"] = _metadata(record, message)
    parsed = parse_event(event)
    if not parsed.content and not parsed.tool_calls and not parsed.tool_results:
        return None  # e.g. a redacted thinking block alone
    return parsed


def _metadata(record: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"source": "claude-code"}
    for key, value in (
        ("message_id", message.get("id")),
        ("model", message.get("model")),
        ("parent_uuid", record.get("parentUuid")),
    ):
        if isinstance(value, str):
            metadata[key] = value
    if record.get("isSidechain") is True:
        metadata["sidechain"] = True
    return metadata


def read_transcript(path: Path, max_line_bytes: int) -> Iterator[Item]:
    """``(line, event)`` per message record of the file, :class:`Rejected` per bad line."""
    from soloqueue_mem.bounded_io import open_regular

    session = _session_from_name(path)
    with open_regular(path) as stream:
        for number, raw in numbered_lines(stream, max_line_bytes):
            if raw is None or not raw.strip():
                continue
            if raw is TOO_LONG:
                yield Rejected(number, f"line longer than {max_line_bytes} bytes")
                continue
            try:
                event = transcript_event(jsonio.loads(raw, line=number), session)
            except BadInput as exc:
                yield Rejected(number, exc.reason)
                continue
            if event is not None:
                yield number, event


def _session_from_name(path: Path) -> str | None:
    try:
        return validate_id("session", path.stem)
    except InvalidId:
        return None


class FileResult(NamedTuple):
    """What importing one transcript did."""

    path: str
    imported: int
    duplicates: int
    rejected: list[Rejected]
    sessions: list[str]


def import_transcripts(
    backend: Backend,
    paths: Iterable[Path],
    scope: tuple[str, str],
    config: Config,
    now: datetime,
    offload: Offload | None = None,
    progress: Callable[[int], None] | None = None,
) -> Iterator[FileResult]:
    """Import each transcript into ``scope`` (group, agent) of the storage ``backend``;
    one result per file, after its turns are committed. ``progress`` is told how many
    records were handled."""
    for path in paths:
        items = _counted(read_transcript(path, config.max_line_bytes), progress)
        imported = duplicates = 0
        rejected: list[Rejected] = []
        sessions: set[str] = set()
        for result in backend.log(items, (*scope, None), now, offload):
            if isinstance(result, Rejected):
                rejected.append(result)
                continue
            sessions.add(result.session)
            if result.duplicate:
                duplicates += 1
            else:
                imported += 1
        yield FileResult(str(path), imported, duplicates, rejected, sorted(sessions))


def _counted(items: Iterator[Item], progress: Callable[[int], None] | None) -> Iterator[Item]:
    for item in items:
        if progress is not None and not isinstance(item, Flush):
            progress(1)
        yield item


def last_reply(path: Path) -> Event | None:
    """The assistant's last text reply in a transcript (read from its end, at most
    ``TAIL_BYTES``), if any; NotRegularFile for a FIFO or a device."""
    from soloqueue_mem.bounded_io import open_regular

    try:
        with open_regular(path) as stream:
            size = os.fstat(stream.fileno()).st_size
            stream.seek(max(0, size - TAIL_BYTES))
            tail = stream.read(TAIL_BYTES)
    except (OSError, NotFound):
        return None
    for raw in reversed(tail.splitlines()):
        try:
            record = jsonio.loads(raw)
            event = transcript_event(record, None) if _is_reply(record) else None
        except BadInput:
            continue  # a partial first line, or one this reader does not know
        if event is not None:
            return event
    return None


def _is_reply(record: Any) -> bool:
    """An assistant record with text in it (not only reasoning or a tool call)."""
    if not isinstance(record, dict) or record.get("type") != "assistant":
        return False
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return bool(content.strip())
    return isinstance(content, list) and any(
        isinstance(block, dict) and block.get("type") == "text" for block in content
    )
