"""The SQLite implementation of :class:`soloqueue_mem.storage.base.Backend`: the data
directory's database files, reached through the domain functions that take their
connections (``soloqueue_mem.sessions``, ``.memory``, ``.state``, ``.lifecycle``).

It owns the connections to memory.db, state.db and graph.db, each opened on first use
and kept until :meth:`SqliteBackend.close`. A read never creates a file: on a store
without the database it reads, a list is empty and a lookup raises NotFound.

Imported on ``log``'s path: every domain module is imported inside the method using it.
What is the same on PostgreSQL but for the connection is written once, in
:class:`~soloqueue_mem.storage.base.Backend`.
"""

from __future__ import annotations

from soloqueue_mem.errors import NotFound
from soloqueue_mem.storage.base import NO_MEMORY, NO_STORE, Backend

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterable, Iterator
    from contextlib import AbstractContextManager
    from datetime import datetime
    from typing import Any

    from soloqueue_mem.config import Config
    from soloqueue_mem.graph.db import GraphDb
    from soloqueue_mem.home import Home
    from soloqueue_mem.lifecycle.consolidate import Options
    from soloqueue_mem.lifecycle.model_extract import ModelExtraction
    from soloqueue_mem.memory.backend import Chosen
    from soloqueue_mem.memory.fulltexts import FullTexts
    from soloqueue_mem.memory.hotcold import Answer
    from soloqueue_mem.memory.model import Memory
    from soloqueue_mem.memory.store import Filters, Forgotten
    from soloqueue_mem.ops.verify import VerifyOptions
    from soloqueue_mem.semantic.dense import DenseHit
    from soloqueue_mem.semantic.dense import Scope as DenseScope
    from soloqueue_mem.sessions.events import SessionKey
    from soloqueue_mem.sessions.reader import SessionLogContent
    from soloqueue_mem.sessions.trace import TraceHit
    from soloqueue_mem.sessions.turns import Scope, SessionRow
    from soloqueue_mem.storage.base import DenseIndex
    from soloqueue_mem.text.lexicon import Lexicon

WAL_KEPT = (
    "warning: another process is reading the store; the erased bytes leave the "
    "write-ahead log at its next checkpoint"
)


