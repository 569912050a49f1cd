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

from collections.abc import Callable, Collection
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from soloqueue_mem import faults
from soloqueue_mem.db.adapter import Db
from soloqueue_mem.home import Home
from soloqueue_mem.lifecycle import extract
from soloqueue_mem.lifecycle.episode_builder import build_episode
from soloqueue_mem.lifecycle.vocabulary import Vocabulary
from soloqueue_mem.memory import episodes, scratchpad, store
from soloqueue_mem.memory.episodes import Episode
from soloqueue_mem.memory.fulltexts import FTS5, FullTexts
from soloqueue_mem.memory.store import Draft, Remembered
from soloqueue_mem.sessions import turns
from soloqueue_mem.sessions.events import SessionKey
from soloqueue_mem.sessions.offload import l1_record
from soloqueue_mem.sessions.reader import read_session
from soloqueue_mem.text.keywords import keywords
from soloqueue_mem.text.lexicon import Lexicon, open_lexicon

CHUNK = 1000
if TYPE_CHECKING:
    from soloqueue_mem.db.adapter import Connection
    from soloqueue_mem.lifecycle.model_extract import ModelExtraction

Extractor = Callable[[SessionKey, list[dict[str, Any]]], list[Draft]]
# The model's rewrite of the whole scratchpad for a new episode (None: it failed).
Rewrite = Callable[[str, Episode], str | None]


def rules(words: Vocabulary | None = None) -> Extractor:
    """The default extractor: the quick rules (no model), with ``words``' predicates."""
    return lambda _key, records: extract.from_records(records, words)


class Writers(NamedTuple):
    """What turns a stretch into memories, an episode summary and a scratchpad."""

    extractor: Extractor
    summarize: Callable[[list[dict[str, Any]]], str | None] | None = None  # None: the rules'
    rewrite: Rewrite | None = None  # None: the rules' line under 近期进展


def writers(model: ModelExtraction | None, words: Vocabulary | None) -> Writers:
    """The model's writers when there is one (each falling back to the rules), else
    the quick rules with ``words``' predicates."""
    if model is None:
        return Writers(rules(words))
    return Writers(model, model.summarize, model.rewrite_scratchpad)


class Digest(NamedTuple):
    episodes: list[Episode]
    remembered: list[Remembered]
    turns: int


def digest(
    target: DbTarget,
    home: Home,
    key: SessionKey,
    now: datetime,
    source: str,
    use: Writers | None = None,
    extracted_on_log: Collection[int] = (),
) -> Digest:
    """Episodes and memories for the session's turns not yet extracted, written by
    ``use`` (the quick rules when None); the turns in ``extracted_on_log`` gave their
    memories already and are only summarized."""
    use = use or Writers(rules())
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
        drafts = use.extractor(key, unread) if unread else []
        summary = use.summarize(stretch) if use.summarize else None
        if summary:
            episode = episode._replace(summary=summary)
        faults.fault("digest.before_write")
        stored = target.store(key, stretch, drafts, episode, now)
        if stored is None:
            continue  # a concurrent `session end` or consolidate digested it first
        made.append(stored[0])
        remembered += stored[1]
    if made:
        target.note_progress(key, made[-1], now, use.rewrite)
    return Digest(made, remembered, len(records))


class DbTarget:
    """Digesting into a back end's database (:class:`soloqueue_mem.db.adapter.Db`): the
    session's records come from ``records``, by default this host's JSONL log."""

    def __init__(
        self,
        home: Home,
        conn: Connection,
        language: str = "auto",
        records: Callable[[SessionKey], list[dict[str, Any]]] | None = None,
        index: FullTexts = FTS5,
    ) -> None:
        self.home = home
        self.conn = conn
        self.language = language
        self._records = records
        self.index = index

    def pending(self, key: SessionKey) -> set[int]:
        return turns.unextracted_indexes(self.conn, key)

    def records(self, key: SessionKey) -> list[dict[str, Any]]:
        if self._records is not None:
            return self._records(key)
        return read_session(self.home, key).records

    def store(
        self,
        key: SessionKey,
        stretch: list[dict[str, Any]],
        drafts: list[Draft],
        episode: Episode,
        now: datetime,
    ) -> tuple[Episode, list[Remembered]] | None:
        """One write transaction holding the session's digest lock (:func:`digest_lock`)."""
        conn, last = self.conn, stretch[-1]["turn_index"]
        db = Db(conn)
        with db.write():
            db.lock(digest_lock(key))
            if not still_pending(turns.unextracted_indexes(conn, key, last), stretch):
                return None
            episode, found = remembered_for(
                episode,
                drafts,
                lambda d: store.remember(
                    conn, d, key.group, key.agent, now, index=self.index.memories
                ),
            )
            episodes.insert(conn, episode, self.index.episodes)
            turns.mark_extracted(conn, key, last, episode.id)
        return episode, found

    def note_progress(
        self, key: SessionKey, episode: Episode, now: datetime, rewrite: Rewrite | None = None
    ) -> None:
        """The scratchpad updated for ``episode``. The model's rewrite runs outside the
        write transaction; a scratchpad written meanwhile gets the rules' line instead,
        so no write is lost."""
        group, agent, template = key.group, key.agent, scratchpad.template(self.language)
        pad = scratchpad.get(self.conn, group, agent, template).content
        content = next_pad(pad, episode, self.language, rewrite)
        with Db(self.conn).write():
            scratchpad.lock(self.conn, group, agent)
            current = scratchpad.get(self.conn, group, agent, template).content
            if current != pad:
                content = next_pad(current, episode, self.language, None)
            scratchpad.put(self.conn, group, agent, content, now)


def digest_lock(key: SessionKey) -> str:
    """The lock name a session's digest and ``context compress`` hold while they
    write, so two hosts never extract the same turns twice."""
    return "digest/" + "/".join(key)


def next_pad(pad: str, episode: Episode, language: str, rewrite: Rewrite | None) -> str:
    """The scratchpad after ``episode``: the model's rewrite of it (seed 003 §7.3), or
    the rules' line for the episode first under 近期进展."""
    rewritten = rewrite(pad, episode) if rewrite is not None else None
    return rewritten or scratchpad.with_progress(pad, progress_entry(episode), language)


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
