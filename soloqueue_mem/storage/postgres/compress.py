"""``context compress`` on PostgreSQL: :class:`soloqueue_mem.context.compress.Target`
over the database.

The compressed turns are recorded in one transaction holding the session's digest
lock (the advisory lock :class:`soloqueue_mem.storage.postgres.episodes.PostgresTarget` takes), so
a compress and a ``session end`` or ``consolidate`` of the same session on another
host never extract the same turns twice.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING

from soloqueue_mem import jsonio
from soloqueue_mem.context.compress import SOURCE
from soloqueue_mem.memory.episodes import Episode
from soloqueue_mem.memory.episodes import _episode as episode_from_row
from soloqueue_mem.memory.store import Draft, Remembered
from soloqueue_mem.sessions.events import SessionKey
from soloqueue_mem.storage.postgres import episodes, memories

if TYPE_CHECKING:
    import psycopg

_KEY = "group_id = %s AND agent_id = %s AND session_id = %s"


class PostgresCompress:
    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn

    @contextmanager
    def transaction(self, key: SessionKey) -> Iterator[object]:
        with self.conn.transaction() as tx:
            self.conn.execute(
                "SELECT pg_advisory_xact_lock(hashtext(%s))", ("digest/" + "/".join(key),)
            )
            yield tx

    def covering(self, key: SessionKey, last: int) -> Episode | None:
        row = self.conn.execute(
            f"SELECT {episodes.COLUMNS} FROM episodes WHERE {_KEY}"  # noqa: S608 - constants
            " AND source = %s AND last_turn = %s LIMIT 1",
            (*key, SOURCE, last),
        ).fetchone()
        return episode_from_row(row) if row else None

    def unextracted(self, key: SessionKey, last: int) -> set[int]:
        return episodes.pending(self.conn, key, last)

    def insert(self, episode: Episode) -> None:
        episodes.insert(self.conn, episode)

    def remember(self, draft: Draft, key: SessionKey, now: datetime) -> Remembered:
        return memories.remember(self.conn, draft, key.group, key.agent, now)

    def link(self, episode_id: str, memory_ids: list[str]) -> None:
        self.conn.execute(
            "UPDATE episodes SET linked_memory_ids = %s WHERE id = %s",
            (jsonio.dumps_compact(memory_ids), episode_id),
        )

    def mark_extracted(self, key: SessionKey, last: int, episode_id: str) -> None:
        self.conn.execute(
            "UPDATE quarantine_logs SET extracted = TRUE, episode_id = %s"
            f" WHERE {_KEY} AND turn_index <= %s AND NOT extracted",  # noqa: S608 - constants
            (episode_id, *key, last),
        )
