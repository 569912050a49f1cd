"""``recall``: level-1 multi-path retrieval (seed 003 §5.5, seed 004's hot/cold merge).

Each channel is a function from the request to candidates with a relevance in
[0, 1] (its own scores divided by its best). Candidates are merged (one per item, and
one per normalized text), scored with
``w_rel·relevance + w_rec·recency + w_imp·importance + w_acc·access`` and packed into
the token budget in rank order. Only memories that are active (not expired, not
superseded) ever become candidates. New channels (episodes, attachments, graph)
register in ``CHANNELS`` without touching the engine.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import NamedTuple

from soloqueue_mem.clock import iso, parse_duration, parse_timestamp
from soloqueue_mem.config import Config
from soloqueue_mem.errors import BadInput
from soloqueue_mem.home import Home
from soloqueue_mem.memory import episodes, store
from soloqueue_mem.memory.backend import SearchBackend, choose_backend
from soloqueue_mem.memory.episodes import Episode, EpisodeFilters
from soloqueue_mem.memory.model import Memory, content_key
from soloqueue_mem.memory.store import Filters
from soloqueue_mem.semantic.channel import dense_channel
from soloqueue_mem.sessions import turns
from soloqueue_mem.sessions.events import Event, index_body
from soloqueue_mem.sessions.trace import Scope, trace
from soloqueue_mem.sessions.turns import SearchScope, Turn
from soloqueue_mem.text.budget import shorten
from soloqueue_mem.text.cjk import estimate_tokens, index_form
from soloqueue_mem.text.fts import match_expression, query_terms
from soloqueue_mem.text.lexicon import Lexicon

RECENT_DAYS = 3
HOT_HOURS = 24
HOT_CAP = 50  # seed 004: the working-memory list is trimmed to 50 entries
HOT_RETURNED = 10
TURN_IMPORTANCE = 0.5  # turns carry no importance of their own: the neutral default
ACCESS_SATURATION = 10  # this many retrievals give the full access signal
MIN_TRUNCATED_TOKENS = 32  # a hit is shortened to fit only if this much budget is left
SEPARATOR = "\n---\n"
PREFIX = "[记忆] "
DEFAULT_CHANNELS = ("memories", "episodes", "recent", "hot", "dense")
FROM_LOGS = frozenset({"recent", "traces"})  # they read the JSONL logs when there is no index


class Request(NamedTuple):
    query: str
    group: str | None = None
    agent: str | None = None
    type: str | None = None
    since: datetime | None = None
    channels: tuple[str, ...] = DEFAULT_CHANNELS
    limit: int = 10
    max_tokens: int = 700


class Candidate(NamedTuple):
    key: str  # "memory:<id>", "episode:<id>" or "turn:<group>/<agent>/<session>#<index>"
    channel: str
    content: str
    relevance: float
    timestamp: str
    importance: float
    access_count: int
    memory: Memory | None = None
    turn: Turn | None = None
    episode: Episode | None = None


class Signals(NamedTuple):
    relevance: float
    recency: float
    importance: float
    access: float
    age_days: float


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


class Context(NamedTuple):
    home: Home
    conn: sqlite3.Connection  # None only for the channels in FROM_LOGS
    request: Request
    terms: list[str]
    now: datetime
    config: Config
    lexicon: Callable[[], Lexicon]
    backend: SearchBackend
    pool: int


def recall(
    home: Home,
    conn: sqlite3.Connection | None,
    request: Request,
    config: Config,
    now: datetime,
    lexicon: Callable[[], Lexicon],
    count: Callable[[str], int] = estimate_tokens,
) -> Result:
    """The best items for ``request.query`` inside its token budget (as ``count``
    measures it), best first."""
    _check(request)
    chosen = choose_backend(config.search_backend)
    notes = [chosen.fallback_reason] if chosen.fallback_reason else []
    terms = query_terms(request.query, lexicon)
    if not terms:
        return Result([], 0, chosen.backend.name, notes)
    pool = max(3 * request.limit, 30)
    context = Context(home, conn, request, terms, now, config, lexicon, chosen.backend, pool)
    candidates = []
    for name in request.channels:
        if conn is None and name not in FROM_LOGS:
            continue
        if name == "memories" or request.type is None:  # a --type asks for memories only
            candidates += CHANNELS[name](context)
    hits = fit_budget(rank(candidates, config, now)[: request.limit], request.max_tokens, count)
    if conn is not None:
        store.touch(conn, [h.candidate.memory.id for h in hits if h.candidate.memory], now)
        episodes.touch(conn, [h.candidate.episode.id for h in hits if h.candidate.episode])
    return Result(hits, sum(h.tokens for h in hits), chosen.backend.name, notes)


def _check(request: Request) -> None:
    unknown = [name for name in request.channels if name not in CHANNELS]
    if unknown or not request.channels:
        raise BadInput(f"unknown channel {', '.join(unknown)!r} (use {', '.join(CHANNELS)})")
    if not 1 <= request.limit <= 100:
        raise BadInput("--limit must be between 1 and 100")
    if not 1 <= request.max_tokens <= 1_000_000:
        raise BadInput("--max-tokens must be between 1 and 1000000")


def _memories(context: Context) -> list[Candidate]:
    """Active semantic memories that match the query, through the search back end."""
    request = context.request
    filters = Filters(
        group=request.group,
        agent=request.agent,
        type=request.type,
        since=iso(request.since) if request.since else None,
    )
    found = context.backend.search(context.conn, context.terms, filters, context.now, context.pool)
    best = max((score for _, score in found), default=1.0) or 1.0
    return [
        Candidate(
            key=f"memory:{m.id}",
            channel="memories",
            content=m.content,
            relevance=max(0.0, score / best),
            timestamp=m.updated_at,
            importance=m.importance,
            access_count=m.access_count,
            memory=m,
        )
        for m, score in found
    ]


def _episodes(context: Context) -> list[Candidate]:
    """Episodes whose summary, goal, entities or tools match the query."""
    request = context.request
    filters = EpisodeFilters(
        request.group, request.agent, None, iso(request.since) if request.since else None
    )
    match = match_expression(context.terms)
    found = episodes.search(context.conn, match, filters, context.pool) if match else []
    best = max((score for _, score in found), default=1.0) or 1.0
    return [
        Candidate(
            key=f"episode:{e.id}",
            channel="episodes",
            content=e.summary,
            relevance=max(0.0, score / best),
            timestamp=e.ended_at,
            importance=e.importance,
            access_count=e.access_count,
            episode=e,
        )
        for e, score in found
    ]


def _turn_candidate(turn: Turn, channel: str, relevance: float) -> Candidate:
    return Candidate(
        key=f"turn:{turn.group}/{turn.agent}/{turn.session}#{turn.turn_index}",
        channel=channel,
        content=turn.content or _searchable(turn),
        relevance=relevance,
        timestamp=turn.timestamp,
        importance=TURN_IMPORTANCE,
        access_count=0,
        turn=turn,
    )


def _searchable(turn: Turn) -> str:
    """All of a turn's text; a turn without content (a tool call) is shown by this."""
    return index_body(Event(turn.role, turn.content, turn.tool_calls, turn.tool_results))


