"""Recall's value types and its ``Source`` port: what the recall engine
(:mod:`soloqueue_mem.memory.recall`) and its channels (the graph and dense ones live in
their own subsystems) exchange, and what a back end serves them.

Every back end is a :class:`Source`: the SQLite one (``storage/sqlite/backend.py``)
over memory.db and the JSONL logs, the PostgreSQL one over its tables. The channels
read through it and never open a database.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from soloqueue_mem.tuples import NamedTuple, Protocol

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from soloqueue_mem.config import Config
    from soloqueue_mem.graph.db import GraphDb
    from soloqueue_mem.graph.store import Node
    from soloqueue_mem.memory import attachments
    from soloqueue_mem.memory.attachments import Attachment
    from soloqueue_mem.memory.episodes import Episode, EpisodeFilters
    from soloqueue_mem.memory.model import Memory
    from soloqueue_mem.memory.store import Filters
    from soloqueue_mem.memory.working import Entry
    from soloqueue_mem.semantic.dense import DenseHit
    from soloqueue_mem.semantic.dense import Scope as DenseScope
    from soloqueue_mem.sessions.trace import TraceHit
    from soloqueue_mem.sessions.turns import Scope, Turn
    from soloqueue_mem.text.lexicon import Lexicon
    from soloqueue_mem.text.when import TimeWindow


class Request(NamedTuple):
    query: str
    group: str | None = None
    agent: str | None = None
    type: str | None = None
    since: datetime | None = None
    channels: tuple[str, ...] | None = None  # None: the default channels
    limit: int = 10
    max_tokens: int = 700
    recent: int = 0  # fold this many of the conversation's last turns into the query
    session: str | None = None  # whose last turns (None: the group's and agent's newest)
    favoured: frozenset[str] = frozenset()  # memory types a persona puts first (persona.py)


class Candidate(NamedTuple):
    key: str  # "memory:<id>", "episode:<id>" or "turn:<group>/<agent>/<session>#<index>"
    channel: str
    content: str
    relevance: float  # the channel's own score over its best (shown by --explain)
    timestamp: str
    importance: float
    access_count: int
    memory: Memory | None = None
    turn: Turn | None = None
    episode: Episode | None = None
    working: Entry | None = None
    attachment: Attachment | None = None
    graph_node: Node | None = None
    superseded_by: str | None = None  # a turn or episode stating what this memory replaced
    # A memory at the current end of a correction the query found: the memory it replaced
    corrects: str | None = None


class Signals(NamedTuple):
    relevance: float
    recency: float
    importance: float
    access: float
    age_days: float
    coverage: float = 1.0  # share of the query the item holds (idf-weighted)
    ranks: dict[str, int] = {}  # its rank in each channel that found it (never mutated)
    channel_scores: dict[str, float] = {}  # each channel's own score (BM25 share, cosine …)
    twins: list[str] = []  # the query's words in the other language that the item holds
    corrects: str | None = None  # the memory this one replaced (a current value: recall step 4)


class Hit(NamedTuple):
    candidate: Candidate
    channels: list[str]
    score: float
    signals: Signals
    text: str  # what the LLM sees, perhaps shortened to fit the budget
    tokens: int


class Result(NamedTuple):
    hits: list[Hit]
    tokens: int
    backend: str
    notes: list[str]
    left_out: int = 0  # hits ranked within --limit that the budget had no room for
    shortened: int = 0  # hits shortened to fit the budget


class Source(Protocol):
    """Where recall finds its candidates, on any back end: the ``channels`` it serves,
    its memory search (and the name recall reports for it), turn search, the newest
    turns of a scope, the nearest items by embedding (none when the dense search is
    off), the working-memory list, episode and attachment search, its graph (None when
    the store has none: recall never creates one), and the retrieval counts.

    Every read returns nothing on a store that does not exist yet."""

    name: str  # the back end's

    @property
    def channels(self) -> frozenset[str]: ...

    def memory_search(self) -> tuple[str, str | None]:
        """The name of the search :meth:`search` runs and, when it is not the
        configured one, why (a note for the answer)."""
        ...

    def search(
        self, terms: list[str], filters: Filters, now: datetime, limit: int
    ) -> list[tuple[Memory, float]]: ...

    def search_each(
        self, terms: list[str], filters: list[Filters], now: datetime, limit: int
    ) -> list[list[tuple[Memory, float]]]:
        """:meth:`search` for each of ``filters``."""
        ...

    def held_words(self, words: list[str]) -> set[str]:
        """The ``words`` (query terms) that some memory, turn, episode or attachment
        of the store holds, as recall's searches match them: one indexed lookup per
        word and index."""
        ...

    def trace(
        self, query: str, scope: Scope, limit: int, lexicon: Callable[[], Lexicon]
    ) -> list[TraceHit]: ...

    def newest_turns(self, scope: Scope, limit: int) -> list[Turn]: ...

    def nearest(
        self, query: str, scope: DenseScope, now: datetime, limit: int, model: str = "e5"
    ) -> list[DenseHit]: ...

    def touch(self, memory_ids: list[str], now: datetime) -> str | None:
        """Count a retrieval of each memory; a note when the store cannot (read-only)."""
        ...

    def working(self, group: str, now: datetime, limit: int) -> list[Entry]: ...

    def search_episodes(
        self, terms: list[str], filters: EpisodeFilters, limit: int
    ) -> list[tuple[Episode, float]]: ...

    def search_attachments(
        self, terms: list[str], filters: attachments.Filters, now: str, limit: int
    ) -> list[tuple[Attachment, float]]: ...

    def existing_graph(self) -> GraphDb | None: ...

    def touch_episodes(self, ids: list[str]) -> None: ...

    def episodes(
        self, filters: EpisodeFilters, limit: int, oldest: bool = False
    ) -> list[Episode]: ...

    def memories(self, filters: Filters, now: datetime, limit: int) -> list[Memory]: ...

    def memories_starting(
        self,
        filters: Filters,
        bounds: list[tuple[str, str]],
        expiring_by: datetime,
        now: datetime,
        limit: int,
    ) -> list[Memory]:
        """The memories that expire by ``expiring_by`` and whose content starts with a
        text between one of ``bounds``' two (a plan's prefix and its day: the plans
        dated in a window)."""
        ...

    def memory(self, ref: str) -> Memory: ...


class Context(NamedTuple):
    """One recall as its channels see it."""

    source: Source
    request: Request
    query: str  # what the channels search (see recall._question)
    terms: list[str]
    memory_terms: list[str]  # the terms and the canonical attributes the query asks about
    attributes: frozenset[str]  # those attributes' canonical predicates
    now: datetime
    config: Config
    lexicon: Callable[[], Lexicon]
    pool: int
    window: TimeWindow | None  # "last week", "昨天": the time the query asks about
    # memory searches run before the channels, by their filters (recall._memory_searches)
    searched: dict[Filters, list[tuple[Memory, float]]] = {}  # never mutated
    twins: list[str] = []  # the query's words in the other language (text.bilingual)


class Channel(NamedTuple):
    """A source of candidates; ``weight`` is its default vote in the fusion.

    When the channel ``weighs_coverage``, its hits must hold some of the query, and
    their order and vote are their score and vote times their coverage. Turns do not:
    the turn ranking weighs coverage itself and lends a matching turn's score to its
    neighbours (the answer next to the question).
    """

    search: Callable[[Context], list[Candidate]]
    weight: float
    weighs_coverage: bool = True
    default: bool = True  # searched when a request names no channels
