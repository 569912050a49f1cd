"""Turning a finished session's unprocessed turns into an episode and memories
(seed 003 §7.3): what ``session end`` does at once and ``consolidate`` does nightly.

Each stretch of at most ``CHUNK`` turns becomes one episode; its memories (from the
extractor: quick rules by default) go through ``remember``'s update rules and are
linked to it, and the turns are marked extracted — all in one short transaction, so a
crash leaves the stretch either done or untouched; a stretch another process digested
meanwhile (two `session end` at once) is skipped. The newest episode is noted under
the scratchpad's 近期进展.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from soloqueue_mem import faults
from soloqueue_mem.db.connect import write_tx
from soloqueue_mem.home import Home
from soloqueue_mem.lifecycle import extract
from soloqueue_mem.lifecycle.episode_builder import build_episode
from soloqueue_mem.lifecycle.vocabulary import Vocabulary
from soloqueue_mem.memory import episodes, scratchpad
from soloqueue_mem.memory.episodes import Episode
from soloqueue_mem.memory.store import Draft, Remembered, remember
from soloqueue_mem.sessions import turns
from soloqueue_mem.sessions.events import SessionKey
from soloqueue_mem.sessions.offload import l1_record
from soloqueue_mem.sessions.reader import read_session
from soloqueue_mem.text.keywords import keywords
from soloqueue_mem.text.lexicon import Lexicon, open_lexicon

CHUNK = 1000
Extractor = Callable[[SessionKey, list[dict[str, Any]]], list[Draft]]


def rules(words: Vocabulary | None = None) -> Extractor:
    """The default extractor: the quick rules (no model), with ``words``' predicates."""
    return lambda _key, records: extract.from_records(records, words)


class Digest(NamedTuple):
    episodes: list[Episode]
    remembered: list[Remembered]
    turns: int


class Target(Protocol):
    """Where a session is digested: its turns, episodes and memories (memory.db, or a
    storage back end's database)."""

    def pending(self, key: SessionKey) -> set[int]:
        """The session's turn indexes whose memories are not extracted yet."""
        ...

    def records(self, key: SessionKey) -> list[dict[str, Any]]:
        """The session's records (JSONL shape), in turn order."""
        ...

    def store(
        self,
        key: SessionKey,
        stretch: list[dict[str, Any]],
        drafts: list[Draft],
        episode: Episode,
        now: datetime,
    ) -> tuple[Episode, list[Remembered]] | None:
        """In one transaction: unless another process digested part of ``stretch``
        meanwhile (None), remember ``drafts`` (linked to ``episode``), store the episode
        and mark the stretch extracted."""
        ...

    def note_progress(self, key: SessionKey, episode: Episode, now: datetime) -> None: ...

    @property
    def language(self) -> str:
        """The ``language`` setting for the episodes' summaries and the scratchpad."""
        ...


def digest_session(
    home: Home,
    conn: sqlite3.Connection,
    key: SessionKey,
    now: datetime,
    source: str,
    extractor: Extractor | None = None,
    summarize: Callable[[list[dict[str, Any]]], str | None] | None = None,
    extracted_on_log: Collection[int] = (),
    language: str = "auto",
) -> Digest:
    """:func:`digest` into memory.db; episode summaries and scratchpad headings in
    ``language`` (the setting)."""
    target = SqliteTarget(home, conn, language)
    return digest(target, home, key, now, source, extractor, summarize, extracted_on_log)


