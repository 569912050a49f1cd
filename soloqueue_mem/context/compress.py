"""``context compress`` (seed 003 §5.6, §7.2): shorten a session's history without
losing what leaves it.

Before the older turns leave the context, quick rule-based extraction turns what they
state into semantic memories (through ``remember``'s update rules), a
``context_compress`` episode records what happened in them, and the turns are marked
extracted. The output is one summary message plus the last N turns. Nothing is lost:
the turns stay in the log, the episode and the memories. Running it again over the
same turns extracts nothing twice and reuses the episode.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from soloqueue_mem.db.adapter import Db
from soloqueue_mem.errors import BadInput
from soloqueue_mem.home import Home
from soloqueue_mem.lifecycle import extract
from soloqueue_mem.lifecycle.digest import digest_lock, episode_tags
from soloqueue_mem.lifecycle.episode_builder import build_episode
from soloqueue_mem.lifecycle.vocabulary import Vocabulary
from soloqueue_mem.memory import episodes
from soloqueue_mem.memory.episodes import Episode
from soloqueue_mem.memory.fulltexts import FTS5, FullTexts
from soloqueue_mem.memory.store import Draft, Remembered, remember
from soloqueue_mem.sessions import turns
from soloqueue_mem.sessions.events import SessionKey, from_record, to_openai
from soloqueue_mem.sessions.offload import l1_record

if TYPE_CHECKING:
    from soloqueue_mem.db.adapter import Connection

SOURCE = "context_compress"


class Compressed(NamedTuple):
    messages: list[dict[str, Any]]  # the summary message, then the kept turns
    episode: Episode | None  # None: nothing was old enough to compress
    remembered: list[Remembered]
    compressed_turns: int
    kept_turns: int
    fresh_records: tuple[dict[str, Any], ...] = ()  # compressed here for the first time
    graph_task: dict[str, Any] | None = None  # what the graph queued of them, if anything


class Tables:
    """Where a session's compressed turns are recorded: a back end's database
    (:class:`soloqueue_mem.db.adapter.Db`), with its full-text indexes. Everything is
    recorded in one transaction holding the session's digest lock, so a compress and
    a ``session end`` or ``consolidate`` of the same session on another host never
    extract the same turns twice."""

    def __init__(self, conn: Connection, index: FullTexts = FTS5) -> None:
        self.conn = conn
        self.index = index

    @contextmanager
    def transaction(self, key: SessionKey) -> Iterator[object]:
        db = Db(self.conn)
        with db.write() as tx:
            db.lock(digest_lock(key))
            yield tx

    def covering(self, key: SessionKey, last: int) -> Episode | None:
        return episodes.covering(self.conn, key, SOURCE, last)

    def unextracted(self, key: SessionKey, last: int) -> set[int]:
        return turns.unextracted_indexes(self.conn, key, last)

    def insert(self, episode: Episode) -> None:
        episodes.insert(self.conn, episode, self.index.episodes)

    def remember(self, draft: Draft, key: SessionKey, now: datetime) -> Remembered:
        return remember(self.conn, draft, key.group, key.agent, now, index=self.index.memories)

    def link(self, episode_id: str, memory_ids: list[str]) -> None:
        episodes.link_memories(self.conn, episode_id, memory_ids)

    def mark_extracted(self, key: SessionKey, last: int, episode_id: str) -> None:
        turns.mark_extracted(self.conn, key, last, episode_id)


def compressed(
    home: Home,
    target: Tables,
    read: Callable[[], list[dict[str, Any]]],
    key: SessionKey,
    keep: int,
    now: datetime,
    words: Vocabulary | None = None,
) -> Compressed:
    """Compress the session whose records ``read`` gives, recording it in ``target``."""
    if keep < 0:
        raise BadInput("--keep must not be negative")
    records = read()
    cut = _cut(records, keep)
    older, kept = records[:cut], records[cut:]
    kept_messages = [m for r in kept for m in to_openai(from_record(l1_record(r)))]
    if not older:
        return Compressed(kept_messages, None, [], 0, len(kept))
    last = older[-1]["turn_index"]
    with target.transaction(key):
        episode = target.covering(key, last)
        fresh_indexes = target.unextracted(key, last)
        fresh = tuple(r for r in older if r["turn_index"] in fresh_indexes)
        if episode is None:
            episode = build_episode(key, older, SOURCE, now, ongoing=True)
            episode = episode._replace(tags=episode_tags(home, older))
            target.insert(episode)
        remembered = [
            target.remember(draft._replace(source_episode_id=episode.id), key, now)
            for draft in extract.from_records(list(fresh), words)
        ]
        if remembered:
            linked = list(
                dict.fromkeys([*episode.linked_memory_ids, *(r.memory.id for r in remembered)])
            )
            target.link(episode.id, linked)
            episode = episode._replace(linked_memory_ids=linked)
        target.mark_extracted(key, last, episode.id)
    summary = {
        "role": "system",
        "content": f"[Summary of turns {episode.first_turn}-{last}] {episode.summary}",
    }
    return Compressed([summary, *kept_messages], episode, remembered, len(older), len(kept), fresh)


def _cut(records: list[dict[str, Any]], keep: int) -> int:
    """Where the kept turns start: the last ``keep``, moved back so they never open
    with a tool result whose call would be compressed away."""
    cut = max(0, len(records) - keep)
    while 0 < cut < len(records) and records[cut].get("role") == "tool":
        cut -= 1
    return cut
