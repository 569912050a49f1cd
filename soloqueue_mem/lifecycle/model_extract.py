"""Extraction through the optional model, with the rules as the floor.

Each user or assistant turn of at least ``MIN_CHARS`` characters is sent to the model
(seed 001: short turns carry little); failed tool results always become ERROR memories
by rule. When a call fails after its retries, that turn — and, since the model is
evidently away, every later one in this run — gets the rules instead and is queued in
state.db (in the database on PostgreSQL: the same functions), so a later
consolidation retries it (backoff 1 s doubling to 30 s, at most ``llm_attempts``
tries). A turn is never lost to a failed call.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime
from typing import Any

from soloqueue_mem.config import Config
from soloqueue_mem.lifecycle import extract, queue
from soloqueue_mem.lifecycle.llm import (
    PROMPTS,
    Llm,
    LlmError,
    complete,
    extraction_prompt,
    parse_memories,
)
from soloqueue_mem.lifecycle.vocabulary import vocabulary
from soloqueue_mem.memory.store import Draft
from soloqueue_mem.sessions.events import SessionKey
from soloqueue_mem.text.strings import resolve

MIN_CHARS = 30
MAX_SUMMARY_TURNS = 60  # the newest turns of a stretch are what a summary is sent
SUMMARY_CHARS = 600


def _paragraph(answer: str) -> str:
    text = " ".join(answer.split())
    if not text:
        raise LlmError("the model's summary is empty")
    return text[:SUMMARY_CHARS]


class ModelExtraction:
    def __init__(
        self,
        llm: Llm,
        config: Config,
        now: datetime,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self.llm, self.config, self.now = llm, config, now
        self._open_state: Callable[[], sqlite3.Connection] | None = None
        self._state: Any = None  # state.db, or the back end's database (use_database)
        self._owns_state = True
        self._sleep = sleep
        self.available = True
        self.calls = self.failures = self.queued = 0
        self.words = vocabulary(config.predicates)

    def _ask(self, record: dict[str, Any]) -> list[Draft]:
        self.calls += 1
        kwargs = {"sleep": self._sleep} if self._sleep else {}
        found = complete(
            self.llm, extraction_prompt(record, self.config.language), parse_memories, **kwargs
        )
        return [extract.canonical(draft, self.words) for draft in found]

    def state(self) -> Any:
        if self._state is None:
            assert self._open_state is not None, "the back end names the queue first"
            self._state = self._open_state()
        return self._state

    def use_state_db(self, open_state: Callable[[], sqlite3.Connection]) -> None:
        """Queue in state.db, which ``open_state`` opens at the first need (the SQLite
        back end's consolidate gives it; the model closes it in :meth:`close`)."""
        self._open_state = open_state

    def use_database(self, conn: Any) -> None:
        """Queue in the back end's database instead of state.db."""
        self._state, self._owns_state = conn, False

    def __call__(self, key: SessionKey, records: list[dict[str, Any]]) -> list[Draft]:
        names = extract.tool_names(records)
        drafts: list[Draft] = []
        for record in records:
            content = record.get("content") or ""
            rules = extract.from_turn(record, names, self.words)
            if record["role"] not in ("user", "assistant") or len(content) < MIN_CHARS:
                drafts += rules
                continue
            tool_errors = [d for d in rules if d.type == "ERROR"]
            if self.available:
                try:
                    drafts += self._ask(record) + tool_errors
                    continue
                except LlmError as exc:
                    self.available, self.failures = False, self.failures + 1
                    error = str(exc)
            else:
                error = "the model was unavailable earlier in this run"
            drafts += rules
            self._enqueue(key, record, error)
        return drafts

    def summarize(self, records: list[dict[str, Any]]) -> str | None:
        """The model's one-paragraph summary of a stretch, or None (keep the rules')."""
        if not self.available:
            return None
        lines = [
            f"[{r['role']}] {(r.get('content') or '')[:500]}" for r in records[-MAX_SUMMARY_TURNS:]
        ]
        self.calls += 1
        try:
            kwargs = {"sleep": self._sleep} if self._sleep else {}
            text = complete(
                self.llm,
                PROMPTS[resolve(self.config.language)][1].format(transcript="\n".join(lines)),
                _paragraph,
                **kwargs,
            )
        except LlmError:
            self.available, self.failures = False, self.failures + 1
            return None
        return text

    def _enqueue(self, key: SessionKey, record: dict[str, Any], error: str) -> None:
        wait = queue.backoff(0, self.config.llm_backoff_base, self.config.llm_backoff_cap)
        queue.enqueue(
            self.state(), key, record, error, self.now, self.now + wait, self.config.llm_attempts
        )
        self.queued += 1

    def retry_queue(
        self, remember: Callable[[Draft, str, str], object], limit: int = 1000
    ) -> dict[str, int]:
        """Retry the queued turns that are due; their memories go through
        ``remember(draft, group, agent)`` (the store's update rules)."""
        counts = {"due": 0, "completed": 0, "pending": 0, "failed": 0}
        for item in queue.due(self.state(), self.now, limit):
            counts["due"] += 1
            if not self.available:
                status = self._postpone(item, "the model was unavailable earlier in this run")
                counts[status] += 1
                continue
            try:
                found = self._ask(item.record)
            except LlmError as exc:
                self.available, self.failures = False, self.failures + 1
                counts[self._postpone(item, str(exc))] += 1
                continue
            for draft in found:
                remember(draft, item.key.group, item.key.agent)
            queue.completed(self.state(), item, self.now)
            counts["completed"] += 1
        return counts

    def _postpone(self, item: queue.Queued, error: str) -> str:
        wait = queue.backoff(
            item.retry_count, self.config.llm_backoff_base, self.config.llm_backoff_cap
        )
        return queue.retry_later(self.state(), item, error, self.now, wait)

    def report(self) -> dict[str, Any]:
        return {"used": True, "calls": self.calls, "failures": self.failures, "queued": self.queued}

    def close(self) -> None:
        if self._state is not None and self._owns_state:
            self._state.close()