def digest(
    target: Target,
    home: Home,
    key: SessionKey,
    now: datetime,
    source: str,
    extractor: Extractor | None = None,
    summarize: Callable[[list[dict[str, Any]]], str | None] | None = None,
    extracted_on_log: Collection[int] = (),
) -> Digest:
    """Episodes and memories for the session's turns not yet extracted; the turns in
    ``extracted_on_log`` gave their memories already and are only summarized."""
    pending = target.pending(key)
    if not pending:
        return Digest([], [], 0)
    records = [l1_record(r) for r in target.records(key) if r["turn_index"] in pending]
    made: list[Episode] = []
    remembered: list[Remembered] = []
    for start in range(0, len(records), CHUNK):
        stretch = records[start : start + CHUNK]
        episode = build_episode(key, stretch, source, now, False, target.language)
        episode = episode._replace(tags=episode_tags(home, stretch))
        unread = [r for r in stretch if r["turn_index"] not in extracted_on_log]
        drafts = (extractor or rules())(key, unread) if unread else []
        summary = summarize(stretch) if summarize else None
        if summary:
            episode = episode._replace(summary=summary)
        faults.fault("digest.before_write")
        stored = target.store(key, stretch, drafts, episode, now)
        if stored is None:
            continue  # a concurrent `session end` or consolidate digested it first
        made.append(stored[0])
        remembered += stored[1]
    if made:
        target.note_progress(key, made[-1], now)
    return Digest(made, remembered, len(records))


class SqliteTarget:
    """Digesting into memory.db (the session's records from its JSONL log)."""

    def __init__(self, home: Home, conn: sqlite3.Connection, language: str = "auto") -> None:
        self.home = home
        self.conn = conn
        self.language = language

    def pending(self, key: SessionKey) -> set[int]:
        return turns.unextracted_indexes(self.conn, key, turns.max_turn_index(self.conn, key))

    def records(self, key: SessionKey) -> list[dict[str, Any]]:
        return read_session(self.home, key).records

    def store(
        self,
        key: SessionKey,
        stretch: list[dict[str, Any]],
        drafts: list[Draft],
        episode: Episode,
        now: datetime,
    ) -> tuple[Episode, list[Remembered]] | None:
        conn = self.conn
        with write_tx(conn):
            if not still_pending(self.pending_upto(key, stretch[-1]["turn_index"]), stretch):
                return None
            episode, found = remembered_for(
                episode, drafts, lambda d: remember(conn, d, key.group, key.agent, now)
            )
            episodes.insert(conn, episode)
            turns.mark_extracted(conn, key, stretch[-1]["turn_index"], episode.id)
        return episode, found

    def pending_upto(self, key: SessionKey, upto: int) -> set[int]:
        return turns.unextracted_indexes(self.conn, key, upto)

    def note_progress(self, key: SessionKey, episode: Episode, now: datetime) -> None:
        pad = scratchpad.get(self.conn, key.group, key.agent, scratchpad.template(self.language))
        content = scratchpad.with_progress(pad.content, progress_entry(episode), self.language)
        scratchpad.put(self.conn, key.group, key.agent, content, now)


def still_pending(pending: set[int], stretch: list[dict[str, Any]]) -> bool:
    """Inside the write transaction: are all of the stretch's turns still unextracted?
    The check and the write are one transaction, so two processes digesting the same
    session never make the same episode or restate the same memory twice."""
    return all(r["turn_index"] in pending for r in stretch)


def remembered_for(
    episode: Episode, drafts: list[Draft], remember: Callable[[Draft], Remembered]
) -> tuple[Episode, list[Remembered]]:
    """Remember ``drafts`` as coming from ``episode``; the episode linked to them."""
    found = [remember(d._replace(source_episode_id=episode.id)) for d in drafts]
    ids = list(dict.fromkeys(r.memory.id for r in found))
    return episode._replace(linked_memory_ids=ids), found


def episode_tags(home: Home, records: list[dict[str, Any]]) -> list[str]:
    """The stretch's keywords (jieba-style TF-IDF) become the episode's tags."""
    text = "\n".join(str(r.get("content") or "") for r in records)
    return keywords(text, lambda: _lexicon(home.cache_dir))


@cache
def _lexicon(cache_dir: Path) -> Lexicon:
    return open_lexicon(cache_dir)


def progress_entry(episode: Episode) -> str:
    """The scratchpad's 近期进展 line for ``episode``."""
    what = " ".join((episode.goal or episode.summary).split())[:120]
    day = episode.ended_at[5:10].replace("-", "/")
    return f"{day}: {what} ({episode.outcome})"
