"""Properties of recall through the library (SPEC §3.5, issue 4): an expired or
superseded memory is never returned; more importance or more use never lowers a
score; the answer never exceeds its token budget; the same input gives the same output.
"""

from __future__ import annotations

import random
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import NamedTuple

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from soloqueue_mem.clock import iso
from soloqueue_mem.config import Config
from soloqueue_mem.home import Home
from soloqueue_mem.memory import store
from soloqueue_mem.memory.recall import Candidate, Request, fit_budget, rank, recall, render_text
from soloqueue_mem.memory.store import Draft
from soloqueue_mem.storage.sqlite.backend import SqliteBackend
from soloqueue_mem.storage.sqlite.stores import open_memory
from soloqueue_mem.text.cjk import estimate_tokens

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
START = datetime(2026, 11, 1, tzinfo=UTC)
VOCABULARY = ["apple", "river", "cloud", "stone", "piano", "tiger", "lemon", "orbit"]
DURATIONS = {"1h": 1, "1d": 24, "3d": 72, "30d": 720, "permanent": None}


def no_lexicon():  # the generated queries are ASCII: segmentation is never needed
    raise AssertionError("the lexicon should not be loaded")


@contextmanager
def fresh_store() -> Iterator[tuple[SqliteBackend, object]]:
    """A new store's back end, and its memory.db connection to write through."""
    with tempfile.TemporaryDirectory() as folder:
        source = SqliteBackend(Home(Path(folder) / ".soloqueue"), Config())
        try:
            yield source, source.connection("memory", create=True)
        finally:
            source.close()


# -- memories written through the store, recalled through the engine -------------------


class Spec(NamedTuple):
    words: list[str]
    key: tuple[str, str] | None  # (subject, predicate)
    duration: str
    gap_hours: int  # after the previous memory
    importance: float


specs = st.lists(
    st.builds(
        Spec,
        words=st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=4),
        key=st.none() | st.tuples(st.sampled_from(["s1", "s2"]), st.sampled_from(["p1", "p2"])),
        duration=st.sampled_from(sorted(DURATIONS)),
        gap_hours=st.integers(0, 48),
        importance=st.floats(0, 1),
    ),
    min_size=1,
    max_size=10,
)
queries = st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=3, unique=True)


def write(conn, memories: list[Spec]) -> tuple[list[dict], datetime]:
    """Store the memories in order; what a reader of SPEC §3.4 expects of each."""
    now, written = START, []
    for number, spec in enumerate(memories):
        now += timedelta(hours=spec.gap_hours)
        subject, predicate = spec.key or ("", "")
        draft = Draft(
            content=" ".join(spec.words) + f" item{number}",  # unique: no restating
            subject=subject,
            predicate=predicate,
            duration=spec.duration,
            importance=spec.importance,
        )
        stored = store.remember(conn, draft, "default", "default", now)
        hours = DURATIONS[spec.duration]
        written.append(
            {
                "id": stored.memory.id,
                "words": set(spec.words),
                "key": spec.key,
                "expires": None if hours is None else now + timedelta(hours=hours),
            }
        )
    return written, now


def returnable(written: list[dict], index: int, at: datetime) -> bool:
    """Not expired at ``at`` and no later memory has its subject and predicate."""
    memory = written[index]
    if memory["expires"] is not None and memory["expires"] <= at:
        return False
    later = written[index + 1 :]
    return memory["key"] is None or all(m["key"] != memory["key"] for m in later)


@SETTINGS
@given(memories=specs, query=queries, later_hours=st.integers(0, 800))
def test_expired_and_superseded_memories_are_never_returned(memories, query, later_hours):
    with fresh_store() as (source, conn):
        written, last = write(conn, memories)
        at = last + timedelta(hours=later_hours)
        request = Request(" ".join(query), limit=100, max_tokens=1_000_000)
        result = recall(request, Config(), at, no_lexicon, source=source)
    returned = {hit.candidate.memory.id for hit in result.hits}
    for index, memory in enumerate(written):
        if memory["id"] in returned:
            assert returnable(written, index, at), memory
    # Only live memories sharing a word with the query come back, and none holding
    # the whole query is missing (partial matches may fall below the coverage floor).
    sharing = {
        m["id"]
        for i, m in enumerate(written)
        if returnable(written, i, at) and m["words"] & set(query)
    }
    whole = {
        m["id"]
        for i, m in enumerate(written)
        if returnable(written, i, at) and set(query) <= m["words"]
    }
    assert whole <= returned <= sharing
    for hit in result.hits:
        memory = hit.candidate.memory
        assert memory.superseded_by is None
        assert memory.expires_at is None or memory.expires_at > iso(at)


