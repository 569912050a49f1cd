"""Properties of recall's fusion (issue 10 §3), through the library on real stores: a
lone common character never outranks a whole-word match, an empty episode never
outranks content, and the answer does not depend on what was asked before.
"""

from __future__ import annotations

import tempfile
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from soloqueue_mem.clock import iso
from soloqueue_mem.config import Config
from soloqueue_mem.home import Home
from soloqueue_mem.memory import episodes, store
from soloqueue_mem.memory.episodes import Episode
from soloqueue_mem.memory.recall import Request, recall
from soloqueue_mem.memory.store import Draft
from soloqueue_mem.storage.sqlite.backend import SqliteBackend
from soloqueue_mem.storage.sqlite.stores import open_memory
from soloqueue_mem.text.lexicon import open_lexicon

SETTINGS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
NOW = datetime(2026, 11, 26, 8, tzinfo=UTC)
# Words and, for each, a word that shares only its first character.
WORDS = {"编辑器": "编号", "数据库": "数字", "服务器": "服装", "咖啡馆": "咖喱", "端口": "端午"}
FILLER = ["今天", "项目", "周末", "同事", "北京", "会议", "文档", "测试"]
LEXICON: list = []


def lexicon():
    if not LEXICON:
        LEXICON.append(open_lexicon(Path(tempfile.gettempdir()) / "soloqueue-test-lexicon"))
    return LEXICON[0]


def remember(conn, text: str, hours_ago: int, importance: float = 0.5) -> str:
    draft = Draft(content=text, importance=importance, duration="permanent")
    return store.remember(
        conn, draft, "default", "default", NOW - timedelta(hours=hours_ago)
    ).memory.id


@SETTINGS
@given(
    word=st.sampled_from(sorted(WORDS)),
    fillers=st.lists(st.sampled_from(FILLER), min_size=1, max_size=4),
    decoys=st.integers(1, 6),
    ages=st.lists(st.integers(0, 400), min_size=7, max_size=7),
    importance=st.lists(st.floats(0, 1), min_size=7, max_size=7),
)
def test_a_lone_character_never_outranks_the_whole_word(word, fillers, decoys, ages, importance):
    """Query "<lone char> <word>": memories holding only the lone character (inside
    another word) rank below every memory holding the word, whatever their age or
    importance."""
    lone = WORDS[word][0]
    with tempfile.TemporaryDirectory() as folder:
        home = Home(Path(folder) / ".soloqueue")
        conn = open_memory(home, Config())
        answer = remember(conn, f"{''.join(fillers)}的{word}已经更新", ages[0], importance[0])
        for n in range(decoys):
            remember(
                conn,
                f"{WORDS[word]}{FILLER[n % len(FILLER)]}第{n}次",
                ages[n + 1],
                importance[n + 1],
            )
        request = Request(f"{lone} {word}", channels=("memories",), limit=20, max_tokens=100_000)
        conn.close()
        with closing(SqliteBackend(home, Config())) as source:
            hits = recall(request, Config(), NOW, lexicon, source=source).hits
    ids = [hit.candidate.memory.id for hit in hits]
    assert ids and ids[0] == answer  # a weak match ranks low; it is not dropped


def thin_episode(number: int, hours_ago: int) -> Episode:
    at = iso(NOW - timedelta(hours=hours_ago))
    return Episode(
        id=f"ep{number}",
        group="default",
        agent="default",
        session=f"s{number}",
        summary="Goal: hi deploy",
        goal="hi deploy",
        outcome="success",
        started_at=at,
        ended_at=at,
        action_nodes=[],
        entities=[],
        tools_used=[],
        linked_memory_ids=[],
        tags=[],
        importance=0.5,
        access_count=0,
        source="session_end",
        first_turn=0,
        last_turn=0,
        created_at=at,
    )


@SETTINGS
@given(
    episode_ages=st.lists(st.integers(0, 48), min_size=1, max_size=5),
    memory_age=st.integers(0, 24 * 60),
    importance=st.floats(0.3, 1),
)
def test_an_empty_episode_never_outranks_content(episode_ages, memory_age, importance):
    with tempfile.TemporaryDirectory() as folder:
        home = Home(Path(folder) / ".soloqueue")
        conn = open_memory(home, Config())
        fact = remember(
            conn, "the deploy goes through the staging cluster first", memory_age, importance
        )
        with conn:
            for number, age in enumerate(episode_ages):
                episodes.insert(conn, thin_episode(number, age))
        conn.close()
        with closing(SqliteBackend(home, Config())) as source:
            hits = recall(Request("deploy"), Config(), NOW, lexicon, source=source).hits
    kinds = [
        ("memory", h.candidate.memory.id) if h.candidate.memory else ("episode", "") for h in hits
    ]
    assert kinds[0] == ("memory", fact)


@SETTINGS
@given(
    order=st.permutations(["kiwi deploy", "kiwi", "deploy staging", "vpn kiwi", "staging"]),
    repeats=st.integers(1, 3),
)
def test_answers_do_not_depend_on_what_was_asked_before(order, repeats):
    """Access is counted, but with the default weights it does not rank: asking other
    questions (or the same one again) first changes no answer."""
    texts = ["kiwi deploys need the VPN", "staging deploys run at night", "the kiwi is a fruit"]
    with tempfile.TemporaryDirectory() as folder:
        home = Home(Path(folder) / ".soloqueue")
        conn = open_memory(home, Config())
        for hours, text in enumerate(texts):
            remember(conn, text, hours)

        conn.close()
        source = SqliteBackend(home, Config())

        def ask(query: str) -> list[str]:
            found = recall(Request(query, limit=2), Config(), NOW, lexicon, source=source)
            return [hit.candidate.content for hit in found.hits]

        first = {query: ask(query) for query in order}
        for _ in range(repeats):
            for query in reversed(order):
                assert ask(query) == first[query]
        source.close()
