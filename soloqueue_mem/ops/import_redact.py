"""Write-time redaction of imported records (``redact = true``), as ``log`` and
``remember`` redact what they write: every text field of a record, JSON values
included, goes through the store's :class:`~soloqueue_mem.redact.Redactor`.

An inline blob of UTF-8 text is redacted too; its new sha256 then replaces the old
one in the artifact and attachment rows that name it (their ids, which turns and
attachments refer to, stay). Binary blobs, and blobs a dump without ``--with-blobs``
leaves to the store, are as they are.
"""

from __future__ import annotations

from typing import Any

from soloqueue_mem.redact import Redactor

TEXT_FIELDS = {
    "memory": ("content", "subject", "predicate", "tags"),
    "episode": ("summary", "goal", "action_nodes", "entities", "tags"),
    "scratchpad": ("content",),
    "working": ("content",),
    "attachment": ("url", "description", "transcription", "extracted_text", "tags"),
    "kv": ("value",),
    "session_state": ("value",),
    "identity": ("content",),
    "graph_node": ("content", "phrase", "keywords"),
    "graph_task": ("messages",),
}
TURN_FIELDS = ("content", "tool_calls", "tool_results", "metadata", "openai_message", "offloaded")


def redacted(kind: str, value: Any, redactor: Redactor) -> Any:
    """The record ``value`` (of ``kind``) with its secrets replaced; the same value
    when it holds none."""
    if kind == "turn":
        record = value.record
        clean = {k: redactor.value(v) if k in TURN_FIELDS else v for k, v in record.items()}
        return value if clean == record else value._replace(record=clean)
    fields = TEXT_FIELDS.get(kind, ())
    clean = {name: redactor.value(getattr(value, name)) for name in fields}
    return value._replace(**clean) if clean else value


def rehashed_path(relpath: str, sha256: str) -> str:
    """A blob path of the same day folder for another content."""
    day = relpath.rsplit("/", 3)[0]
    return f"{day}/{sha256[:2]}/{sha256[2:4]}/{sha256}"