def _traced(context: Context, channel: str, since: datetime | None) -> list[Candidate]:
    request = context.request
    if request.since is not None and (since is None or request.since > since):
        since = request.since
    scope = Scope(request.group, request.agent, None, since, None)
    hits = trace(context.home, context.conn, request.query, scope, context.pool, context.lexicon)
    return [_turn_candidate(h.turn, channel, h.score) for h in hits]


def _recent(context: Context) -> list[Candidate]:
    """Turns of the last three days that match the query."""
    return _traced(context, "recent", context.now - timedelta(days=RECENT_DAYS))


def _traces(context: Context) -> list[Candidate]:
    """Turns of any age that match the query (level 2, ``recall --traces``)."""
    return _traced(context, "traces", None)


def _hot(context: Context) -> list[Candidate]:
    """The scope's working memory: its newest 50 turns of the last 24 hours, ranked by
    the share of query terms each contains (an item matching none is not returned)."""
    request = context.request
    since = context.now - timedelta(hours=HOT_HOURS)
    if request.since is not None and request.since > since:
        since = request.since
    scope = SearchScope(request.group, request.agent, None, iso(since), None)
    newest = turns.newest_turns(context.conn, scope, HOT_CAP)
    counts = _terms_matched([_searchable(turn) for turn in newest], context.terms)
    found = [
        _turn_candidate(turn, "hot", count / len(context.terms))
        for turn, count in zip(newest, counts, strict=True)
        if count
    ]
    found.sort(key=lambda c: -c.relevance)  # stable: newest first among equals
    return found[:HOT_RETURNED]