@SETTINGS
@given(memories=specs, query=queries, later_hours=st.integers(0, 100))
def test_the_same_store_and_query_give_the_same_answer(memories, query, later_hours):
    with tempfile.TemporaryDirectory() as folder:
        homes = [Home(Path(folder) / name) for name in ("a", "b")]
        conn = open_memory(homes[0], Config())
        _, last = write(conn, memories)
        conn.close()
        shutil.copytree(homes[0].root, homes[1].root)
        at = last + timedelta(hours=later_hours)
        request = Request(" ".join(query), max_tokens=120, limit=5)
        results = []
        for home in homes:
            with closing(SqliteBackend(home, Config())) as source:
                results.append(recall(request, Config(), at, no_lexicon, source=source))
    assert results[0] == results[1]


# -- ranking and budget on generated candidates ----------------------------------------

NOW = datetime(2026, 11, 26, 8, tzinfo=UTC)
TEXT = st.text(
    alphabet=st.sampled_from("abcxyz 0129.,-\n" + "记忆数据库北京" + "😀"), min_size=1, max_size=300
)
unit = st.floats(0, 1)
weights = st.builds(
    Config,
    recall_weight_relevance=unit,
    recall_weight_recency=unit,
    recall_weight_importance=unit,
    recall_weight_access=unit,
    recall_half_life=st.sampled_from(["1d", "7d", "30d"]),
)


@st.composite
def candidate_lists(draw, text=TEXT) -> list[Candidate]:
    count = draw(st.integers(1, 12))
    candidates = []
    for number in range(count):
        age = draw(st.integers(0, 90 * 24 * 3600))
        candidates.append(
            Candidate(
                key=f"memory:{number:04d}",
                channel=draw(st.sampled_from(["memories", "recent", "hot"])),
                content=f"item{number} " + draw(text),  # distinct after normalizing
                relevance=draw(unit),
                timestamp=iso(NOW - timedelta(seconds=age)),
                importance=draw(unit),
                access_count=draw(st.integers(0, 40)),
            )
        )
    return candidates


def score_and_place(candidates: list[Candidate], key: str, config: Config) -> tuple[float, int]:
    hits = rank(candidates, config, NOW)
    keys = [hit.candidate.key for hit in hits]
    return hits[keys.index(key)].score, keys.index(key)


@SETTINGS
@given(
    candidates=candidate_lists(),
    config=weights,
    pick=st.integers(0, 11),
    more_importance=unit,
    more_access=st.integers(0, 100),
)
def test_more_importance_or_access_never_lowers_a_score(
    candidates, config, pick, more_importance, more_access
):
    chosen = candidates[pick % len(candidates)]
    score, place = score_and_place(candidates, chosen.key, config)
    more = min(1.0, chosen.importance + more_importance)
    for raised in (
        chosen._replace(importance=more),
        chosen._replace(access_count=chosen.access_count + more_access),
        chosen._replace(importance=more, access_count=chosen.access_count + more_access),
    ):
        changed = [raised if c is chosen else c for c in candidates]
        new_score, new_place = score_and_place(changed, chosen.key, config)
        assert new_score >= score
        assert new_place <= place  # and it never falls behind another item


@SETTINGS
@given(candidates=candidate_lists(), config=weights, max_tokens=st.integers(1, 400))
def test_the_answer_never_exceeds_its_budget(candidates, config, max_tokens):
    ranked = rank(candidates, config, NOW)
    kept = fit_budget(ranked, max_tokens)
    assert estimate_tokens(render_text(kept)) <= max_tokens
    assert sum(hit.tokens for hit in kept) <= max_tokens
    order = [hit.candidate.key for hit in ranked]
    positions = [order.index(hit.candidate.key) for hit in kept]
    assert positions == sorted(positions)  # rank order is kept
    for hit in kept:
        whole = ranked[order.index(hit.candidate.key)].text
        assert hit.text == whole or (hit.text.endswith("…") and whole.startswith(hit.text[:-1]))
    if ranked and estimate_tokens(ranked[0].text) <= max_tokens:
        assert kept[0].text == ranked[0].text  # the best hit is never dropped for room


@SETTINGS
@given(candidates=candidate_lists(), config=weights, seed=st.integers(0, 2**32 - 1))
def test_ranking_is_deterministic_and_ignores_input_order(candidates, config, seed):
    shuffled = list(candidates)
    random.Random(seed).shuffle(shuffled)
    first = fit_budget(rank(candidates, config, NOW), 200)
    assert first == fit_budget(rank(candidates, config, NOW), 200)
    assert first == fit_budget(rank(shuffled, config, NOW), 200)
