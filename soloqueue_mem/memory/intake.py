"""Memories from JSON: one object, an array, or JSON Lines (bulk import)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple

from soloqueue_mem import jsonio
from soloqueue_mem.errors import BadInput
from soloqueue_mem.home import validate_id
from soloqueue_mem.memory.store import Draft, check_draft
from soloqueue_mem.sessions.events import check_event_id
from soloqueue_mem.streams import TOO_LONG, numbered_lines

if TYPE_CHECKING:
    from soloqueue_mem.redact import Redactor

_TEXT_FIELDS = ("content", "type", "subject", "predicate", "duration", "source")
_UNIT_FIELDS = ("importance", "confidence")
FIELDS = (
    *_TEXT_FIELDS,
    *_UNIT_FIELDS,
    "tags",
    "source_episode_id",
    "group",
    "agent",
    "event_id",
)


def redacted(draft: Draft, redact: Redactor | None) -> Draft:
    """The draft with secrets replaced in its text, subject, predicate and tags."""
    if redact is None:
        return draft
    return draft._replace(
        content=redact.text(draft.content),
        subject=redact.text(draft.subject),
        predicate=redact.text(draft.predicate),
        tags=tuple(redact.text(tag) for tag in draft.tags),
    )


class Item(NamedTuple):
    draft: Draft
    group: str | None  # None: the command's --group
    agent: str | None
    event_id: str | None = None  # idempotency key: a retried item changes nothing


def parse_item(obj: Any, line: int | None = None) -> Item:
    """A checked memory from a JSON object; the error names the field and line."""
    if not isinstance(obj, dict):
        raise BadInput("expected a JSON object with a 'content' field", line)
    unknown = sorted(set(obj) - set(FIELDS))
    if unknown:
        raise BadInput(f"unknown field {unknown[0]!r} (known: {', '.join(FIELDS)})", line)
    if not isinstance(obj.get("content"), str):
        raise BadInput("'content' must be a string", line)
    values: dict[str, Any] = {}
    for name in _TEXT_FIELDS:
        if name in obj and not isinstance(obj[name], str):
            raise BadInput(f"{name!r} must be a string", line)
        if name in obj:
            values[name] = obj[name]
    for name in _UNIT_FIELDS:
        if name not in obj:
            continue
        value = obj[name]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise BadInput(f"{name!r} must be a number between 0 and 1", line)
        values[name] = float(value)
    tags = obj.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise BadInput("'tags' must be a list of strings", line)
    episode = obj.get("source_episode_id")
    if episode is not None and not isinstance(episode, str):
        raise BadInput("'source_episode_id' must be a string", line)
    scope = {}
    for name in ("group", "agent"):
        if obj.get(name) is not None:
            try:
                scope[name] = validate_id(name, obj[name])
            except BadInput as exc:
                raise BadInput(exc.reason, line) from None
    try:
        draft = check_draft(Draft(**values, tags=tuple(tags), source_episode_id=episode))
        event_id = check_event_id(obj.get("event_id"))
    except BadInput as exc:
        raise BadInput(exc.reason, line) from None
    return Item(draft, scope.get("group"), scope.get("agent"), event_id)


def read_document(stream: BinaryIO, max_bytes: int) -> list[Item]:
    """Memories from one JSON object or array; any bad item rejects the whole input."""
    return jsonio.read_document(stream, max_bytes, parse_item, "a JSON memory object")


def read_lines(stream: BinaryIO, max_line_bytes: int) -> Iterator[tuple[int, Item | BadInput]]:
    """``(line number, item or the error)`` per non-blank JSONL line."""
    for number, raw in numbered_lines(stream, max_line_bytes):
        if raw is None or not raw.strip():
            continue  # nothing ready yet (remember has nothing to flush), or a blank line
        if raw is TOO_LONG:
            yield number, BadInput(f"line longer than {max_line_bytes} bytes", number)
            continue
        try:
            yield number, parse_item(jsonio.loads(raw, line=number), line=number)
        except BadInput as exc:
            yield number, exc
