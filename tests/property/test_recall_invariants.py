"""Invariants of default ``recall`` over random stores and queries (issue 27): what
ranks first is what was asked, a weak match ranks low but is never dropped, and the
answer depends on nothing but the store and the query.

Stores hold memories, turns (some within working memory's last 24 hours) and working
entries made of made-up words that no stemmer changes, so "shares a content word with
the query" has a plain oracle: the sets of words intersect.
"""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import NamedTuple

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from soloqueue_mem import Store

SETTINGS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
NOW = datetime(2026, 11, 26, 8, tzinfo=UTC)
WORDS = [
    "zorb",
    "klim",
    "trop",
    "vask",
    "plin",
    "murk",
    "dalt",
    "fenk",
    "gront",
    "hulp",
    "jesk",
    "wolt",
]
UNSEEN = ["quib", "naxt"]  # never stored: a query may hold words nothing matches


class Item(NamedTuple):
    kind: str  # memory, turn or working
    words: tuple[str, ...]
    hours_ago: int


items = st.lists(
    st.builds(
        Item,
        st.sampled_from(["memory", "turn", "working"]),
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=3, unique=True).map(tuple),
        st.integers(0, 24 * 60),
    ),
    min_size=1,
    max_size=30,
)
queries = st.lists(st.sampled_from(WORDS + UNSEEN), min_size=1, max_size=12)


def text_of(number: int, item: Item) -> str:
    """Distinct texts (none is shown twice), long enough for working memory's filter."""
    return " ".join(item.words) + f" n{number:06d}"


def fill(root: Path, stored: list[Item]) -> Store:
    clock = [NOW]
    store = Store(root, clock=lambda: clock[0])
    for number, item in enumerate(stored):
        clock[0] = NOW - timedelta(hours=item.hours_ago, seconds=number)
        if item.kind == "memory":
            store.remember(text_of(number, item), duration="permanent")
        elif item.kind == "turn":
            store.log(text_of(number, item), session=f"s{number % 3}")
        else:
            store.working_add(text_of(number, item))
    clock[0] = NOW
    return store


def matching(content: str, query: list[str]) -> bool:
    return not set(content.split()).isdisjoint(query)


@SETTINGS
@given(stored=items, query=queries, limit=st.integers(1, 12))
@example(  # a long query: each memory answers one part of it
    stored=[Item("memory", (word,), 24 * n) for n, word in enumerate(WORDS[:8])],
    query=WORDS[:8] + UNSEEN,
    limit=8,
)
@example(  # the newest turns match nothing; an old memory matches
    stored=[Item("memory", ("zorb", "klim"), 24 * 40)]
    + [Item("turn", ("wolt",), n) for n in range(10)],
    query=["zorb", "klim"],
    limit=3,
)
def test_matches_first_and_never_fewer_than_limit(stored, query, limit):
    with tempfile.TemporaryDirectory() as folder:
        store = fill(Path(folder) / ".soloqueue", stored)
        hits = store.recall(
            " ".join(query), group="default", limit=limit, max_tokens=1_000_000
        ).hits
        store.close()
    flags = [matching(h.candidate.content, query) for h in hits]
    # a hit sharing no word with the query never ranks above one that does
    assert flags == sorted(flags, reverse=True)
    # no absolute floor: --limit N gives N hits whenever N items match
    live = [
        (n, item) for n, item in enumerate(stored) if item.kind != "working" or item.hours_ago < 24
    ]
    matches = [text_of(n, item) for n, item in live]  # a working entry lives 24 hours
    matches = [text for text in matches if matching(text, query)]
    assert sum(flags) >= min(limit, len(matches))


@SETTINGS
@given(stored=items, first=queries, second=queries)
def test_an_answer_does_not_depend_on_earlier_queries(stored, first, second):
    """Recall counts what it returned (access), but with the access weight at its
    default 0 an earlier question never changes a later answer."""
    answers = []
    for asked in ([second], [first, second]):
        with tempfile.TemporaryDirectory() as folder:
            store = fill(Path(folder) / ".soloqueue", stored)
            for query in asked:
                result = store.recall(" ".join(query), max_tokens=1_000_000)
            store.close()
        answers.append([(h.candidate.content, h.score) for h in result.hits])
    assert answers[0] == answers[1]


FEWER = settings(SETTINGS, max_examples=10)  # each example builds two stores
WHEN = ["yesterday", "last week", "on Friday", "昨天", "上周", "三天前"]


@FEWER
@given(stored=items, query=queries, when=st.sampled_from(WHEN))
def test_a_time_expression_adds_its_window_and_removes_nothing(stored, query, when):
    """ "zorb last week" finds what "zorb" finds, and the week's turns besides."""
    with tempfile.TemporaryDirectory() as folder:
        store = fill(Path(folder) / ".soloqueue", stored)
        asked = " ".join(query)
        plain, timed = (
            store.recall(text, group="default", limit=100, max_tokens=1_000_000).hits
            for text in (asked, f"{asked} {when}")
        )
        store.close()
    matched = {h.candidate.key for h in plain if matching(h.candidate.content, query)}
    assert matched <= {h.candidate.key for h in timed}


values = st.lists(st.sampled_from(WORDS), min_size=4, max_size=4, unique=True)


@FEWER
@given(words=values, said_days_ago=st.integers(2, 60), other=st.lists(st.sampled_from(WORDS)))
def test_a_turn_stating_a_replaced_value_ranks_below_its_correction(words, said_days_ago, other):
    """A turn said before a correction, holding the old value, ranks below the memory
    that replaced it and names it in ``superseded_by``; other turns are unmarked."""
    subject, attribute, old, new = words
    other = [word for word in other if word not in words]  # turns about something else
    with tempfile.TemporaryDirectory() as folder:
        clock = [NOW - timedelta(days=said_days_ago)]
        store = Store(Path(folder) / ".soloqueue", clock=lambda: clock[0])
        store.log(f"{subject} {attribute} {old} n000001", session="s1")
        store.remember(
            f"{subject} {attribute} {old}",
            subject=subject,
            predicate=attribute,
            duration="permanent",
        )
        for number, word in enumerate(other):
            store.log(f"{subject} {word} n{number + 2:06d}", session="s2")
        clock[0] = NOW - timedelta(days=1)
        fix = store.remember(f"{subject} {attribute} {new}", subject=subject, predicate=attribute)
        clock[0] = NOW
        hits = store.recall(f"{subject} {attribute}", limit=100, max_tokens=1_000_000).hits
        store.close()
    keys = [h.candidate.key for h in hits]
    stale = next(h for h in hits if h.candidate.content == f"{subject} {attribute} {old} n000001")
    assert stale.candidate.superseded_by == fix.memory.id
    assert keys.index(f"memory:{fix.memory.id}") < keys.index(stale.candidate.key)
    assert all(h.candidate.superseded_by is None for h in hits if h.candidate.content.endswith("2"))