class SqliteBackend(Backend):
    name = "sqlite"

    def __init__(self, home: Home, config: Config) -> None:
        self.home = home
        self.config = config
        self._conns: dict[str, sqlite3.Connection] = {}
        self._chosen: Chosen | None = None

    @property
    def channels(self) -> frozenset[str]:
        """Every recall channel."""
        from soloqueue_mem.memory.recall import CHANNELS

        return frozenset(CHANNELS)

    # -- the connections ---------------------------------------------------------------

    def connection(self, name: str, create: bool) -> sqlite3.Connection | None:
        """The open connection to ``name`` (memory, state, graph, artifacts); None when
        the file does not exist and ``create`` is False."""
        conn = self._conns.get(name)
        if conn is None:
            from soloqueue_mem.storage.sqlite import stores

            opener = {
                "memory": stores.open_memory,
                "artifacts": stores.open_artifacts,
                "state": stores.open_state,
                "graph": stores.open_graph,
            }[name]
            conn = opener(self.home, self.config, create=create)
            if conn is not None:
                self._conns[name] = conn
        return conn

    def full_texts(self) -> FullTexts:
        """memory.db's FTS5 tables."""
        from soloqueue_mem.memory.fulltexts import FTS5

        return FTS5

    def init(self) -> None:
        """Create or migrate memory.db (the other files are created on first write)."""
        self._created("memory")

    def warm(self) -> None:
        """Nothing: opening a file costs little, and a server must not create the store."""

    def lost(self, exc: BaseException) -> bool:
        """Never: a file has no connection to lose."""
        return False

    def close(self) -> None:
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()

    # -- turns and sessions ------------------------------------------------------------

    def trace(
        self, query: str, scope: Scope, limit: int, lexicon: Callable[[], Lexicon]
    ) -> list[TraceHit]:
        from soloqueue_mem.sessions.trace import trace

        conn = self.connection("memory", create=False)
        return trace(self.home, conn, query, scope, limit, lexicon)

    def sessions(self, group: str | None, agent: str | None, limit: int) -> list[SessionRow]:
        from soloqueue_mem.sessions import turns

        conn = self.connection("memory", create=False)
        return turns.list_sessions(conn, group, agent, limit) if conn else []

    def session(self, key: SessionKey) -> SessionLogContent:
        from soloqueue_mem.sessions.reader import read_session

        if not self.home.exists():
            raise NotFound(f"session {'/'.join(key)} not found (no data directory)")
        return read_session(self.home, key)

    def _queue_failures(self, model: ModelExtraction) -> None:
        """In state.db."""
        from soloqueue_mem.storage.sqlite.stores import state_opener

        model.use_state_db(state_opener(self.home, self.config))

    # -- consolidation -----------------------------------------------------------------

    def consolidate(self, now: datetime, options: Options) -> dict[str, Any]:
        """``consolidate`` on a connection of its own (held as long as it runs; a dry
        run's: a private copy of memory.db, removed when it ends)."""
        from contextlib import closing, contextmanager
        from functools import partial

        from soloqueue_mem.lifecycle.consolidate import run
        from soloqueue_mem.lifecycle.digest import DbTarget
        from soloqueue_mem.lifecycle.on_log import extracted_turns
        from soloqueue_mem.semantic.embed import embed_every_model
        from soloqueue_mem.storage.catalog import open_catalog
        from soloqueue_mem.storage.sqlite.scratch import scratch_copy
        from soloqueue_mem.storage.sqlite.stores import open_memory

        @contextmanager
        def held() -> Iterator[DbTarget]:
            conn = open_memory(self.home, self.config)
            assert conn is not None  # opened with create=True
            with scratch_copy(conn) if options.dry_run else closing(conn) as memory:
                yield DbTarget(self.home, memory, options.language)

        state = self.connection("state", create=False)
        options = options._replace(extracted_on_log=lambda key: extracted_turns(state, key))
        if options.model is not None:
            self._queue_failures(options.model)
        catalog = partial(open_catalog, self.home, self.config, create=False)
        return run(self.home, held, now, options, embed_every_model, catalog)

    # -- the dense index ---------------------------------------------------------------

    def dense_index(self) -> DenseIndex:
        """memory.db, embedded by every installed model."""
        from soloqueue_mem.semantic.embed import embed_every_model

        return self.existing("memory", NO_STORE), embed_every_model

    # -- recall ------------------------------------------------------------------------

    def _search_backend(self) -> Chosen:
        """The configured ``search_backend``, else FTS5 and why (chosen once)."""
        if self._chosen is None:
            from soloqueue_mem.memory.backend import choose_backend

            self._chosen = choose_backend(self.config.search_backend)
        return self._chosen

    def memory_search(self) -> tuple[str, str | None]:
        chosen = self._search_backend()
        return chosen.backend.name, chosen.fallback_reason

    def search(
        self, terms: list[str], filters: Filters, now: datetime, limit: int
    ) -> list[tuple[Memory, float]]:
        """Recall's memory search: the chosen search back end over memory.db."""
        return self.search_each(terms, [filters], now, limit)[0]

    def search_each(
        self, terms: list[str], filters: list[Filters], now: datetime, limit: int
    ) -> list[list[tuple[Memory, float]]]:
        """:meth:`search` for each of ``filters``, the index ranking once for all."""
        conn = self.connection("memory", create=False)
        if conn is None:
            return [[] for _ in filters]
        return self._search_backend().backend.search_each(conn, terms, filters, now, limit)

    def held_words(self, words: list[str]) -> set[str]:
        from soloqueue_mem.text.fts import phrase

        conn = self.connection("memory", create=False)
        if conn is None:
            return set()
        return {
            word
            for word in words
            if any(_index_holds(conn, index, phrase(word)) for index in _WORD_INDEXES)
        }

    def nearest(
        self, query: str, scope: DenseScope, now: datetime, limit: int, model: str = "e5"
    ) -> list[DenseHit]:
        """Recall's dense channels: none unless ``search_backend`` is hybrid or dense
        and e5 is installed (then ``model``'s vectors, none when it does not load)."""
        from soloqueue_mem.memory.backend import DENSE_BACKENDS

        conn = self.connection("memory", create=False)
        if conn is None or self.config.search_backend not in DENSE_BACKENDS:
            return []
        from soloqueue_mem.semantic.dense import DenseQuery, search
        from soloqueue_mem.semantic.model import Unavailable, installed, load

        if not installed():  # the dense search runs with e5 installed (see choose_backend)
            return []
        try:
            embedder = load(model, self.home.cache_dir)
        except Unavailable:
            return []
        return search(conn, embedder, DenseQuery(query, scope, now, limit))

    # -- memories ----------------------------------------------------------------------

    def erase(self, refs: Iterable[str]) -> Forgotten:
        """Erased for good, the freed bytes zeroed and the WAL checkpointed."""
        from soloqueue_mem.memory.store import forget

        result = forget(self.existing("memory", NO_MEMORY), refs)
        return result._replace(note=None if result.wal_cleared else WAL_KEPT)

    # -- upkeep ------------------------------------------------------------------------

    def stats(self, artifacts: sqlite3.Connection | None) -> dict[str, Any]:
        from soloqueue_mem.ops.stats import store_stats
        from soloqueue_mem.storage.sqlite.stores import open_read_only

        memory = self.connection("memory", create=False)
        return store_stats(self.home, memory, artifacts, lambda: open_read_only(self.home.state_db))

    def verify(self, options: VerifyOptions, now: float) -> dict[str, Any]:
        from soloqueue_mem.ops.verify import verify_store
        from soloqueue_mem.storage.sqlite.stores import open_memory, open_query_only

        if not self.home.exists():
            return {
                "findings": [],
                "counts": {},
                "summary": {"error": 0, "warning": 0, "info": 0},
                "exit_code": 0,
            }
        self.home.check_safe()

        def for_repair() -> sqlite3.Connection | None:
            return open_memory(self.home, self.config, create=False)

        return verify_store(self.home, options, now, open_query_only, for_repair)

    def alone(self, key: int, wait: bool, busy: str) -> AbstractContextManager[None]:
        """Nothing more: one data directory is one host, and each run already holds its
        lock file there."""
        from contextlib import nullcontext

        return nullcontext()

    def graph_db(self) -> GraphDb:
        """graph.db, created on first use (kept open with the back end)."""
        from soloqueue_mem.graph.db import SqlGraph

        conn = self.connection("graph", create=True)
        assert conn is not None
        return SqlGraph(conn)

    def existing_graph(self) -> GraphDb | None:
        """graph.db when it exists (kept open with the back end); its module is imported
        only then (recall asks on every call, most stores have no graph)."""
        conn = self.connection("graph", create=False)
        if conn is None:
            return None
        from soloqueue_mem.graph.db import SqlGraph

        return SqlGraph(conn)

    # -- working memory, promote, hot + cold query -------------------------------------

    def embed_held(self, memory_ids: list[str], now: datetime, load: bool = False) -> list[str]:
        from soloqueue_mem.semantic.fresh import embed_new

        conn = self._created("memory")
        return embed_new(conn, memory_ids, now, self.config.search_backend, load_e5=load)

    def query(
        self, query: str, group: str, now: datetime, lexicon: Callable[[], Lexicon]
    ) -> Answer:
        """Seed 004's answer, the cold search by cosine when ``search_backend`` is hybrid
        or dense and the model loads, else by full-text search."""
        from functools import partial

        from soloqueue_mem.memory.backend import FTS5Backend, choose_backend
        from soloqueue_mem.memory.hotcold import Answer, answer

        dense = choose_backend(self.config.search_backend).backend.name in ("hybrid", "dense")
        conn = self.connection("memory", create=False)
        if conn is None:
            return Answer([], "dense" if dense else "lexical")
        nearest = None
        if dense:  # the model loads: choose_backend checked it is installed
            from soloqueue_mem.semantic.dense import search
            from soloqueue_mem.semantic.model import load

            nearest = partial(search, conn, load())
        lexical = partial(FTS5Backend().search, conn)
        return answer(conn, query, group, now, lexicon, nearest, lexical)


# the indexes recall's word searches read: memories, turns, episodes, attachments
_WORD_INDEXES = ("memories_fts", "conversation_turns_fts", "episodes_fts", "attachments_fts")


def _index_holds(conn: sqlite3.Connection, index: str, match: str) -> bool:
    """Some row of the FTS5 table ``index`` matches ``match``: the index's first
    match, read without a row of the table."""
    found = conn.execute(
        f"SELECT 1 FROM {index} WHERE {index} MATCH ? LIMIT 1",  # noqa: S608 - constants
        (match,),
    )
    return found.fetchone() is not None
