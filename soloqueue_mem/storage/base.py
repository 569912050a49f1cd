"""The storage interface: the contract every back end keeps, and the half of it both
back ends share, written once over the domain functions (which run the same SQL on
either driver's connection through :class:`soloqueue_mem.db.adapter.Db`).

Imported on ``log``'s path (:class:`~soloqueue_mem.storage.sqlite.backend.SqliteBackend`
derives from :class:`Backend`): no ``typing`` at run time, and every domain module is
imported inside the method using it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod  # abc is loaded at interpreter start-up

from soloqueue_mem.errors import NotFound

# in a module of their own (log reads them without this one); callers import them here too
from soloqueue_mem.storage.url import check_url, database_url, shown_url  # noqa: F401

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterable, Iterator
    from contextlib import AbstractContextManager
    from datetime import datetime
    from typing import Any

    from soloqueue_mem.config import Config
    from soloqueue_mem.context.cache import TokenCache
    from soloqueue_mem.context.compress import Compressed
    from soloqueue_mem.db.adapter import Connection
    from soloqueue_mem.graph.db import GraphDb
    from soloqueue_mem.home import Home
    from soloqueue_mem.lifecycle.consolidate import Options
    from soloqueue_mem.lifecycle.digest import DbTarget
    from soloqueue_mem.lifecycle.gc import GcOptions
    from soloqueue_mem.lifecycle.model_extract import ModelExtraction
    from soloqueue_mem.lifecycle.session_end import Ended
    from soloqueue_mem.lifecycle.vocabulary import Vocabulary
    from soloqueue_mem.memory.attach import Rows
    from soloqueue_mem.memory.attachments import Attachment
    from soloqueue_mem.memory.attachments import Filters as AttachmentFilters
    from soloqueue_mem.memory.channels import Request
    from soloqueue_mem.memory.channels import Result as RecallResult
    from soloqueue_mem.memory.episodes import Episode, EpisodeFilters
    from soloqueue_mem.memory.fulltexts import FullTexts
    from soloqueue_mem.memory.hotcold import Answer
    from soloqueue_mem.memory.model import Memory
    from soloqueue_mem.memory.promote import Promoted
    from soloqueue_mem.memory.scratchpad import Scratchpad
    from soloqueue_mem.memory.store import Changes, Draft, Filters, Forgotten, Remembered
    from soloqueue_mem.memory.working import Added, Entry
    from soloqueue_mem.ops.verify import VerifyOptions
    from soloqueue_mem.semantic.dense import DenseHit
    from soloqueue_mem.semantic.dense import Scope as DenseScope
    from soloqueue_mem.semantic.model import Embedder
    from soloqueue_mem.sessions.events import SessionKey
    from soloqueue_mem.sessions.reader import SessionLogContent
    from soloqueue_mem.sessions.trace import TraceHit
    from soloqueue_mem.sessions.turns import Scope, SessionRow, Turn
    from soloqueue_mem.sessions.writer import Item, LoggedTurn, Offload, Rejected, WriteChunk
    from soloqueue_mem.state.values import Entry as ValueEntry
    from soloqueue_mem.text.lexicon import Lexicon

    # a store's dense index: its connection, and the pass (connection, model, now, with
    # the turns, time budget, progress): its report
    DenseIndex = tuple[
        Connection,
        Callable[
            [Connection, Embedder, datetime, bool, float | None, Callable[[int, int], None] | None],
            dict[str, Any],
        ],
    ]

NO_STORE = "no store yet"
NO_MEMORY = "no memories yet (no data directory or memory.db)"
NO_EPISODES = "no episodes yet (no data directory or memory.db)"
NO_STATE = "nothing stored yet (no data directory or state.db)"
NO_ATTACHMENTS = "no attachments yet (no data directory or memory.db)"
READ_ONLY_NOTE = "the store is read-only: access counts were not updated"
GC_LOCK = 0x4743_4C4B  # the gc run's (a PostgreSQL session advisory lock)
GC_BUSY = "gc is running on another host sharing this database; try later"


class Backend(ABC):
    """What every storage back end guarantees the library (``Store``, the fast paths
    that hold one directly, recall through its :class:`~soloqueue_mem.memory.channels.
    Source` methods): :class:`~soloqueue_mem.storage.sqlite.backend.SqliteBackend` on
    the data directory's files, :class:`~soloqueue_mem.storage.postgres.backend.
    PostgresBackend` on a database.

    The contract, for every method:

    - **One transaction per write method**: a write is whole or absent, never partial;
      a failure rolls it back. ``log`` is the one stream: it commits chunk by chunk as
      it yields, so every turn it has yielded is stored.
    - **Idempotent by** ``event_id``: a write that carries an event id already applied
      (a ``log`` item, ``remember``) changes nothing and answers as the first one did,
      marked duplicate.
    - **Only** :mod:`soloqueue_mem.errors` **raised** (NotFound for an unknown ref,
      BadInput, Unsupported for what this back end cannot do, StorageError), with one
      exception: a connection lost mid-call surfaces as the driver's own error, which
      :meth:`lost` recognises so that the caller turns it into TempFail.
    - **Reads never create**: a read of a store or item that does not exist answers
      empty or NotFound and writes nothing (on PostgreSQL connecting migrates the
      schema, which holds no data).

    The methods implemented here are the same on both back ends but for the connection
    (:meth:`connection`) and the full-text indexes (:meth:`full_texts`) they use; the
    abstract ones are what truly differs (full-text search, vectors, the session logs'
    reader, consolidation, upkeep).

    Times (``now``) are the caller's pinned clock; ``group``/``agent``/``session`` and
    refs are validated ids.
    """

    name: str
    home: Home
    config: Config

    @property
    @abstractmethod
    def channels(self) -> frozenset[str]:
        """The recall channels this back end serves."""

    # -- the connection ----------------------------------------------------------------

    @abstractmethod
    def connection(self, name: str, create: bool) -> Connection | None:
        """The open connection holding store ``name``'s tables (memory, state, graph,
        artifacts); None when it does not exist yet and not ``create``."""

    def existing(self, name: str, missing: str) -> Connection:
        """The connection to ``name``; NotFound(``missing``) when it does not exist."""
        conn = self.connection(name, create=False)
        if conn is None:
            raise NotFound(missing)
        return conn

    def _created(self, name: str) -> Connection:
        conn = self.connection(name, create=True)
        assert conn is not None
        return conn

    @abstractmethod
    def full_texts(self) -> FullTexts:
        """The full-text indexes of memories, episodes and attachments' texts the
        domain SQL keeps beside their rows."""

    @abstractmethod
    def init(self) -> None:
        """Create or migrate the store (``init``)."""

    @abstractmethod
    def warm(self) -> None:
        """Connect and load what the first call would (a server pays this at start, and
        an unreachable database fails there)."""

    @abstractmethod
    def lost(self, exc: BaseException) -> bool:
        """Whether ``exc`` is the connection being lost: the call failed, the next one
        reconnects."""

    @abstractmethod
    def close(self) -> None:
        """Close the connections; the back end reconnects if used again."""

    # -- turns and sessions ------------------------------------------------------------

    def log(
        self,
        items: Iterable[Item],
        default: tuple[str, str, str | None],
        now: datetime,
        offload: Offload | None,
        queue_when_busy: bool = False,
    ) -> Iterator[LoggedTurn | Rejected]:
        """``log``: append each item to its session (``default``: the group, agent and
        session of an item naming none), one result per item in order; a bad item is
        Rejected without stopping the stream, a repeated ``event_id`` is a duplicate.
        ``queue_when_busy`` (hooks): turns a store too busy to index now are appended to
        the logs and indexed later, yielding nothing, rather than refused. Tool outputs
        feed the working memory."""
        from soloqueue_mem.sessions.writer import log_events
        from soloqueue_mem.storage.working_feed import feeding_working_memory

        conn = self._created("memory")

        def feed(outputs: list[tuple[str, str]]) -> None:
            from soloqueue_mem.memory import working

            working.feed(conn, outputs, now)

        logged = log_events(
            self.home, conn, self._loggable(items), default, self.config, now,
            offload=offload, write=self._turn_writer(now), queue_when_busy=queue_when_busy,
        )  # fmt: skip
        return feeding_working_memory(logged, feed)

    def _loggable(self, items: Iterable[Item]) -> Iterable[Item]:
        """``items`` as this back end can store them: all of them, unless it says."""
        return items

    def _turn_writer(self, now: datetime) -> WriteChunk | None:
        """What writes a chunk of turns: None for the writer of memory.db and the
        session logs (:mod:`soloqueue_mem.sessions.writer`'s own)."""
        return None

    @abstractmethod
    def trace(
        self, query: str, scope: Scope, limit: int, lexicon: Callable[[], Lexicon]
    ) -> list[TraceHit]:
        """``trace``: the turns matching ``query`` in ``scope``, best first."""

    def newest_turns(self, scope: Scope, limit: int) -> list[Turn]:
        """The ``limit`` newest turns of ``scope`` (logged before ``scope.until``, when
        given), newest first."""
        from soloqueue_mem.sessions import turns

        conn = self.connection("memory", create=False)
        return turns.newest_turns(conn, scope, limit) if conn else []

    @abstractmethod
    def sessions(self, group: str | None, agent: str | None, limit: int) -> list[SessionRow]:
        """``session list``: sessions, most recently active first."""

    @abstractmethod
    def session(self, key: SessionKey) -> SessionLogContent:
        """``session show``/``export``: the session's records; NotFound when unknown."""

    def session_turns(self, key: SessionKey) -> list[Turn]:
        """The session's turns by index (none: an unknown session)."""
        from soloqueue_mem.sessions import turns

        conn = self.connection("memory", create=False)
        return turns.session_turns(conn, key) if conn else []

    def session_page(self, key: SessionKey, after: int, limit: int) -> list[Turn]:
        """At most ``limit`` of the session's turns past turn index ``after``, by index
        (none: an unknown session); the viewer pages with it."""
        from soloqueue_mem.sessions import turns

        conn = self.connection("memory", create=False)
        return turns.session_page(conn, key, after, limit) if conn else []

    def session_end(self, key: SessionKey, now: datetime) -> Ended:
        """``session end``: mark it ended, digest it into episodes and memories, clear
        its transient memories."""
        from soloqueue_mem.lifecycle.on_log import extracted_turns
        from soloqueue_mem.lifecycle.session_end import end_and_digest

        missing = f"session {'/'.join(key)} not found (no data directory)"
        target = self.digest_target(self.existing("memory", missing))
        done = extracted_turns(self.connection("state", create=False), key)
        model = self.model(now)
        try:
            return end_and_digest(target, key, self.config, now, done, model)
        finally:
            if model is not None:
                model.close()

    def model(self, now: datetime) -> ModelExtraction | None:
        """The configured model (``SOLOQUEUE_LLM_URL``), queuing its failed turns in this
        back end's store; None without one."""
        from soloqueue_mem.lifecycle.model_extract import configured

        model = configured(self.config, now)
        if model is not None:
            self._queue_failures(model)
        return model

    @abstractmethod
    def _queue_failures(self, model: ModelExtraction) -> None:
        """Have ``model`` queue the turns it failed to extract in this back end's store."""

    def digest_target(self, conn: Connection) -> DbTarget:
        """Digesting into ``conn``: the session's records as :meth:`session` reads them,
        this back end's full-text indexes."""
        from soloqueue_mem.lifecycle.digest import DbTarget

        def records(key: SessionKey) -> list[dict[str, Any]]:
            return self.session(key).records

        return DbTarget(self.home, conn, self.config.language, records, self.full_texts())

    # -- episodes and consolidation ----------------------------------------------------

    def episodes(self, filters: EpisodeFilters, limit: int, oldest: bool = False) -> list[Episode]:
        """``episode list``: newest first (``oldest``: the earliest first)."""
        from soloqueue_mem.memory.episodes import list_episodes

        conn = self.connection("memory", create=False)
        if conn is None:
            return []
        return list_episodes(conn, filters, limit, self.full_texts().episodes, oldest)

    def episode(self, ref: str) -> Episode:
        """``episode show``: the episode with id (or unique prefix) ``ref``; NotFound."""
        from soloqueue_mem.memory.episodes import get

        return get(self.existing("memory", NO_EPISODES), ref)

    def search_episodes(
        self, terms: list[str], filters: EpisodeFilters, limit: int
    ) -> list[tuple[Episode, float]]:
        """Recall's episode channel: episodes matching ``terms``, with their scores."""
        from soloqueue_mem.db.adapter import Db

        conn = self.connection("memory", create=False)
        return self.full_texts().episodes.search(Db(conn), terms, filters, limit) if conn else []

    def touch_episodes(self, ids: list[str]) -> None:
        """Count a retrieval of each episode (recall's access counts; nothing on a
        store opened read-only)."""
        from soloqueue_mem.db.adapter import Db
        from soloqueue_mem.memory.episodes import touch

        conn = self.connection("memory", create=False)
        if conn is not None and not Db(conn).read_only():
            touch(conn, ids)

    @abstractmethod
    def consolidate(self, now: datetime, options: Options) -> dict[str, Any]:
        """``consolidate``: extract, decay, archive and digest; its report."""

    def extract_on_log(
        self, targets: list[tuple[SessionKey, int]], now: datetime, words: Vocabulary
    ) -> list[Remembered]:
        """``extract_on_log``'s worker: the memories of the target turns (session,
        turn index), each turn extracted once and remembered as :meth:`remember` does."""
        from soloqueue_mem.lifecycle.on_log import extract_turns

        def remembered(draft: Draft, group: str, agent: str) -> Remembered:
            return self.remember(draft, group, agent, now)

        memory = self.existing("memory", NO_MEMORY)
        return extract_turns(memory, self._created("state"), targets, remembered, now, words)

    def open_extraction_sessions(self, chosen: list[list]) -> list[list]:
        """The extraction targets whose session is not full yet (``log``)."""
        from soloqueue_mem.lifecycle.on_log import open_sessions

        return open_sessions(self.connection("state", create=False), chosen)

    # -- the dense index ---------------------------------------------------------------

    @abstractmethod
    def dense_index(self) -> DenseIndex:
        """Where ``index --embed`` writes: the connection and the pass that embeds
        there; NotFound without a store, Unsupported when this back end cannot hold
        vectors."""

    def embed_estimate(self, model: str, now: datetime, with_turns: bool) -> dict[str, Any]:
        """``index --embed --estimate``: how much a pass would embed."""
        from soloqueue_mem.semantic.embed import estimate, memory_items, turn_items

        conn, _ = self.dense_index()
        turns = turn_items(conn) if with_turns else None
        return estimate(conn, model, memory_items(conn, now, self.full_texts()), turns)

    def embed(
        self,
        embedder: Embedder,
        now: datetime,
        with_turns: bool,
        time_budget: float | None,
        progress: Callable[[int, int], None] | None,
    ) -> dict[str, Any]:
        """``index --embed``: vectors for what lacks one, within ``time_budget``
        seconds; resumable (a later pass does the rest)."""
        conn, embedded = self.dense_index()
        return embedded(conn, embedder, now, with_turns, time_budget, progress)

    # -- recall (recall's Source) ------------------------------------------------------

    def recall(
        self, request: Request, now: datetime, lexicon: Callable[[], Lexicon]
    ) -> RecallResult:
        """``recall``: every channel this back end serves, fused."""
        from soloqueue_mem.memory.recall import recall

        return recall(request, self.config, now, lexicon, source=self)

    @abstractmethod
    def memory_search(self) -> tuple[str, str | None]:
        """The name of the memory search :meth:`search` runs (recall reports it) and,
        when it is not the configured ``search_backend``, why."""

    @abstractmethod
    def search(
        self, terms: list[str], filters: Filters, now: datetime, limit: int
    ) -> list[tuple[Memory, float]]:
        """Recall's memory search: memories matching ``terms``, with their scores."""

    def search_each(
        self, terms: list[str], filters: list[Filters], now: datetime, limit: int
    ) -> list[list[tuple[Memory, float]]]:
        """:meth:`search` for each of ``filters`` (recall asks two at once: a back end
        may share their work)."""
        return [self.search(terms, one, now, limit) for one in filters]

    @abstractmethod
    def held_words(self, words: list[str]) -> set[str]:
        """The ``words`` (query terms) that some memory, turn, episode or attachment
        of the whole store holds, as recall's word searches match them (their document
        frequency is not 0): one indexed existence lookup per word and index, never a
        scan. Recall translates only the words held nowhere (:mod:`soloqueue_mem.text.
        dictionary`)."""

    @abstractmethod
    def nearest(
        self, query: str, scope: DenseScope, now: datetime, limit: int, model: str = "e5"
    ) -> list[DenseHit]:
        """Recall's dense channels: the items nearest ``query`` by ``model`` (none when
        the dense search is off, or this back end holds no vectors of that model)."""

    def touch(self, memory_ids: list[str], now: datetime) -> str | None:
        """Count a retrieval of each memory (recall's access counts); a note instead
        when the store cannot record it (opened read-only)."""
        from soloqueue_mem.db.adapter import Db
        from soloqueue_mem.memory.store import touch

        conn = self.connection("memory", create=False)
        if conn is not None and Db(conn).read_only():
            return READ_ONLY_NOTE
        if conn is not None:
            touch(conn, memory_ids, now)
        return None

    def existing_graph(self) -> GraphDb | None:
        """Recall's graph channel: the graph memory, None when the store has none
        (never created by a read; PostgreSQL's graph tables always exist)."""
        return self.graph_db()

    # -- memories ----------------------------------------------------------------------

    def remember(
        self, draft: Draft, group: str, agent: str, now: datetime, event_id: str | None = None
    ) -> Remembered:
        """``remember``: store ``draft`` (superseding the memory it replaces); the same
        ``event_id`` again, or the same content, is a duplicate. Stored, not embedded: a
        one-shot CLI process must not load the model (the ``Store`` API embeds through
        :meth:`embed_held` when its process holds one; ``consolidate`` embeds the rest)."""
        from soloqueue_mem.memory.store import remember

        conn = self._created("memory")
        return remember(conn, draft, group, agent, now, event_id, self.full_texts().memories)

    def memory(self, ref: str) -> Memory:
        """``memory show``: the memory with id (or unique prefix) ``ref``; NotFound."""
        from soloqueue_mem.memory.store import get

        return get(self.existing("memory", NO_MEMORY), ref)

    def memories(self, filters: Filters, now: datetime, limit: int) -> list[Memory]:
        """``memory list``: the memories ``filters`` selects, newest first."""
        from soloqueue_mem.memory.store import list_memories

        conn = self.connection("memory", create=False)
        return list_memories(conn, filters, now, limit, self.full_texts().memories) if conn else []

    def memories_starting(
        self,
        filters: Filters,
        bounds: list[tuple[str, str]],
        expiring_by: datetime,
        now: datetime,
        limit: int,
    ) -> list[Memory]:
        """Recall's plans of a window: the memories ``filters`` selects that expire by
        ``expiring_by`` and whose content starts with a text between one of
        ``bounds``' two (a plan's prefix and day)."""
        from soloqueue_mem.memory.store import starting_between

        conn = self.connection("memory", create=False)
        if conn is None:
            return []
        index = self.full_texts().memories
        return starting_between(conn, filters, bounds, expiring_by, now, limit, index)

    def history(self, ref: str) -> list[Memory]:
        """``memory history``: the supersede chain through ``ref``, oldest first."""
        from soloqueue_mem.memory.store import history

        return history(self.existing("memory", NO_MEMORY), ref, self.full_texts().memories)

    def forget(self, refs: Iterable[str], now: datetime) -> Forgotten:
        """``memory forget``: erase the memories and their earlier versions; the ids
        erased (NotFound for an unknown ref, and then none is), and a ``note`` on where
        the erased bytes may linger. identity/ is republished without them when this
        data directory publishes it."""
        from soloqueue_mem.lifecycle.consolidate import republish_identity
        from soloqueue_mem.memory.store import active

        erased = self.erase(refs)
        conn = self.existing("memory", NO_MEMORY)
        index = self.full_texts().memories
        published = republish_identity(self.home, lambda: active(conn, now, index), now)
        return erased._replace(identity_rewritten=published)

    @abstractmethod
    def erase(self, refs: Iterable[str]) -> Forgotten:
        """:meth:`forget`'s erasing, for good as far as this back end can (its ``note``
        says how far)."""

    def import_v1(self, converted: list[Memory]) -> dict[str, Any]:
        """``import memories-v1``: the converted memories not imported before."""
        from functools import partial

        from soloqueue_mem.memory.store import by_source, put_back
        from soloqueue_mem.ops.memories_v1 import import_through

        conn, index = self._created("memory"), self.full_texts().memories
        found = partial(by_source, conn, index=index)
        return import_through(converted, found, partial(put_back, conn, index=index))

    def edit(self, ref: str, changes: Changes, now: datetime) -> Memory:
        """``memory edit``: the memory with ``changes`` applied."""
        from soloqueue_mem.memory.store import edit

        conn = self.existing("memory", NO_MEMORY)
        return edit(conn, ref, changes, now, self.full_texts().memories)

    def restore(self, ref: str, now: datetime) -> Memory:
        """``memory restore``: an archived or superseded memory made active again."""
        from soloqueue_mem.memory.store import restore

        return restore(self.existing("memory", NO_MEMORY), ref, now)

    # -- attachments: the rows here, the blobs in this host's CAS ---------------------

    def attachments(self, create: bool) -> Rows:
        """The attachment rows (``attach``, ``attachment list/show/rm``); NotFound when
        the store holds none yet and not ``create``."""
        from soloqueue_mem.memory.attach import Rows

        conn = self._created("memory") if create else self.existing("memory", NO_ATTACHMENTS)
        return Rows(conn, self.full_texts().attachments)

    def search_attachments(
        self, terms: list[str], filters: AttachmentFilters, now: str, limit: int
    ) -> list[tuple[Attachment, float]]:
        """Recall's attachment channel: attachments whose texts match ``terms``."""
        from soloqueue_mem.db.adapter import Db

        conn = self.connection("memory", create=False)
        if conn is None:
            return []
        return self.full_texts().attachments.search(Db(conn), terms, filters, now, limit)

    # -- upkeep: the database's part beside this host's files -------------------------

    @abstractmethod
    def stats(self, artifacts: sqlite3.Connection | None) -> dict[str, Any]:
        """``stats``: counts and sizes (``artifacts``: this host's catalog, if any)."""

    @abstractmethod
    def verify(self, options: VerifyOptions, now: float) -> dict[str, Any]:
        """``verify``: the findings of the integrity checks (repairs with the options)."""

    def gc(
        self,
        open_catalog: Callable[[], sqlite3.Connection | None],
        now: datetime,
        options: GcOptions,
        progress: Callable[[int], None] | None,
    ) -> dict[str, Any]:
        """``gc``: expired and unreferenced data removed; its report. The blobs and
        their catalog (``artifacts.db``) are this data directory's on either back end
        (no database row names a blob), so the run is SQLite's, held :meth:`alone`."""
        from soloqueue_mem.lifecycle.gc import nothing_done, run_gc

        if not self.home.exists():
            return nothing_done(options.dry_run)
        self.home.check_safe()
        with self.alone(GC_LOCK, options.wait, GC_BUSY):
            return run_gc(self.home, open_catalog, now, options, progress)

    @abstractmethod
    def alone(self, key: int, wait: bool, busy: str) -> AbstractContextManager[None]:
        """Held while a run (``consolidate``, ``gc``) must be the only one among the
        hosts sharing this store: ``key`` names the run; without ``wait``, TempFail
        (``busy``) when another host holds it."""

    # -- the graph memory --------------------------------------------------------------

    @abstractmethod
    def graph_db(self) -> GraphDb:
        """The graph memory on this back end (closed with the back end)."""

    # -- working memory, promote, hot + cold query -------------------------------------

    def working_add(self, group: str, content: str, source: str, now: datetime) -> Added:
        """``working add``: an entry in the group's working memory."""
        from soloqueue_mem.memory import working

        return working.add(self._created("memory"), group, content, source, now)

    def working(self, group: str, now: datetime, limit: int) -> list[Entry]:
        """``working list``: the group's live entries, newest first."""
        from soloqueue_mem.memory import working

        conn = self.connection("memory", create=False)
        return working.latest(conn, group, now, limit) if conn else []

    def working_clear(self, group: str) -> int:
        """``working clear``: the number of entries removed."""
        from soloqueue_mem.memory import working

        return working.clear(self.existing("memory", NO_STORE), group)

    @abstractmethod
    def embed_held(self, memory_ids: list[str], now: datetime, load: bool = False) -> list[str]:
        """Give ``memory_ids`` vectors now by every embedding model this process already
        holds (a warm server's), when ``search_backend`` is hybrid or dense; the names
        of the models that did. Loads no model, but e5 with ``load`` (``promote``)."""

    def promote(self, group: str, agent: str, text: str, now: datetime) -> Promoted:
        """``promote``: the facts of ``text`` remembered, those already known skipped
        (one transaction), and embedded at once (e5 loaded: ``query`` searches by it)."""
        from soloqueue_mem.db.adapter import Db
        from soloqueue_mem.memory.promote import promoted
        from soloqueue_mem.memory.store import active_keys

        conn = self._created("memory")
        with Db(conn).write():
            result = promoted(
                text,
                lambda keys: active_keys(conn, group, agent, keys, now),
                lambda draft: self.remember(draft, group, agent, now),
            )
        self.embed_held(result.stored, now, load=True)
        return result

    @abstractmethod
    def query(
        self, query: str, group: str, now: datetime, lexicon: Callable[[], Lexicon]
    ) -> Answer:
        """``query``: the working memory's hot answer with the memories' cold search."""

    # -- scratchpad, kv preferences, session variables ---------------------------------

    def scratchpad(self, group: str, agent: str, template: str) -> Scratchpad:
        """``scratchpad show``: the pad, ``template`` when none was written."""
        from soloqueue_mem.memory.scratchpad import from_content, get

        conn = self.connection("memory", create=False)
        if conn is None:
            return from_content(group, agent, template, None)
        return get(conn, group, agent, template)

    def scratchpad_put(self, group: str, agent: str, content: str, now: datetime) -> Scratchpad:
        """``scratchpad set``/``edit``: the pad replaced by ``content``."""
        from soloqueue_mem.memory.scratchpad import put

        return put(self._created("memory"), group, agent, content, now)

    def value_put(
        self, table: str, scope: tuple[str, ...], key: str, value: Any, now: datetime
    ) -> ValueEntry:
        """``kv set``/``session set``: ``key`` of ``scope`` in ``table`` set to ``value``."""
        from soloqueue_mem.state.values import put

        return put(self._created("state"), table, scope, key, value, now)

    def value(self, table: str, scope: tuple[str, ...], key: str) -> ValueEntry:
        """``kv get``/``session get``: the entry; NotFound when unset."""
        from soloqueue_mem.state.values import get

        conn = self.existing("state", f"no key {key!r} in {'/'.join(scope)}")
        return get(conn, table, scope, key)

    def values(self, table: str, scope: tuple[str, ...]) -> list[ValueEntry]:
        """``kv list``: the entries of ``scope`` by key."""
        from soloqueue_mem.state.values import entries

        conn = self.connection("state", create=False)
        return entries(conn, table, scope) if conn else []

    def value_remove(self, table: str, scope: tuple[str, ...], key: str) -> ValueEntry:
        """``kv rm``/``session unset``: the entry removed; NotFound when unset."""
        from soloqueue_mem.state.values import remove

        return remove(self.existing("state", NO_STATE), table, scope, key)

    def session_set(self, key: SessionKey, name: str, value: Any, now: datetime) -> ValueEntry:
        """``session set``: a session variable (the session must exist)."""
        from soloqueue_mem.memory.scratchpad import template
        from soloqueue_mem.state.session import set_variable

        empty = template(self.config.language)
        state, memory = self._created("state"), self._created("memory")
        return set_variable(state, memory, key, name, value, now, empty)

    # -- context -----------------------------------------------------------------------

    def token_cache(self) -> TokenCache | None:
        """The token counts cache ``context build`` reads and fills (None: no store
        yet, nothing cached)."""
        from soloqueue_mem.context.cache import SqlTokenCache

        conn = self.connection("memory", create=False)
        return SqlTokenCache(conn) if conn is not None else None

    def compress(
        self, key: SessionKey, keep: int, now: datetime, words: Vocabulary | None
    ) -> Compressed:
        """``context compress``: the session's older turns summarised, ``keep`` newest
        kept whole."""
        from soloqueue_mem.context.compress import Tables, compressed

        target = Tables(self._created("memory"), self.full_texts())

        def records() -> list[dict[str, Any]]:
            return self.session(key).records

        return compressed(self.home, target, records, key, keep, now, words)
