"""Write-time redaction of imported records (``redact = true``), as ``log`` and
``remember`` redact what they write: every text field of a record, JSON values
included, goes through the store's :class:`~soloqueue_mem.redact.Redactor`.

Blobs and artifact rows are put back as they are: their bytes are addressed by their
sha256, which other records name.
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
TURN_FIELDS = ("content", "tool_calls", "tool_results", "metadata", "openai_message")


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
