"""Events: the one validation boundary for everything ``log`` accepts.

An event is our own shape (``role``, ``content``, ``tool_calls [{id,name,input}]``,
``tool_results [{tool_use_id,content,is_error}]``, ``timestamp``, ``metadata``,
``event_id``, and optional ``group``/``agent``/``session``) or an OpenAI chat message
as it is. OpenAI messages are normalised; when the normal form would not give the
exact message back, the original is kept beside it so export is lossless. Content
given as a list of blocks (OpenAI parts, Anthropic ``text`` / ``thinking`` /
``tool_use`` / ``tool_result`` blocks) gives its text, tool calls and tool results to
the normal form, so they are indexed and extracted like any other.
"""

from __future__ import annotations

from datetime import UTC, datetime

from soloqueue_mem import jsonio, roles
from soloqueue_mem.clock import parse_timestamp
from soloqueue_mem.errors import BadInput
from soloqueue_mem.home import validate_id
from soloqueue_mem.tuples import NamedTuple

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import Any

    from soloqueue_mem.redact import Redactor

ROLES = frozenset(roles.ROLES)
_OPENAI_ROLES = {"developer": "system", "function": "tool"}
_ROUTING_KEYS = ("group", "agent", "session", "event_id", "timestamp", "metadata")
_OWN_KEYS = frozenset({"role", "content", "tool_calls", "tool_results", *_ROUTING_KEYS})
# A record of our own JSONL logs (``session export --format jsonl``) carries these too.
_RECORD_KEYS = frozenset({"turn_index", "offloaded", "openai_message"})
# An event with only these keys, text content and one of our roles needs no normalising.
_PLAIN_KEYS = frozenset({"role", "content", *_ROUTING_KEYS})
MAX_EVENT_ID = 256
# Content part types an OpenAI chat message may carry: an original holding any other
# (Anthropic's tool_use, tool_result, thinking) is converted rather than given back.
OPENAI_PARTS = frozenset({"text", "image_url", "input_audio", "file", "refusal"})


class Event(NamedTuple):
    role: str
    content: str
    tool_calls: list[dict[str, Any]]
    tool_results: list[dict[str, Any]]
    timestamp: datetime | None = None
    metadata: dict[str, Any] | None = None
    event_id: str | None = None
    group: str | None = None
    agent: str | None = None
    session: str | None = None
    openai_message: dict[str, Any] | None = None


def parse_event(obj: Any, line: int | None = None) -> Event:
    """Validate one decoded JSON value as an event; raise BadInput with ``line``."""
    try:
        return _parse(obj)
    except BadInput as exc:
        raise BadInput(exc.reason, line) from None


def _parse(obj: Any) -> Event:
    if type(obj) is dict and obj.keys() <= _PLAIN_KEYS:
        role, content = obj.get("role"), obj.get("content")
        if type(content) is str and type(role) is str and role in ROLES:
            return _plain(obj, role, content)
    return parse_full(obj)


def parse_full(obj: Any) -> Event:
    """Every check and normalisation (what :func:`_plain` shortens for the common event)."""
    if not isinstance(obj, dict):
        raise BadInput(f"expected a JSON object, got {type(obj).__name__}")
    role = obj.get("role")
    if not isinstance(role, str):
        raise BadInput("missing 'role' (user, assistant, system, tool or thought)")
    role = _OPENAI_ROLES.get(role, role)
    if role not in ROLES:
        raise BadInput(f"unknown role {obj['role']!r} (use user, assistant, system, tool, thought)")
    content, block_calls, block_results = _content(obj.get("content"))
    tool_calls = [_tool_call(item) for item in _list(obj, "tool_calls")] + block_calls
    tool_results = [_tool_result(item) for item in _list(obj, "tool_results")] + block_results
    if "tool_call_id" in obj:
        if not isinstance(obj["tool_call_id"], str):
            raise BadInput("'tool_call_id' must be a string")
        tool_results.append(
            {"tool_use_id": obj["tool_call_id"], "content": content, "is_error": False}
        )
        content = ""
    if not content and not tool_calls and not tool_results and obj.get("content") is None:
        raise BadInput("event has no 'content', 'tool_calls' or 'tool_results'")
    event = Event(
        role=role,
        content=content,
        tool_calls=tool_calls,
        tool_results=tool_results,
        timestamp=_timestamp(obj.get("timestamp")),
        metadata=_metadata(obj.get("metadata")),
        event_id=check_event_id(obj.get("event_id")),
        group=_optional_id(obj, "group"),
        agent=_optional_id(obj, "agent"),
        session=_optional_id(obj, "session"),
    )
    if _is_record(obj):
        return _logged_again(obj, event)
    if _is_openai(obj):
        message = {k: v for k, v in obj.items() if k not in _ROUTING_KEYS}
        if to_openai(event) != [message]:
            event = _with_original(event, message)
    return event


