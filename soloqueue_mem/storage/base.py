"""The storage interface, and which back end a data directory uses."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from soloqueue_mem.errors import Unsupported

# in a module of their own (log reads them without this one); callers import them here too
from soloqueue_mem.storage.url import check_url, database_url, shown_url  # noqa: F401

if TYPE_CHECKING:
    import sqlite3

    from soloqueue_mem.config import Config
    from soloqueue_mem.context.cache import TokenCache
    from soloqueue_mem.context.compress import Compressed
    from soloqueue_mem.graph.db import GraphDb
    from soloqueue_mem.home import Home
    from soloqueue_mem.lifecycle.consolidate import Options, Progress
    from soloqueue_mem.lifecycle.gc import GcOptions
    from soloqueue_mem.lifecycle.model_extract import ModelExtraction
    from soloqueue_mem.lifecycle.session_end import Ended
    from soloqueue_mem.lifecycle.vocabulary import Vocabulary
    from soloqueue_mem.memory.attachments import Attachment
    from soloqueue_mem.memory.attachments import Filters as AttachmentFilters
    from soloqueue_mem.memory.episodes import Episode, EpisodeFilters
    from soloqueue_mem.memory.hotcold import Answer
    from soloqueue_mem.memory.model import Memory
    from soloqueue_mem.memory.promote import Promoted
    from soloqueue_mem.memory.recall import Request
    from soloqueue_mem.memory.recall import Result as RecallResult
    from soloqueue_mem.memory.scratchpad import Scratchpad
    from soloqueue_mem.memory.store import Changes, Draft, Filters, Remembered
    from soloqueue_mem.memory.working import Added, Entry
    from soloqueue_mem.ops.verify import VerifyOptions
    from soloqueue_mem.semantic.model import Embedder
    from soloqueue_mem.sessions.events import SessionKey
    from soloqueue_mem.sessions.reader import SessionLogContent
    from soloqueue_mem.sessions.trace import Scope, TraceHit
    from soloqueue_mem.sessions.turns import SessionRow, Turn
    from soloqueue_mem.sessions.writer import Item, LoggedTurn, Offload, Rejected
    from soloqueue_mem.state.values import Entry as ValueEntry
    from soloqueue_mem.storage.postgres.attachments import PostgresRows
    from soloqueue_mem.text.lexicon import Lexicon

# The commands that run on PostgreSQL in this phase (issue 14); any other one exits
# with Unsupported (69) there rather than use the local SQLite files.
POSTGRES_COMMANDS = frozenset(
    {
        "log",
        "trace",
        "remember",
        "recall",
        "memory list",
        "memory show",
        "memory forget",
        "memory history",
        "memory edit",
        "memory restore",
        "init",
        "demo",
        "identity show",
        "identity compile",
        "identity edit",
        "session list",
        "session show",
        "session export",
        "session end",
        "episode list",
        "episode show",
        "episode search",
        "consolidate",
        "working add",
        "working list",
        "working clear",
        "scratchpad show",
        "scratchpad set",
        "scratchpad edit",
        "kv set",
        "kv get",
        "kv list",
        "kv rm",
        "session set",
        "session get",
        "session unset",
        "artifact save",
        "artifact read",
        "artifact show",
        "artifact list",
        "artifact tag",
        "artifact rm",
        "context build",
        "context compress",
        "hook claude",
        "promote",
        "query",
        "migrate",
        "export",
        "import",
        "index",
        "path",
        "completion",
        "serve",
        "mcp",
        "stats",
        "verify",
        "gc",
        "graph remember",
        "graph work",
        "graph recall",
        "graph focus",
        "graph show",
        "graph stats",
        "graph compress",
        "graph export",
        "attach",
        "attachment list",
        "attachment show",
        "attachment rm",
    }
)


class Backend(Protocol):
    """Turns and their search, sessions, memories and their history, episodes and
    consolidation, the working memory."""

    name: str

    def init(self) -> None: ...

    def log(
        self,
        items: Iterable[Item],
        default: tuple[str, str, str | None],
        now: datetime,
        offload: Offload | None,
    ) -> Iterator[LoggedTurn | Rejected]: ...

    def trace(
        self, query: str, scope: Scope, limit: int, lexicon: Callable[[], Lexicon]
    ) -> list[TraceHit]: ...

    def newest_turns(self, scope: Scope, limit: int) -> list[Turn]: ...

    def turns_before(self, scope: Scope, until: datetime, limit: int) -> list[Turn]: ...

    def sessions(self, group: str | None, agent: str | None, limit: int) -> list[SessionRow]: ...

    def session(self, key: SessionKey) -> SessionLogContent: ...

    def session_turns(self, key: SessionKey) -> list[Turn]: ...

    def session_end(self, key: SessionKey, now: datetime) -> Ended: ...

    def episodes(self, filters: EpisodeFilters, limit: int) -> list[Episode]: ...

    def episode(self, ref: str) -> Episode: ...

    def search_episodes(
        self, terms: list[str], filters: EpisodeFilters, limit: int
    ) -> list[tuple[Episode, float]]: ...

    def consolidate(
        self,
        now: datetime,
        options: Options,
        progress: Progress | None = None,
        model: ModelExtraction | None = None,
    ) -> dict[str, Any]: ...

    def extract_on_log(
        self, targets: list[tuple[SessionKey, int]], now: datetime, words: Vocabulary
    ) -> list[Remembered]: ...

    def open_extraction_sessions(self, chosen: list[list]) -> list[list]: ...

    def embed_estimate(self, model: str, now: datetime, with_turns: bool) -> dict[str, Any]: ...

    def embed(
        self,
        embedder: Embedder,
        now: datetime,
        with_turns: bool,
        time_budget: float | None,
        progress: Callable[[int, int], None] | None,
    ) -> dict[str, Any]: ...

    def recall(
        self, request: Request, now: datetime, lexicon: Callable[[], Lexicon]
    ) -> RecallResult: ...

    def remember(
        self, draft: Draft, group: str, agent: str, now: datetime, event_id: str | None = None
    ) -> Remembered: ...

    def memory(self, ref: str) -> Memory: ...

    def memories(self, filters: Filters, now: datetime, limit: int) -> list[Memory]: ...

    def history(self, ref: str) -> list[Memory]: ...

    def forget(self, refs: Iterable[str]) -> list[str]: ...

    def import_v1(self, converted: list[Memory]) -> dict[str, Any]: ...

    def edit(self, ref: str, changes: Changes, now: datetime) -> Memory: ...

    def restore(self, ref: str, now: datetime) -> Memory: ...

    def working_add(self, group: str, content: str, source: str, now: datetime) -> Added: ...

    def working(self, group: str, now: datetime, limit: int) -> list[Entry]: ...

    def working_clear(self, group: str) -> int: ...

    def promote(self, group: str, agent: str, text: str, now: datetime) -> Promoted: ...

    def query(
        self, query: str, group: str, now: datetime, lexicon: Callable[[], Lexicon]
    ) -> Answer: ...

    def warm(self) -> None: ...

    def lost(self, exc: BaseException) -> bool: ...

    # -- upkeep: the shared database's part beside this host's files
    # (storage/postgres/stats.py, verify.py, gc.py) ----------------------------------------

    def stats(self, artifacts: sqlite3.Connection | None) -> dict[str, Any]: ...

    def verify(self, options: VerifyOptions, now: float) -> dict[str, Any]: ...

    def gc(
        self,
        open_catalog: Callable[[], sqlite3.Connection | None],
        now: datetime,
        options: GcOptions,
        progress: Callable[[int], None] | None,
    ) -> dict[str, Any]: ...

    def graph_db(self) -> GraphDb: ...

    def attachments(self) -> PostgresRows: ...

    def search_attachments(
        self, terms: list[str], filters: AttachmentFilters, now: str, limit: int
    ) -> list[tuple[Attachment, float]]: ...

    def scratchpad(self, group: str, agent: str, template: str) -> Scratchpad: ...

    def scratchpad_put(self, group: str, agent: str, content: str, now: datetime) -> Scratchpad: ...

    def value_put(
        self, table: str, scope: tuple[str, ...], key: str, value: Any, now: datetime
    ) -> ValueEntry: ...

    def value(self, table: str, scope: tuple[str, ...], key: str) -> ValueEntry: ...

    def values(self, table: str, scope: tuple[str, ...]) -> list[ValueEntry]: ...

    def value_remove(self, table: str, scope: tuple[str, ...], key: str) -> ValueEntry: ...

    def session_set(self, key: SessionKey, name: str, value: Any, now: datetime) -> ValueEntry: ...

    def token_cache(self) -> TokenCache: ...

    def compress(
        self, key: SessionKey, keep: int, now: datetime, words: Vocabulary | None
    ) -> Compressed: ...

    def close(self) -> None: ...


def open_backend(home: Home, config: Config) -> Backend | None:
    """The PostgreSQL back end when one is configured, else None (use SQLite)."""
    url = database_url(config)
    if url is None:
        return None
    from soloqueue_mem.storage.postgres.backend import PostgresBackend

    return PostgresBackend(home, config, url)


def check_command(config: Config, command: str) -> None:
    """Unsupported when ``command`` ("memory list") cannot run on the configured back end."""
    if database_url(config) is not None and command not in POSTGRES_COMMANDS:
        raise Unsupported(
            f"{command} is not available on the PostgreSQL back end yet "
            f"(database_url is set; available: {', '.join(sorted(POSTGRES_COMMANDS))})"
        )
