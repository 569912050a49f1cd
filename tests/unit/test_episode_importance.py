"""A thin episode (no actions, a goal of a few words) is capped in importance; a goal
of more words is not, in Latin or Chinese text (through the library's recall)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import UTC, datetime

import pytest

from soloqueue_mem.clock import iso
from soloqueue_mem.config import Config
from soloqueue_mem.home import Home
from soloqueue_mem.memory import episodes
from soloqueue_mem.memory.episodes import Episode
from soloqueue_mem.memory.recall import THIN_EPISODE_IMPORTANCE, Request, recall
from soloqueue_mem.storage.sqlite.backend import SqliteBackend
from soloqueue_mem.storage.sqlite.stores import open_memory
from soloqueue_mem.text.lexicon import Lexicon

NOW = datetime(2026, 11, 26, 8, tzinfo=UTC)


@pytest.fixture(scope="module")
def lexicon(built_lexicon) -> Lexicon:
    return Lexicon(sqlite3.connect(f"file:{built_lexicon}?mode=ro", uri=True))


def episode(number: int, summary: str, goal: str) -> Episode:
    at = iso(NOW)
    return Episode(
        id=f"ep{number}", group="default", agent="default", session=f"s{number}",
        summary=summary, goal=goal, outcome="success", started_at=at, ended_at=at,
        action_nodes=[], entities=[], tools_used=[], linked_memory_ids=[], tags=[],
        importance=0.8, access_count=0, source="session_end", first_turn=0, last_turn=0,
        created_at=at,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("query", "thin", "full"),
    [
        ("deploy", "hi deploy", "deploy the billing service to the staging cluster"),
        ("部署", "你好，部署", "把计费服务部署到预发布集群然后观察一天的监控"),
    ],
)
def test_only_a_thin_goal_caps_the_episode(tmp_path, lexicon, query, thin, full):
    home = Home(tmp_path / ".soloqueue")
    conn = open_memory(home, Config())
    with conn:
        episodes.insert(conn, episode(0, f"Goal: {thin}", thin))
        episodes.insert(conn, episode(1, f"Goal: {full}", full))
    request = Request(query, channels=("episodes",), max_tokens=100_000)
    conn.close()
    with closing(SqliteBackend(home, Config())) as source:
        hits = recall(request, Config(), NOW, lambda: lexicon, source=source).hits
    importance = {h.candidate.episode.id: h.candidate.importance for h in hits}
    assert importance == {"ep0": THIN_EPISODE_IMPORTANCE, "ep1": 0.8}