def _terms_matched(bodies: list[str], terms: list[str]) -> list[int]:
    """How many of ``terms`` each body contains, matched as the FTS indexes match them
    (whole stemmed words, CJK as character phrases): "c" is not found in "cat"."""
    if not bodies:
        return []
    scratch = sqlite3.connect(":memory:")
    try:
        scratch.execute(
            "CREATE VIRTUAL TABLE hot USING fts5(body, tokenize="
            "'porter unicode61 remove_diacritics 2')"
        )
        scratch.executemany(
            "INSERT INTO hot (rowid, body) VALUES (?, ?)",
            [(number, index_form(body)) for number, body in enumerate(bodies)],
        )
        counts = [0] * len(bodies)
        for term in terms:
            match = match_expression([term])
            for (number,) in scratch.execute("SELECT rowid FROM hot WHERE hot MATCH ?", (match,)):
                counts[number] += 1
        return counts
    finally:
        scratch.close()


CHANNELS: dict[str, Callable[[Context], list[Candidate]]] = {
    "memories": _memories,
    "episodes": _episodes,
    "recent": _recent,
    "hot": _hot,
    "traces": _traces,
    "dense": dense_channel,  # finds nothing unless search_backend is hybrid/dense
}


def rank(candidates: list[Candidate], config: Config, now: datetime) -> list[Hit]:
    """One hit per item and per normalized text, best score first, deterministically."""
    merged: dict[str, tuple[Candidate, list[str]]] = {}
    for candidate in candidates:
        kept = merged.get(candidate.key)
        if kept is None:
            merged[candidate.key] = (candidate, [candidate.channel])
            continue
        best = max(kept[0], candidate, key=lambda c: c.relevance)
        merged[candidate.key] = (best, [*kept[1], candidate.channel])
    half_life = parse_duration(config.recall_half_life) / 86400
    hits = [_score(c, channels, config, now, half_life) for c, channels in merged.values()]
    hits.sort(key=lambda h: (-h.score, h.signals.age_days, h.candidate.key))
    by_text: dict[str, Hit] = {}
    for hit in hits:  # the same statement from two sources is shown once
        by_text.setdefault(content_key(hit.candidate.content), hit)
    return list(by_text.values())


def _score(
    candidate: Candidate, channels: list[str], config: Config, now: datetime, half_life: float
) -> Hit:
    age = max(0.0, (now - parse_timestamp(candidate.timestamp)).total_seconds() / 86400)
    signals = Signals(
        relevance=round(candidate.relevance, 6),
        recency=round(0.5 ** (age / half_life), 6),
        importance=candidate.importance,
        access=round(
            min(1.0, math.log1p(candidate.access_count) / math.log1p(ACCESS_SATURATION)), 6
        ),
        age_days=round(age, 3),
    )
    score = (
        config.recall_weight_relevance * signals.relevance
        + config.recall_weight_recency * signals.recency
        + config.recall_weight_importance * signals.importance
        + config.recall_weight_access * signals.access
    )
    text = PREFIX + candidate.content
    return Hit(candidate, sorted(set(channels)), round(score, 6), signals, text, 0)


def fit_budget(
    hits: list[Hit], max_tokens: int, count: Callable[[str], int] = estimate_tokens
) -> list[Hit]:
    """Hits in rank order while the rendered text stays within ``max_tokens``.

    A hit that does not fit is skipped, or shortened when at least
    ``MIN_TRUNCATED_TOKENS`` are left; the separators are counted too.
    """
    kept: list[Hit] = []
    used = 0
    separator = count(SEPARATOR)
    for hit in hits:
        cost = count(hit.text) + (separator if kept else 0)
        if used + cost <= max_tokens:
            kept.append(hit._replace(tokens=cost))
            used += cost
            continue
        room = max_tokens - used - (separator if kept else 0)
        if room >= MIN_TRUNCATED_TOKENS:
            text = shorten(hit.text, room, count)
            cost = count(text) + (separator if kept else 0)
            kept.append(hit._replace(text=text, tokens=cost))
            used += cost
    return kept


def render_text(hits: list[Hit]) -> str:
    """The LLM-facing form (seed 002 §3.5): ``[记忆] …`` blocks separated by ``---``."""
    return SEPARATOR.join(hit.text for hit in hits)
