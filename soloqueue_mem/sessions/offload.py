"""Context offloading (seed 000 §3.1): huge tool output goes to the artifact store.

A tool result (or, with ``--offload``, any content) longer than the threshold is saved
as a ``sys:ephemeral`` artifact, and the turn's L1 view — what the index holds and
what an agent puts in its context — becomes a reference with a preview, so the model
knows what it is missing and how to get it back. The JSONL record keeps the full text
and notes each replacement (``offloaded``), so the log stays complete and replayable.
"""

from __future__ import annotations

import io
import re
import sqlite3
from collections.abc import Callable
from datetime import datetime
from functools import cache

from soloqueue_mem.config import Config
from soloqueue_mem.home import Home
from soloqueue_mem.sessions.events import Event, SessionKey

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import Any

HEAD, TAIL = 500, 200


def human_size(size: int) -> str:
    if size >= 1 << 20:
        return f"{size / (1 << 20):.1f}MB"
    if size >= 1 << 10:
        return f"{size // (1 << 10)}KB"
    return f"{size}B"


def reference(text: str, artifact_id: str, language: str) -> str:
    """The L1 text that stands in for offloaded ``text``."""
    size = human_size(len(text.encode("utf-8")))
    from soloqueue_mem.text.strings import text as fixed_text

    return fixed_text(language, "offload_notice").format(
        size=size, id=artifact_id, head=text[:HEAD], tail=text[-TAIL:]
    )


@cache
def _reference() -> re.Pattern[str]:
    """Compiled on first use: ``log`` imports this module and never reads references."""
    return re.compile(r"read_artifact\('(\d+)'\)")


def referenced_artifacts(text: str) -> list[str]:
    """The artifact ids the references in ``text`` name (each once, in order)."""
    return list(dict.fromkeys(_reference().findall(text)))


class Offloader:
    """Offloads the oversized parts of events; opens artifacts.db only when needed."""

    def __init__(
        self,
        home: Home,
        config: Config,
        now: datetime,
        open_artifacts: Callable[[], sqlite3.Connection | None],
        all_content: bool = False,
    ) -> None:
        self.home, self.config, self.now = home, config, now
        self._open = open_artifacts
        self._conn: sqlite3.Connection | None = None
        self.all_content = all_content

    def __call__(self, event: Event, key: SessionKey) -> tuple[Event, list[dict[str, Any]]]:
        """The event's L1 view and the record of what was offloaded (empty if nothing)."""
        limit = self.config.offload_threshold
        offloaded: list[dict[str, Any]] = []
        content = event.content
        if self.all_content and len(content) > limit:
            content = self._offload(content, "content", "content", key, offloaded)
        results = []
        for number, result in enumerate(event.tool_results):
            if len(result["content"]) > limit:
                field = f"tool_results.{number}.content"
                title = f"tool result {result.get('tool_use_id') or number}"
                result = {
                    **result,
                    "content": self._offload(result["content"], field, title, key, offloaded),
                }
            results.append(result)
        if not offloaded:
            return event, []
        return event._replace(content=content, tool_results=results), offloaded

    def _offload(
        self, text: str, field: str, title: str, key: SessionKey, offloaded: list[dict[str, Any]]
    ) -> str:
        from soloqueue_mem.artifacts.catalog import EPHEMERAL
        from soloqueue_mem.artifacts.store import NewArtifact, save
        from soloqueue_mem.redact import redactor

        if self._conn is None:
            self._conn = self._open()
            assert self._conn is not None
        redact = redactor(self.config)
        if redact is not None:  # log redacted the event already; context build did not
            text = redact.text(text)
        meta = NewArtifact(
            title=f"{title} ({key.session})",
            tags=(EPHEMERAL,),
            group=key.group,
            author=key.agent,
            mime="text/plain; charset=utf-8",
        )
        saved = save(self.home, self._conn, io.BytesIO(text.encode("utf-8")), meta, self.now)
        artifact_id = str(saved.artifact.id)
        l1 = reference(text, artifact_id, self.config.offload_language)
        offloaded.append({"field": field, "artifact_id": artifact_id, "l1": l1})
        return l1

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()


def l1_record(record: dict[str, Any]) -> dict[str, Any]:
    """A JSONL record with its offloaded fields replaced by their L1 references."""
    if not record.get("offloaded"):
        return record
    view = {**record, "tool_results": [dict(r) for r in record.get("tool_results", [])]}
    # The original OpenAI message holds the full output: the L1 view is rebuilt from
    # the normalised fields instead.
    view.pop("openai_message", None)
    for item in record["offloaded"]:
        field = item["field"]
        if field == "content":
            view["content"] = item["l1"]
        else:
            _, number, _ = field.split(".")
            view["tool_results"][int(number)]["content"] = item["l1"]
    return view
