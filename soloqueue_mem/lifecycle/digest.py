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
from typing import Any, NamedTuple

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


def digest_session(
    home: Home,
    conn: sqlite3.Connection,
    key: SessionKey,
    now: datetime,
    source: str,
    extractor: Extractor | None = None,
    summarize: Callable[[list[dict[str, Any]]], str | None] | None = None,
    extracted_on_log: Collection[int] = (),
) -> Digest:
    """Episodes and memories for the session's turns not yet extracted; the turns in
    ``extracted_on_log`` gave their memories already and are only summarized."""
    last = turns.max_turn_index(conn, key)
    pending = turns.unextracted_indexes(conn, key, last)
    if not pending:
        return Digest([], [], 0)
    records = [l1_record(r) for r in read_session(home, key).records if r["turn_index"] in pending]
    made: list[Episode] = []
    remembered: list[Remembered] = []
    for start in range(0, len(records), CHUNK):
        stretch = records[start : start + CHUNK]
        episode = build_episode(key, stretch, source, now, ongoing=False)
        episode = episode._replace(tags=episode_tags(home, stretch))
        unread = [r for r in stretch if r["turn_index"] not in extracted_on_log]
        drafts = (extractor or rules())(key, unread) if unread else []
        summary = summarize(stretch) if summarize else None
        if summary:
            episode = episode._replace(summary=summary)
        faults.fault("digest.before_write")
        with write_tx(conn):
            if not _still_pending(conn, key, stretch):
                continue  # a concurrent `session end` or consolidate digested it first
            found = [
                remember(conn, d._replace(source_episode_id=episode.id), key.group, key.agent, now)
                for d in drafts
            ]
            episode = episode._replace(
                linked_memory_ids=list(dict.fromkeys(r.memory.id for r in found))
            )
            episodes.insert(conn, episode)
            turns.mark_extracted(conn, key, stretch[-1]["turn_index"], episode.id)
        made.append(episode)
        remembered += found
    if made:
        _note_progress(conn, key, made[-1], now)
    return Digest(made, remembered, len(records))


def _still_pending(
    conn: sqlite3.Connection, key: SessionKey, stretch: list[dict[str, Any]]
) -> bool:
    """Inside the write transaction: are all of the stretch's turns still unextracted?
    The check and the write are one transaction, so two processes digesting the same
    session never make the same episode or restate the same memory twice."""
    pending = turns.unextracted_indexes(conn, key, stretch[-1]["turn_index"])
    return all(r["turn_index"] in pending for r in stretch)


def episode_tags(home: Home, records: list[dict[str, Any]]) -> list[str]:
    """The stretch's keywords (jieba-style TF-IDF) become the episode's tags."""
    text = "\n".join(str(r.get("content") or "") for r in records)
    return keywords(text, lambda: _lexicon(home.cache_dir))


@cache
def _lexicon(cache_dir: Path) -> Lexicon:
    return open_lexicon(cache_dir)


def _note_progress(
    conn: sqlite3.Connection, key: SessionKey, episode: Episode, now: datetime
) -> None:
    pad = scratchpad.get(conn, key.group, key.agent)
    what = " ".join((episode.goal or episode.summary).split())[:120]
    day = episode.ended_at[5:10].replace("-", "/")
    entry = f"{day}: {what} ({episode.outcome})"
    scratchpad.put(conn, key.group, key.agent, scratchpad.with_progress(pad.content, entry), now)
