"""The memory search's index-only path (issue 13) gives exactly what joining every
match to its memory gives, each search alone and two ranked together: on random stores
with superseded, archived and expired memories in several groups and agents, ties of
score and time included, for every kind of filter, with small thresholds so the
bounded (broad) path runs too."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import NamedTuple
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from soloqueue_mem.config import Config
from soloqueue_mem.db.adapter import Db
from soloqueue_mem.home import Home
from soloqueue_mem.memory import backend, store
from soloqueue_mem.memory.store import Draft, Filters
from soloqueue_mem.storage.sqlite.stores import open_memory
from soloqueue_mem.text.fts import match_expression

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
START = datetime(2026, 11, 1, tzinfo=UTC)
VOCABULARY = ["apple", "river", "cloud", "stone", "北京", "公司"]
BROAD, RECENT = 4, 2  # the thresholds, scaled down to the generated stores


class Spec(NamedTuple):
    words: list[str]
    group: str
    agent: str
    key: tuple[str, str] | None  # (subject, predicate): a later one supersedes
    duration: str
    gap_minutes: int  # after the previous memory: 0 gives equal times
    archived: bool


specs = st.lists(
    st.builds(
        Spec,
        words=st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=2),
        group=st.sampled_from(["g1", "g2"]),
        agent=st.sampled_from(["a1", "a2"]),
        key=st.none() | st.tuples(st.just("s"), st.sampled_from(["p1", "p2"])),
        duration=st.sampled_from(["1h", "permanent", "permanent"]),
        gap_minutes=st.sampled_from([0, 1, 30]),
        archived=st.sampled_from([False, False, False, True]),
    ),
    min_size=3,
    max_size=24,
)
filters = st.sampled_from(
    [
        Filters(),
        Filters(group="g1"),
        Filters(group="g2", agent="a1"),
        Filters(agent="a2"),  # no index lists it: the join path
        Filters(include_inactive=True),
        Filters(group="g1", include_inactive=True),
        Filters(type="FACT"),
    ]
)
queries = st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=3, unique=True)


def write(conn, memories: list[Spec]) -> datetime:
    now = START
    for number, spec in enumerate(memories):
        now += timedelta(minutes=spec.gap_minutes)
        subject, predicate = spec.key or ("", "")
        draft = Draft(
            # the same number of tokens whatever the words: equal BM25 scores abound
            content=" ".join([*spec.words, *["filler"] * (3 - len(spec.words))]) + f" item{number}",
            subject=subject,
            predicate=predicate,
            duration=spec.duration,
        )
        stored = store.remember(conn, draft, spec.group, spec.agent, now)
        if spec.archived:
            store.archive(conn, [stored.memory.id], now)
    return now


def joined(conn, terms: list[str], where: Filters, now: datetime, limit: int):
    """The search as it was: every count and the ranking join each match to its memory."""
    match = match_expression(terms) or ""

    def reach(expression: str, n: int) -> int | None:
        if store.index_has_fewer(conn, expression, n):
            return None
        return store.nth_newest_match(conn, expression, where, now, n)

    if reach(match, BROAD) is None:
        return ranked_joined(conn, match, where, now, limit, "1", {})
    lo = store.nth_newest_match(conn, match, where, now, RECENT)
    assert lo is not None
    narrow = [
        term
        for term in (terms if len(terms) > 1 else [])
        if reach(match_expression([term]) or "", BROAD) is None
    ]
    if len(narrow) == len(terms):
        return ranked_joined(conn, match, where, now, limit, "1", {})
    admitted = "memories_fts.rowid >= :lo"
    if narrow:
        admitted += (
            " OR memories_fts.rowid IN"
            " (SELECT rowid FROM memories_fts WHERE memories_fts MATCH :narrow)"
        )
    bounds = {"lo": lo, "narrow": match_expression(narrow)}
    return ranked_joined(conn, match, where, now, limit, admitted, bounds)


def ranked_joined(conn, match, where, now, limit, admitted, bounds):
    sql, params = store.filter_sql(Db(conn), where, now)
    rows = conn.execute(
        f"""SELECT {store._QUALIFIED}, -bm25(memories_fts) AS score
            FROM memories_fts JOIN memories ON memories.rowid = memories_fts.rowid
            WHERE memories_fts MATCH :match AND {sql} AND ({admitted})
            ORDER BY score DESC, memories.updated_at DESC LIMIT :limit""",  # noqa: S608
        {**params, **bounds, "match": match, "limit": limit},
    )
    return [(store._memory(row[:-1]), float(row[-1])) for row in rows]


@SETTINGS
@given(
    memories=specs,
    where=filters,
    query=queries,
    later=st.integers(0, 120),
    limit=st.integers(1, 3),
)
def test_the_index_only_search_equals_the_joined_one(memories, where, query, later, limit):
    with tempfile.TemporaryDirectory() as folder:
        conn = open_memory(Home(Path(folder)), Config())
        try:
            now = write(conn, memories) + timedelta(minutes=later)
            with (
                mock.patch.object(backend, "BROAD_MATCHES", BROAD),
                mock.patch.object(backend, "RECENT_WINDOW", RECENT),
            ):
                found = backend.FTS5Backend().search(conn, query, where, now, limit)
                # recall's two searches (active, and what corrections replaced), one ranking
                together = backend.FTS5Backend().search_each(
                    conn, query, [where, Filters(include_inactive=True)], now, limit
                )
            expected = joined(conn, query, where, now, limit)
            inactive = joined(conn, query, Filters(include_inactive=True), now, limit)
        finally:
            conn.close()
    assert [(m.id, score) for m, score in found] == [(m.id, score) for m, score in expected]
    assert [[(m.id, score) for m, score in one] for one in together] == [
        [(m.id, score) for m, score in one] for one in (expected, inactive)
    ]


@SETTINGS
@given(memories=specs, where=filters, later=st.integers(0, 120))
def test_left_out_lists_exactly_the_rows_the_filters_reject(memories, where, later):
    with tempfile.TemporaryDirectory() as folder:
        conn = open_memory(Home(Path(folder)), Config())
        try:
            now = write(conn, memories) + timedelta(minutes=later)
            skip = store.left_out(conn, where, now)
            sql, params = store.filter_sql(Db(conn), where, now)
            rejected = {
                row[0]
                for row in conn.execute(
                    f"SELECT rowid FROM memories WHERE NOT ({sql})",  # noqa: S608
                    params,
                )
            }
            capped = store.left_out(conn, where, now, cap=max(0, len(rejected) - 1))
        finally:
            conn.close()
    if where.type is not None or (where.agent is not None and where.group is None):
        assert skip is None
        return
    assert skip == rejected
    assert capped == (None if rejected else frozenset())  # over the cap: the caller joins
