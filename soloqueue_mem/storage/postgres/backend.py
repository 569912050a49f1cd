"""The PostgreSQL implementation of :class:`soloqueue_mem.storage.base.Backend`.

One connection per process, opened (and the schema migrated) on first use. The JSONL
session logs stay on this host's disk (``sessions/`` of the data directory), written
as the SQLite back end writes them; offloaded tool output goes to the local CAS.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from soloqueue_mem.errors import Unsupported
from soloqueue_mem.home import Home
from soloqueue_mem.memory.backend import DENSE_BACKENDS
from soloqueue_mem.storage.base import Backend
from soloqueue_mem.storage.postgres import memories, sessions, turns
from soloqueue_mem.storage.postgres.episodes import INDEXES

if TYPE_CHECKING:
    import sqlite3

    import psycopg

    from soloqueue_mem.config import Config
    from soloqueue_mem.graph.db import GraphDb
    from soloqueue_mem.lifecycle.consolidate import Options
    from soloqueue_mem.lifecycle.model_extract import ModelExtraction
    from soloqueue_mem.memory.fulltexts import FullTexts
    from soloqueue_mem.memory.hotcold import Answer
    from soloqueue_mem.memory.model import Memory
    from soloqueue_mem.memory.store import Changes, Filters, Forgotten
    from soloqueue_mem.ops.verify import VerifyOptions
    from soloqueue_mem.semantic.dense import DenseHit
    from soloqueue_mem.semantic.dense import Scope as DenseScope
    from soloqueue_mem.semantic.model import Embedder
    from soloqueue_mem.sessions.events import SessionKey
    from soloqueue_mem.sessions.reader import SessionLogContent
    from soloqueue_mem.sessions.trace import TraceHit
    from soloqueue_mem.sessions.turns import Scope, SessionRow
    from soloqueue_mem.sessions.writer import Item, LoggedTurn, Queued, WriteChunk
    from soloqueue_mem.storage.base import DenseIndex
    from soloqueue_mem.text.lexicon import Lexicon

FORGET_NOTE = (
    "warning: PostgreSQL keeps the erased rows' bytes until VACUUM reclaims them and in "
    "its write-ahead log until the server recycles it"
)


class PostgresBackend(Backend):
    name = "postgres"

    def __init__(self, home: Home, config: Config, url: str) -> None:
        self.home = home
        self.config = config
        self.url = url
        self._conn: psycopg.Connection | None = None
        self._dense: tuple[Embedder | None, str | None] | None = None

    @property
    def channels(self) -> frozenset[str]:
        """Every recall channel but ``usem3``: the database holds e5's vectors only
        (``dense``: dense.py here)."""
        from soloqueue_mem.memory.recall import CHANNELS

        return frozenset(CHANNELS) - {"usem3"}

    @property
    def conn(self) -> psycopg.Connection:
        if self._conn is not None and self._conn.closed:  # lost: a long-lived process
            self._conn = None  # reconnects on its next call
        if self._conn is None:
            from soloqueue_mem.storage.postgres.connect import connect

            # config.toml and identity/ are read from it, as on SQLite
            self.home.check_safe()
            self._conn = connect(self.url)
        return self._conn

    def connection(self, name: str, create: bool) -> psycopg.Connection:
        """The one connection: every store's tables are in the database."""
        return self.conn

    def full_texts(self) -> FullTexts:
        """The ``search`` tsvector columns."""
        return INDEXES

    def init(self) -> None:
        """Connect, which creates or migrates the schema (``init``)."""
        self.conn.execute("SELECT 1")

    def warm(self) -> None:
        """Connect (and migrate) now, and load the embedding model when the dense channel
        runs: a server pays this at start, and an unreachable database fails it there."""
        self.dense()

    def lost(self, exc: BaseException) -> bool:
        """Whether ``exc`` is the connection to the server being lost (the server
        restarted, the network dropped): the call failed, the next one reconnects."""
        import psycopg

        return isinstance(exc, psycopg.OperationalError) and (
            self._conn is None or self._conn.closed
        )

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # -- turns ---------------------------------------------------------------------

    def _loggable(self, items: Iterable[Item]) -> Iterator[Item]:
        """``items`` with each event holding a NUL character replaced by its refusal:
        the database would refuse the whole chunk it is written in."""
        from soloqueue_mem.sessions.events import Event
        from soloqueue_mem.sessions.writer import Flush, Rejected

        for item in items:
            if isinstance(item, (Rejected, Flush)):
                yield item
            elif isinstance(item[1], Event) and _holds_nul(item[1]):
                yield Rejected(item[0], NUL_REFUSED)
            else:
                yield item

    def _turn_writer(self, now: datetime) -> WriteChunk:
        """The turns into the database, and the session logs on this host's disk
        (``queue_when_busy`` has no use here: the server queues a busy write itself)."""
        fsync = self.config.durability == "full"

        def write(chunk: list[Queued]) -> list[LoggedTurn]:
            return turns.write_chunk(self.home, self.conn, chunk, fsync, now)

        return write

    def trace(
        self, query: str, scope: Scope, limit: int, lexicon: Callable[[], Lexicon]
    ) -> list[TraceHit]:
        return turns.trace(self.conn, query, scope, limit, lexicon)

    def sessions(self, group: str | None, agent: str | None, limit: int) -> list[SessionRow]:
        return sessions.list_sessions(self.conn, self.home, group, agent, limit)

    def session(self, key: SessionKey) -> SessionLogContent:
        return sessions.read(self.conn, self.home, key)

    def _queue_failures(self, model: ModelExtraction) -> None:
        """In the database."""
        model.use_database(self.conn)

    # -- consolidation -------------------------------------------------------------

    def consolidate(self, now: datetime, options: Options) -> dict[str, Any]:
        """One run on the database at a time, on every host (see lifecycle.py here)."""
        from soloqueue_mem.lifecycle.consolidate import run
        from soloqueue_mem.lifecycle.on_log import extracted_turns
        from soloqueue_mem.storage.catalog import open_catalog
        from soloqueue_mem.storage.postgres.dense import NO_PGVECTOR, has_embedding_column
        from soloqueue_mem.storage.postgres.embed import embed_all
        from soloqueue_mem.storage.postgres.lifecycle import held

        conn, target = self.conn, self.digest_target(self.conn)
        options = options._replace(extracted_on_log=lambda key: extracted_turns(conn, key))
        if options.model is not None and not options.dry_run:
            self._queue_failures(options.model)

        def lacking() -> str | None:
            return None if has_embedding_column(conn) else NO_PGVECTOR

        frame = held(target, options.dry_run, options.wait)
        catalog = partial(open_catalog, self.home, self.config, create=False)
        return run(self.home, lambda: frame, now, options, embed_all, catalog, lacking)

    def dense_index(self) -> DenseIndex:
        """The database's ``embedding`` columns (pgvector's), embedded by e5
        (storage/postgres/embed.py)."""
        from soloqueue_mem.storage.postgres.dense import has_embedding_column
        from soloqueue_mem.storage.postgres.embed import embed_all

        if not has_embedding_column(self.conn):
            raise Unsupported("the dense index needs pgvector on the PostgreSQL server")
        return self.conn, embed_all

    # -- memories ------------------------------------------------------------------

    def dense(self) -> tuple[Embedder | None, str | None]:
        """The embedding model when the dense channel runs here, else why not (None
        and None: not asked for). Checked once per process."""
        if self._dense is None:
            from soloqueue_mem.storage.postgres.dense import off_reason

            off = off_reason(self.conn, self.config.search_backend)
            model = None
            if off is None and self.config.search_backend in DENSE_BACKENDS:
                from soloqueue_mem.semantic.model import Unavailable, load

                try:
                    model = load()
                except Unavailable as exc:
                    off = f"search backend {self.config.search_backend!r}: {exc}; lexical only"
            self._dense = (model, off)
        return self._dense

    def nearest(
        self, query: str, scope: DenseScope, now: datetime, limit: int, model: str = "e5"
    ) -> list[DenseHit]:
        """Recall's dense channel (none when it is off here; e5's vectors only)."""
        embedder, _ = self.dense()
        if embedder is None or model != "e5":
            return []
        from soloqueue_mem.semantic.dense import DenseQuery
        from soloqueue_mem.storage.postgres.dense import nearest

        return nearest(self.conn, embedder, DenseQuery(query, scope, now, limit))

    def memory_search(self) -> tuple[str, str | None]:
        """Recall's memory search is this back end's own full-text search, and recall
        says why the dense channel is off when it is."""
        return self.name, self.dense()[1]

    def search(
        self, terms: list[str], filters: Filters, now: datetime, limit: int
    ) -> list[tuple[Memory, float]]:
        """Recall's memory search."""
        return memories.search(self.conn, terms, filters, now, limit)

    def held_words(self, words: list[str]) -> set[str]:
        return memories.held_words(self.conn, words)

    def erase(self, refs: Iterable[str]) -> Forgotten:
        """Erased. PostgreSQL keeps deleted row versions until VACUUM reclaims them
        (autovacuum, or ``VACUUM memories``): unlike SQLite's ``secure_delete``, the
        bytes are not zeroed now (the note says so)."""
        from soloqueue_mem.memory.store import Forgotten, erase

        with self.conn.transaction():
            erased = erase(self.conn, refs, INDEXES.memories)
        return Forgotten(erased, False, False, FORGET_NOTE)

    def edit(self, ref: str, changes: Changes, now: datetime) -> Memory:
        """The memory edited; a process already holding a model embeds its new text."""
        memory = super().edit(ref, changes, now)
        if changes.content is not None:  # a warm process embeds the new text now
            self.embed_held([memory.id], now)
        return memory

    # -- upkeep: stats, verify, gc --------------------------------------------------

    def stats(self, artifacts: sqlite3.Connection | None) -> dict[str, Any]:
        from soloqueue_mem.storage.postgres.stats import store_stats

        return store_stats(self.home, self.conn, self.url, artifacts)

    def verify(self, options: VerifyOptions, now: float) -> dict[str, Any]:
        from soloqueue_mem.storage.postgres.verify import verify_store

        return verify_store(self.home, self.conn, options, now)

    def alone(self, key: int, wait: bool, busy: str) -> AbstractContextManager[None]:
        """A session advisory lock on ``key`` while the run lasts."""
        from soloqueue_mem.storage.postgres.connect import held_alone

        return held_alone(self.conn, key, wait, busy)

    # -- seed 002: the graph memory ----------------------------------------------------

    def graph_db(self) -> GraphDb:
        """The graph tables on this back end's connection (closed with the back end)."""
        from soloqueue_mem.graph.db import SqlGraph

        return SqlGraph(self.conn)

    # -- seed 004: working memory, promote, hot + cold query ------------------------

    def embed_held(self, memory_ids: list[str], now: datetime, load: bool = False) -> list[str]:
        from soloqueue_mem.semantic.model import held

        if not load and held() is None:  # dense() would load it
            return []
        model, _ = self.dense()
        if model is None:
            return []
        from soloqueue_mem.storage.postgres.dense import embed_memories

        embed_memories(self.conn, model, memory_ids, now)
        return [model.name]

    def query(
        self, query: str, group: str, now: datetime, lexicon: Callable[[], Lexicon]
    ) -> Answer:
        """Seed 004's answer, the cold search by cosine over the ``embedding`` column
        when the dense channel runs here (as on SQLite), else by full-text search."""
        from soloqueue_mem.memory.hotcold import answer
        from soloqueue_mem.storage.postgres.dense import nearest

        model, _ = self.dense()
        dense = None if model is None else partial(nearest, self.conn, model)
        lexical = partial(memories.search, self.conn)
        return answer(self.conn, query, group, now, lexicon, dense, lexical)


NUL_REFUSED = "PostgreSQL text cannot hold a NUL character (U+0000): remove it, or use SQLite"


def _holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_holds_nul(k) or _holds_nul(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_holds_nul(v) for v in value)
    return False
