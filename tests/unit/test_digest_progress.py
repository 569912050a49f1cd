"""The scratchpad's progress note after a digest: the model rewrites the pad outside
the write transaction, and a pad written meanwhile is not overwritten by that rewrite."""

from __future__ import annotations

from datetime import UTC, datetime

from soloqueue_mem.clock import iso
from soloqueue_mem.config import Config
from soloqueue_mem.home import Home
from soloqueue_mem.lifecycle.digest import DbTarget
from soloqueue_mem.memory import scratchpad
from soloqueue_mem.memory.episodes import Episode
from soloqueue_mem.sessions.events import SessionKey
from soloqueue_mem.storage.sqlite.stores import open_memory

NOW = datetime(2026, 11, 26, 8, tzinfo=UTC)
KEY = SessionKey("default", "default", "s1")


def test_a_pad_written_during_the_model_rewrite_keeps_that_write(tmp_path) -> None:
    home = Home(tmp_path)
    home.ensure()
    conn = open_memory(home, Config())
    at = iso(NOW)
    episode = Episode(
        id="ep1", group="default", agent="default", session="s1", summary="Moved the CI",
        goal="Move the CI to the new runners", outcome="success", started_at=at,
        ended_at=at, action_nodes=[], entities=[], tools_used=[], linked_memory_ids=[],
        tags=[], importance=0.8, access_count=0, source="session_end", first_turn=0,
        last_turn=0, created_at=at,
    )  # fmt: skip
    template = scratchpad.template("en")

    def rewrite(pad: str, _episode: Episode) -> str:
        # another session writes the pad while the model is answering
        written = scratchpad.with_progress(pad, "another session's note", "en")
        scratchpad.put(conn, "default", "default", written, NOW)
        return pad + "\nthe model's stale rewrite"

    try:
        DbTarget(home, conn, "en").note_progress(KEY, episode, NOW, rewrite)
        content = scratchpad.get(conn, "default", "default", template).content
    finally:
        conn.close()
    assert "another session's note" in content
    assert "Move the CI to the new runners" in content
    assert "the model's stale rewrite" not in content