def _plain(obj: dict[str, Any], role: str, content: str) -> Event:
    """The common event (a role of ours, text content, routing keys only): what the full
    parse gives, without its checks for tool calls, OpenAI shapes and records.

    Trigger: ``log --batch`` parses every line (~40% of the parse there went to those
    checks). Outcome: the same Event; anything else takes the full parse.
    """
    timestamp = obj.get("timestamp")
    metadata = obj.get("metadata")
    event_id = obj.get("event_id")
    group, agent, session = obj.get("group"), obj.get("agent"), obj.get("session")
    return Event(
        role,
        content,
        [],
        [],
        None if timestamp is None else _timestamp(timestamp),
        None if metadata is None else _metadata(metadata),
        None if event_id is None else check_event_id(event_id),
        None if group is None else validate_id("group", group),
        None if agent is None else validate_id("agent", agent),
        None if session is None else validate_id("session", session),
    )


def _is_openai(obj: dict[str, Any]) -> bool:
    """Whether ``obj`` uses OpenAI's message shape rather than only our own keys."""
    if "tool_results" in obj or obj.get("role") == "thought":
        return False
    calls = obj.get("tool_calls") or []
    return (
        bool(set(obj) - _OWN_KEYS)
        or obj.get("role") in _OPENAI_ROLES
        or not isinstance(obj.get("content"), str)
        or any(isinstance(c, dict) and "function" in c for c in calls)
    )


def _is_record(obj: dict[str, Any]) -> bool:
    """Whether ``obj`` is a record of our own JSONL log being logged again."""
    index = obj.get("turn_index")
    return (
        isinstance(index, int)
        and not isinstance(index, bool)
        and set(obj)
        <= {
            *_OWN_KEYS,
            *_RECORD_KEYS,
        }
    )


def _logged_again(obj: dict[str, Any], event: Event) -> Event:
    """A record of our own log, logged into another session or store.

    Trigger: ``session export --format jsonl`` piped into ``log --batch``. Why: the old
    ``turn_index`` and ``offloaded`` belong to the session it came from, and its tool
    calls are in our form, not OpenAI's; kept as the original message they became a
    stale ``turn_index`` in the OpenAI export and tool calls no OpenAI client reads.
    Outcome: the new session allocates its own indexes and offloads again; the message
    the record itself kept (``openai_message``) is still what the export gives back.
    """
    original = obj.get("openai_message")
    if original is not None and not isinstance(original, dict):
        raise BadInput("'openai_message' must be a JSON object")
    return event._replace(openai_message=original)


def _with_original(event: Event, message: dict[str, Any]) -> Event:
    return event._replace(openai_message=message)


def _list(obj: dict[str, Any], key: str) -> list[Any]:
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadInput(f"'{key}' must be a list")
    return value


def _content(value: Any) -> tuple[str, list[dict[str, Any]], list[dict[str, Any]]]:
    """``(text, tool calls, tool results)`` of a content: a string as it is; a list of
    parts or blocks gives their text joined (an Anthropic ``thinking`` block's reasoning
    too, so it is searchable), and its ``tool_use`` / ``tool_result`` blocks (Anthropic)
    as calls and results; null as empty."""
    if value is None:
        return "", [], []
    if isinstance(value, str):
        return value, [], []
    if not isinstance(value, list):
        raise BadInput(
            f"'content' must be a string, a list of parts or null, not {type(value).__name__}"
        )
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for part in value:
        if not isinstance(part, dict):
            raise BadInput("'content' parts must be objects")
        if part.get("type") == "tool_use":
            calls.append(_tool_call(part))
        elif part.get("type") == "tool_result":
            results.append(_tool_result(part))
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif part.get("type") == "thinking" and isinstance(part.get("thinking"), str):
            texts.append(part["thinking"])
    return "\n".join(texts), calls, results


def _tool_call(item: Any) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise BadInput("each tool call must be an object")
    function = item.get("function")
    if isinstance(function, dict):  # OpenAI: {id, type, function: {name, arguments}}
        name, arguments = function.get("name"), function.get("arguments", "")
        if not isinstance(arguments, str):
            raise BadInput("tool call 'function.arguments' must be a string")
        try:
            tool_input: Any = jsonio.loads(arguments) if arguments else {}
        except BadInput:
            tool_input = arguments
    else:
        name, tool_input = item.get("name"), item.get("input", {})
    if not isinstance(name, str) or not name:
        raise BadInput("each tool call needs a 'name'")
    call_id = item.get("id")
    if call_id is not None and not isinstance(call_id, str):
        raise BadInput("tool call 'id' must be a string")
    return {"id": call_id, "name": name, "input": tool_input}


def _tool_result(item: Any) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise BadInput("each tool result must be an object")
    use_id = item.get("tool_use_id")
    if use_id is not None and not isinstance(use_id, str):
        raise BadInput("tool result 'tool_use_id' must be a string")
    content = item.get("content", "")
    if not isinstance(content, str):
        content = _content(content)[0] if isinstance(content, list) else jsonio.dumps(content)
    is_error = item.get("is_error", False)
    if not isinstance(is_error, bool):
        raise BadInput("tool result 'is_error' must be true or false")
    return {"tool_use_id": use_id, "content": content, "is_error": is_error}


