"""The storage interface, and which back end a data directory uses."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

# in a module of their own (log reads them without this one); callers import them here too
from soloqueue_mem.storage.url import check_url, database_url, shown_url  # noqa: F401

if TYPE_CHECKING:
    import sqlite3

    from soloqueue_mem.context.cache import TokenCache
    from soloqueue_mem.context.compress import Compressed
    from soloqueue_mem.graph.db import GraphDb
    from soloqueue_mem.lifecycle.consolidate import Options, Progress
    from soloqueue_mem.lifecycle.gc import GcOptions
    from soloqueue_mem.lifecycle.model_extract import ModelExtraction
    from soloqueue_mem.lifecycle.session_end import Ended
    from soloqueue_mem.lifecycle.vocabulary import Vocabulary
    from soloqueue_mem.memory.attach import Rows
    from soloqueue_mem.memory.attachments import Attachment
    from soloqueue_mem.memory.attachments import Filters as AttachmentFilters
    from soloqueue_mem.memory.episodes import Episode, EpisodeFilters
    from soloqueue_mem.memory.hotcold import Answer
    from soloqueue_mem.memory.model import Memory
    from soloqueue_mem.memory.promote import Promoted
    from soloqueue_mem.memory.recall import Request
    from soloqueue_mem.memory.recall import Result as RecallResult
    from soloqueue_mem.memory.scratchpad import Scratchpad
    from soloqueue_mem.memory.store import Changes, Draft, Filters, Forgotten, Remembered
    from soloqueue_mem.memory.working import Added, Entry
    from soloqueue_mem.ops.verify import VerifyOptions
    from soloqueue_mem.semantic.dense import DenseHit
    from soloqueue_mem.semantic.dense import Scope as DenseScope
    from soloqueue_mem.semantic.model import Embedder
    from soloqueue_mem.sessions.events import SessionKey
    from soloqueue_mem.sessions.reader import SessionLogContent
    from soloqueue_mem.sessions.trace import Scope, TraceHit
    from soloqueue_mem.sessions.turns import SessionRow, Turn
    from soloqueue_mem.sessions.writer import Item, LoggedTurn, Offload, Rejected
    from soloqueue_mem.state.values import Entry as ValueEntry
    from soloqueue_mem.text.lexicon import Lexicon


class Backend(Protocol):
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

    Times (``now``) are the caller's pinned clock; ``group``/``agent``/``session`` and
    refs are validated ids.
    """

    name: str

    @property
    def channels(self) -> frozenset[str]:
        """The recall channels this back end serves."""
        ...

    # -- the connection ----------------------------------------------------------------

    def init(self) -> None:
        """Create or migrate the store (``init``)."""
        ...

    def warm(self) -> None:
        """Connect and load what the first call would (a server pays this at start, and
        an unreachable database fails there)."""
        ...

    def lost(self, exc: BaseException) -> bool:
        """Whether ``exc`` is the connection being lost: the call failed, the next one
        reconnects."""
        ...

    def close(self) -> None:
        """Close the connections; the back end reconnects if used again."""
        ...

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
        the logs and indexed later, yielding nothing, rather than refused."""
        ...

    def trace(
        self, query: str, scope: Scope, limit: int, lexicon: Callable[[], Lexicon]
    ) -> list[TraceHit]:
        """``trace``: the turns matching ``query`` in ``scope``, best first."""
        ...

    def newest_turns(self, scope: Scope, limit: int) -> list[Turn]:
        """The ``limit`` newest turns of ``scope``, newest first."""
        ...

    def turns_before(self, scope: Scope, until: datetime, limit: int) -> list[Turn]:
        """The ``limit`` newest turns of ``scope`` logged before ``until``."""
        ...

    def sessions(self, group: str | None, agent: str | None, limit: int) -> list[SessionRow]:
        """``session list``: sessions, most recently active first."""
        ...

    def session(self, key: SessionKey) -> SessionLogContent:
        """``session show``/``export``: the session's records; NotFound when unknown."""
        ...

    def session_turns(self, key: SessionKey) -> list[Turn]:
        """The session's turns by index (none: an unknown session)."""
        ...

    def session_page(self, key: SessionKey, after: int, limit: int) -> list[Turn]:
        """At most ``limit`` of the session's turns past turn index ``after``, by index
        (none: an unknown session); the viewer pages with it."""
        ...

    def session_end(self, key: SessionKey, now: datetime) -> Ended:
        """``session end``: mark it ended, digest it into episodes and memories, clear
        its transient memories."""
        ...

    # -- episodes and consolidation ----------------------------------------------------

    def episodes(self, filters: EpisodeFilters, limit: int) -> list[Episode]:
        """``episode list``: newest first."""
        ...

    def episode(self, ref: str) -> Episode:
        """``episode show``: the episode with id (or unique prefix) ``ref``; NotFound."""
        ...

    def search_episodes(
        self, terms: list[str], filters: EpisodeFilters, limit: int
    ) -> list[tuple[Episode, float]]:
        """Recall's episode channel: episodes matching ``terms``, with their scores."""
        ...

    def touch_episodes(self, ids: list[str]) -> None:
        """Count a retrieval of each episode (recall's access counts)."""
        ...

    def consolidate(
        self,
        now: datetime,
        options: Options,
        progress: Progress | None = None,
        model: ModelExtraction | None = None,
    ) -> dict[str, Any]:
        """``consolidate``: extract, decay, archive and digest; its report."""
        ...

    def extract_on_log(
        self, targets: list[tuple[SessionKey, int]], now: datetime, words: Vocabulary
    ) -> list[Remembered]:
        """``extract_on_log``'s worker: the memories of the target turns (session,
        turn index), each turn extracted once."""
        ...

    def open_extraction_sessions(self, chosen: list[list]) -> list[list]:
        """The extraction targets whose session is not full yet (``log``)."""
        ...

    # -- the dense index ---------------------------------------------------------------

    def embed_estimate(self, model: str, now: datetime, with_turns: bool) -> dict[str, Any]:
        """``index --embed --estimate``: how much a pass would embed; Unsupported when
        this back end cannot hold vectors."""
        ...

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
        ...

    # -- recall (recall's Source) ------------------------------------------------------

    def recall(
        self, request: Request, now: datetime, lexicon: Callable[[], Lexicon]
    ) -> RecallResult:
        """``recall``: every channel this back end serves, fused."""
        ...

    def memory_search(self) -> tuple[str, str | None]:
        """The name of the memory search :meth:`search` runs (recall reports it) and,
        when it is not the configured ``search_backend``, why."""
        ...

    def search(
        self, terms: list[str], filters: Filters, now: datetime, limit: int
    ) -> list[tuple[Memory, float]]:
        """Recall's memory search: memories matching ``terms``, with their scores."""
        ...

    def nearest(
        self, query: str, scope: DenseScope, now: datetime, limit: int, model: str = "e5"
    ) -> list[DenseHit]:
        """Recall's dense channels: the items nearest ``query`` by ``model`` (none when
        the dense search is off, or this back end holds no vectors of that model)."""
        ...

    def touch(self, memory_ids: list[str], now: datetime) -> str | None:
        """Count a retrieval of each memory (recall's access counts); a note instead
        when the store cannot record it (opened read-only)."""
        ...

    def existing_graph(self) -> GraphDb | None:
        """Recall's graph channel: the graph memory, None when the store has none
        (never created by a read)."""
        ...

    # -- memories ----------------------------------------------------------------------

    def remember(
        self, draft: Draft, group: str, agent: str, now: datetime, event_id: str | None = None
    ) -> Remembered:
        """``remember``: store ``draft`` (superseding the memory it replaces); the same
        ``event_id`` again, or the same content, is a duplicate."""
        ...

    def memory(self, ref: str) -> Memory:
        """``memory show``: the memory with id (or unique prefix) ``ref``; NotFound."""
        ...

    def memories(self, filters: Filters, now: datetime, limit: int) -> list[Memory]:
        """``memory list``: the memories ``filters`` selects, newest first."""
        ...

    def history(self, ref: str) -> list[Memory]:
        """``memory history``: the supersede chain through ``ref``, oldest first."""
        ...

    def forget(self, refs: Iterable[str], now: datetime) -> Forgotten:
        """``memory forget``: erase the memories and their earlier versions; the ids
        erased (NotFound for an unknown ref, and then none is), and a ``note`` on where
        the erased bytes may linger."""
        ...

    def import_v1(self, converted: list[Memory]) -> dict[str, Any]:
        """``import memories-v1``: the converted memories not imported before."""
        ...

    def edit(self, ref: str, changes: Changes, now: datetime) -> Memory:
        """``memory edit``: the memory with ``changes`` applied."""
        ...

    def restore(self, ref: str, now: datetime) -> Memory:
        """``memory restore``: an archived or superseded memory made active again."""
        ...

    # -- attachments: the rows here, the blobs in this host's CAS ---------------------

    def attachments(self, create: bool) -> Rows:
        """The attachment rows (``attach``, ``attachment list/show/rm``); NotFound when
        the store holds none yet and not ``create``."""
        ...

    def search_attachments(
        self, terms: list[str], filters: AttachmentFilters, now: str, limit: int
    ) -> list[tuple[Attachment, float]]:
        """Recall's attachment channel: attachments whose texts match ``terms``."""
        ...

    # -- upkeep: the database's part beside this host's files -------------------------

    def stats(self, artifacts: sqlite3.Connection | None) -> dict[str, Any]:
        """``stats``: counts and sizes (``artifacts``: this host's catalog, if any)."""
        ...

    def verify(self, options: VerifyOptions, now: float) -> dict[str, Any]:
        """``verify``: the findings of the integrity checks (repairs with the options)."""
        ...

    def gc(
        self,
        open_catalog: Callable[[], sqlite3.Connection | None],
        now: datetime,
        options: GcOptions,
        progress: Callable[[int], None] | None,
    ) -> dict[str, Any]:
        """``gc``: expired and unreferenced data removed; its report."""
        ...

    # -- seed 002: the graph memory ----------------------------------------------------

    def graph_db(self) -> GraphDb:
        """The graph memory on this back end (closed with the back end)."""
        ...

    # -- seed 004: working memory, promote, hot + cold query --------------------------

    def working_add(self, group: str, content: str, source: str, now: datetime) -> Added:
        """``working add``: an entry in the group's working memory."""
        ...

    def working(self, group: str, now: datetime, limit: int) -> list[Entry]:
        """``working list``: the group's live entries, newest first."""
        ...

    def working_clear(self, group: str) -> int:
        """``working clear``: the number of entries removed."""
        ...

    def embed_held(self, memory_ids: list[str], now: datetime) -> list[str]:
        """Give ``memory_ids`` vectors now by every embedding model this process already
        holds (a warm server's), when ``search_backend`` is hybrid or dense; the names
        of the models that did. Loads no model."""
        ...

    def promote(self, group: str, agent: str, text: str, now: datetime) -> Promoted:
        """``promote``: the facts of ``text`` remembered, those already known skipped
        (one transaction)."""
        ...

    def query(
        self, query: str, group: str, now: datetime, lexicon: Callable[[], Lexicon]
    ) -> Answer:
        """``query``: the working memory's hot answer with the memories' cold search."""
        ...

    # -- scratchpad, kv preferences, session variables ---------------------------------

    def scratchpad(self, group: str, agent: str, template: str) -> Scratchpad:
        """``scratchpad show``: the pad, ``template`` when none was written."""
        ...

    def scratchpad_put(self, group: str, agent: str, content: str, now: datetime) -> Scratchpad:
        """``scratchpad set``/``edit``: the pad replaced by ``content``."""
        ...

    def value_put(
        self, table: str, scope: tuple[str, ...], key: str, value: Any, now: datetime
    ) -> ValueEntry:
        """``kv set``/``session set``: ``key`` of ``scope`` in ``table`` set to ``value``."""
        ...

    def value(self, table: str, scope: tuple[str, ...], key: str) -> ValueEntry:
        """``kv get``/``session get``: the entry; NotFound when unset."""
        ...

    def values(self, table: str, scope: tuple[str, ...]) -> list[ValueEntry]:
        """``kv list``: the entries of ``scope`` by key."""
        ...

    def value_remove(self, table: str, scope: tuple[str, ...], key: str) -> ValueEntry:
        """``kv rm``/``session unset``: the entry removed; NotFound when unset."""
        ...

    def session_set(self, key: SessionKey, name: str, value: Any, now: datetime) -> ValueEntry:
        """``session set``: a session variable (the session must exist)."""
        ...

    # -- context -----------------------------------------------------------------------

    def token_cache(self) -> TokenCache | None:
        """The token counts cache ``context build`` reads and fills (None: no store
        yet, nothing cached)."""
        ...

    def compress(
        self, key: SessionKey, keep: int, now: datetime, words: Vocabulary | None
    ) -> Compressed:
        """``context compress``: the session's older turns summarised, ``keep`` newest
        kept whole."""
        ...
