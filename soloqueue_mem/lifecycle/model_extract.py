"""The optional model at every point the design puts one, with the rules as the floor.

:meth:`ModelExtraction.ask` is the one way in: a point's prompt and parser (one module
per point in :mod:`.prompts`), counted per point in the report; on a failure after the
retries it answers None and the caller keeps what the rules made, and since the model
is evidently away, no later point of the run calls it.

Each user or assistant turn of at least ``MIN_CHARS`` characters is sent to the model
(seed 001: short turns carry little); failed tool results always become ERROR memories
by rule. When a call fails after its retries, that turn — and, since the model is
evidently away, every later one in this run — gets the rules instead and is queued in
state.db (in the database on PostgreSQL: the same functions), so a later
consolidation retries it (backoff 1 s doubling to 30 s, at most ``llm_attempts``
tries). A turn is never lost to a failed call.
"""

from __future__ import annotations

import os
import sqlite3
from collections import Counter
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from soloqueue_mem.config import Config
from soloqueue_mem.lifecycle import extract, queue
from soloqueue_mem.lifecycle.llm import Llm, LlmError, complete, from_env
from soloqueue_mem.lifecycle.prompts import (
    dedup,
    extraction,
    identity,
    persona,
    scratchpad,
    summary,
)
from soloqueue_mem.lifecycle.vocabulary import vocabulary
from soloqueue_mem.memory.store import Draft
from soloqueue_mem.sessions.events import SessionKey

if TYPE_CHECKING:
    from soloqueue_mem.memory.episodes import Episode

MIN_CHARS = 30
UNAVAILABLE = "the model was unavailable earlier in this run"
T = TypeVar("T")


def configured(
    config: Config, now: datetime, env: Mapping[str, str] = os.environ
) -> ModelExtraction | None:
    """The model when ``SOLOQUEUE_LLM_URL`` and ``SOLOQUEUE_LLM_MODEL`` are set, else
    None: the rules. The back end names where its failed turns queue
    (:meth:`ModelExtraction.use_state_db`, :meth:`ModelExtraction.use_database`)."""
    llm = from_env(
        env, config.llm_timeout, config.llm_attempts, config.llm_backoff_base,
        config.llm_backoff_cap,
    )  # fmt: skip
    return None if llm is None else ModelExtraction(llm, config, now)


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
        self.points: Counter[str] = Counter()  # calls per point (prompts module)
        self.error = UNAVAILABLE  # why the model failed (queued with the turn)
        self.words = vocabulary(config.predicates)

    def ask(self, point: str, prompt: str, parse: Callable[[str], T]) -> T | None:
        """The model's answer at ``point`` as ``parse`` reads it (retried with backoff),
        or None when it failed — or failed earlier in this run: the caller keeps the
        rules' result."""
        if not self.available:
            return None
        self.calls += 1
        self.points[point] += 1
        kwargs = {"sleep": self._sleep} if self._sleep else {}
        try:
            return complete(self.llm, prompt, parse, **kwargs)
        except LlmError as exc:
            self.available, self.failures = False, self.failures + 1
            self.error = str(exc)
            return None

    def _ask(self, record: dict[str, Any]) -> list[Draft] | None:
        """One turn's memories, or None when the model failed (``error`` says why)."""
        text = extraction.prompt(record, self.config.language)
        found = self.ask("extraction", text, extraction.parse)
        return None if found is None else [extract.canonical(d, self.words) for d in found]

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
            found = self._ask(record)
            if found is not None:
                drafts += found + [d for d in rules if d.type == "ERROR"]
                continue
            drafts += rules
            self._enqueue(key, record, self.error)
            self.error = UNAVAILABLE
        return drafts

    def summarize(self, records: list[dict[str, Any]]) -> str | None:
        """The model's one-paragraph summary of a stretch, or None (keep the rules')."""
        return self.ask("summary", summary.prompt(records, self.config.language), summary.parse)

    def rewrite_scratchpad(self, pad: str, episode: Episode) -> str | None:
        """The whole scratchpad updated for ``episode``, or None (the rules add a line)."""
        text = scratchpad.prompt(pad, episode, self.config.language)
        return self.ask("scratchpad", text, scratchpad.parse)

    def judge_cluster(self, contents: list[str]) -> tuple[int, list[int]] | None:
        """(best, duplicates) as positions in a candidate cluster, or None (the rules'
        best supersedes all the others)."""
        text = dedup.prompt(contents, self.config.language)
        return self.ask("dedup", text, dedup.parser(len(contents)))

    def compile_identity(self, name: str, source: str, budget: int) -> str | None:
        """An identity source's compact core, or None (the line rules compile it)."""
        if name not in identity.NAMES:
            return None
        text = identity.prompt(name, source, budget, self.config.language)
        return self.ask("identity", text, identity.parse)

    def write_persona(self, traits: list[str]) -> str | None:
        """The promoted traits as a short persona, or None (the rules' list stands)."""
        return self.ask("persona", persona.prompt(traits, self.config.language), persona.parse)

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
            found = self._ask(item.record)
            if found is None:
                counts[self._postpone(item, self.error)] += 1
                self.error = UNAVAILABLE
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
        return {
            "used": True,
            "calls": self.calls,
            "failures": self.failures,
            "queued": self.queued,
            "points": dict(sorted(self.points.items())),
        }

    def close(self) -> None:
        if self._state is not None and self._owns_state:
            self._state.close()