def _timestamp(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise BadInput("'timestamp' must be ISO 8601 text or seconds since the epoch")
    if isinstance(value, int | float):
        try:
            return datetime.fromtimestamp(value, UTC)
        except (OverflowError, OSError, ValueError):
            raise BadInput(f"'timestamp' out of range: {value}") from None
    if isinstance(value, str):
        return parse_timestamp(value)
    raise BadInput("'timestamp' must be ISO 8601 text or seconds since the epoch")


def _metadata(value: Any) -> dict[str, Any] | None:
    if value is None or isinstance(value, dict):
        return value
    raise BadInput("'metadata' must be a JSON object")


def check_event_id(value: Any) -> str | None:
    """An idempotency key (``log``'s and ``remember``'s): 1-256 characters, no controls."""
    if value is None:
        return None
    if not isinstance(value, str) or not value or len(value) > MAX_EVENT_ID:
        raise BadInput(f"'event_id' must be a string of 1-{MAX_EVENT_ID} characters")
    if any(ord(ch) < 32 for ch in value):
        raise BadInput("'event_id' must not contain control characters")
    return value


def _optional_id(obj: dict[str, Any], key: str) -> str | None:
    value = obj.get(key)
    return None if value is None else validate_id(key, value)


def to_openai(event: Event) -> list[dict[str, Any]]:
    """The OpenAI chat messages this event stands for (none for a ``thought``)."""
    original = event.openai_message
    if original is not None and _openai_shaped(original):
        return [original]
    if event.role == "thought":
        return []
    results = [
        {"role": "tool", "tool_call_id": r["tool_use_id"], "content": r["content"]}
        for r in event.tool_results
    ]
    text = reply_text(event)
    if results and (event.role == "tool" or not text and not event.tool_calls):
        return results
    if original is not None and not text and not event.tool_calls:
        return []  # blocks with nothing to send (reasoning alone)
    message: dict[str, Any] = {"role": event.role, "content": text}
    if event.tool_calls:
        message["content"] = text or None
        message["tool_calls"] = [
            {
                "id": call["id"],
                "type": "function",
                "function": {"name": call["name"], "arguments": _arguments(call["input"])},
            }
            for call in event.tool_calls
        ]
    return [*results, message]


def reply_text(event: Event) -> str:
    """The event's text without reasoning: the text blocks of an original message
    that had blocks, else its content."""
    content = (event.openai_message or {}).get("content")
    if not isinstance(content, list):
        return event.content
    texts = [p["text"] for p in content if isinstance(p, dict) and p.get("type") == "text"]
    return "\n".join(t for t in texts if isinstance(t, str))


def _openai_shaped(message: dict[str, Any]) -> bool:
    content = message.get("content")
    if content is None or isinstance(content, str):
        return True
    return isinstance(content, list) and all(
        isinstance(part, dict) and part.get("type") in OPENAI_PARTS for part in content
    )


def _arguments(value: Any) -> str:
    return value if isinstance(value, str) else jsonio.dumps(value)


def redacted(event: Event, redactor: Redactor) -> Event:
    """The event with the secrets in its text, tool calls, results, metadata and
    original message replaced (see :mod:`soloqueue_mem.redact`)."""
    return event._replace(
        content=redactor.text(event.content),
        tool_calls=redactor.value(event.tool_calls),
        tool_results=redactor.value(event.tool_results),
        metadata=redactor.value(event.metadata),
        openai_message=redactor.value(event.openai_message),
    )


def to_record(event: Event, turn_index: int, timestamp: str) -> dict[str, Any]:
    """The JSONL record of a logged event: complete and replayable."""
    record: dict[str, Any] = {"turn_index": turn_index, "timestamp": timestamp, "role": event.role}
    if event.event_id is not None:
        record["event_id"] = event.event_id
    record["content"] = event.content
    if event.tool_calls:
        record["tool_calls"] = event.tool_calls
    if event.tool_results:
        record["tool_results"] = event.tool_results
    if event.metadata is not None:
        record["metadata"] = event.metadata
    if event.openai_message is not None:
        record["openai_message"] = event.openai_message
    return record


def from_record(record: dict[str, Any]) -> Event:
    """The event a JSONL record was written from (records are trusted, our own)."""
    return Event(
        role=record["role"],
        content=record.get("content", ""),
        tool_calls=record.get("tool_calls", []),
        tool_results=record.get("tool_results", []),
        timestamp=parse_timestamp(record["timestamp"]),
        metadata=record.get("metadata"),
        event_id=record.get("event_id"),
        openai_message=record.get("openai_message"),
    )


class SessionKey(NamedTuple):
    """Where a turn belongs; every part is a validated id."""

    group: str
    agent: str
    session: str


def index_body(event: Event) -> str:
    """All searchable text of an event: content, tool names and inputs, results."""
    parts = [event.content]
    for call in event.tool_calls:
        tool_input = call["input"]
        parts.append(call["name"])
        parts.append(tool_input if isinstance(tool_input, str) else jsonio.dumps(tool_input))
    parts.extend(result["content"] for result in event.tool_results)
    return "\n".join(part for part in parts if part)
