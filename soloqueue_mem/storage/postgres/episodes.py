"""All SQL for ``episodes`` and the turns' extraction state on PostgreSQL, and the
digest of a session there (:class:`soloqueue_mem.lifecycle.digest.Target`).

Digesting a stretch of turns is one transaction holding a transaction-scoped advisory
lock on the session: the stretch is checked to be still unextracted, its memories are
remembered (under ``remember``'s own lock on the group/agent), the episode is stored
and the turns are marked extracted. A second host digesting the same session at once
waits on the lock, then finds the stretch done and skips it: no duplicate episode, no
memory confirmed twice.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from soloqueue_mem import jsonio
from soloqueue_mem.db.ids import row_by_prefix
from soloqueue_mem.home import Home
from soloqueue_mem.memory.episodes import Episode, EpisodeFilters
from soloqueue_mem.memory.episodes import _episode as episode_from_row
from soloqueue_mem.memory.store import Draft, Remembered
from soloqueue_mem.sessions.events import SessionKey
from soloqueue_mem.sessions.turns import SessionRow
from soloqueue_mem.storage.postgres import memories, sessions
from soloqueue_mem.storage.postgres.text import any_query, document

if TYPE_CHECKING:
    import psycopg

    from soloqueue_mem.lifecycle.digest import Rewrite

COLUMNS = (
    "id, group_id, agent_id, session_id, summary, goal, outcome, started_at, ended_at, "
    "action_nodes, entities, tools_used, linked_memory_ids, tags, importance_score, "
    "access_count, source, first_turn, last_turn, created_at"
)
_JSON_FIELDS = (9, 10, 11, 12, 13)
_KEY = "group_id = %s AND agent_id = %s AND session_id = %s"


def insert(conn: psycopg.Connection, episode: Episode) -> None:
    values: list[Any] = list(episode)
    for i in _JSON_FIELDS:
        values[i] = jsonio.dumps_compact(values[i])
    _insert(conn, values, episode, "")


def copy_in(conn: psycopg.Connection, row: tuple[Any, ...]) -> bool:
    """Insert memory.db's episode ``row`` (its columns as stored) unless the id is
    taken; whether it was inserted (``migrate --to``)."""
    return _insert(conn, list(row), episode_from_row(row), " ON CONFLICT (id) DO NOTHING")


def read_back(conn: psycopg.Connection, ids: list[str]) -> dict[str, tuple[Any, ...]]:
    """The episodes among ``ids``, their columns as memory.db stores them, by id."""
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM episodes WHERE id = ANY(%s)",  # noqa: S608 - constants
        (ids,),
    ).fetchall()
    return {row[0]: tuple(row) for row in rows}


def search_text(episode: Episode) -> str:
    """What the lexical index holds: summary, goal, entities, tags and tools."""
    return document(
        " ".join(
            [episode.summary, episode.goal, *episode.entities, *episode.tags, *episode.tools_used]
        )
    )


def _insert(conn: psycopg.Connection, values: list[Any], episode: Episode, tail: str) -> bool:
    cursor = conn.execute(
        f"INSERT INTO episodes ({COLUMNS}, search)"  # noqa: S608 - constant columns
        f" VALUES ({', '.join(['%s'] * len(values))}, to_tsvector('simple', %s)){tail}",
        (*values, search_text(episode)),
    )
    return cursor.rowcount == 1


def _where(filters: EpisodeFilters) -> tuple[str, dict[str, Any]]:
    columns = {"group": "group_id", "agent": "agent_id", "session": "session_id"}
    clauses = [f"{col} = %({name})s" for name, col in columns.items() if getattr(filters, name)]
    if filters.since:
        clauses.append("ended_at >= %(since)s")
    return " AND ".join(clauses) or "TRUE", filters._asdict()


def list_episodes(conn: psycopg.Connection, filters: EpisodeFilters, limit: int) -> list[Episode]:
    """Episodes, most recently ended first (as memory.db lists them)."""
    where, params = _where(filters)
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM episodes WHERE {where}"  # noqa: S608 - fixed fragments
        " ORDER BY ended_at DESC, seq DESC LIMIT %(limit)s",
        {**params, "limit": limit},
    ).fetchall()
    return [episode_from_row(row) for row in rows]


def get(conn: psycopg.Connection, ref: str) -> Episode:
    """The episode with id ``ref`` or the only one whose id starts with it."""
    return episode_from_row(row_by_prefix(conn, "episodes", COLUMNS, ref, "episode"))


def search(
    conn: psycopg.Connection, terms: list[str], filters: EpisodeFilters, limit: int
) -> list[tuple[Episode, float]]:
    """Episodes matching any of ``terms``, best ``ts_rank`` first."""
    match = any_query(terms)
    if match is None:
        return []
    where, params = _where(filters)
    rows = conn.execute(
        f"SELECT {COLUMNS}, ts_rank(search, q) AS score"  # noqa: S608 - fixed fragments
        f" FROM episodes, to_tsquery('simple', %(match)s) AS q WHERE search @@ q AND {where}"
        " ORDER BY score DESC, ended_at DESC LIMIT %(limit)s",
        {**params, "match": match, "limit": limit},
    ).fetchall()
    return [(episode_from_row(row[:-1]), float(row[-1])) for row in rows]


def touch(conn: psycopg.Connection, ids: list[str]) -> None:
    """Count a retrieval: ``access_count`` + 1."""
    if ids:
        conn.execute(
            "UPDATE episodes SET access_count = access_count + 1 WHERE id = ANY(%s)", (ids,)
        )


def pending(conn: psycopg.Connection, key: SessionKey, upto: int | None = None) -> set[int]:
    """The session's unextracted turn indexes (up to ``upto``)."""
    rows = conn.execute(
        f"SELECT turn_index FROM quarantine_logs WHERE {_KEY} AND NOT extracted"  # noqa: S608
        " AND (%s::integer IS NULL OR turn_index <= %s)",
        (*key, upto, upto),
    ).fetchall()
    return {row[0] for row in rows}


def sessions_due(conn: psycopg.Connection, idle_before: str) -> list[SessionRow]:
    """Sessions, ended or quiet since ``idle_before``, with unextracted turns (the
    order of :func:`soloqueue_mem.sessions.turns.sessions_with_unextracted`)."""
    rows = conn.execute(
        "SELECT group_id, agent_id, session_id, started_at, last_turn_at, turn_count, 0,"
        " ended_at FROM sessions s WHERE (ended_at IS NOT NULL OR last_turn_at < %s)"
        " AND EXISTS (SELECT 1 FROM quarantine_logs q WHERE q.group_id = s.group_id"
        " AND q.agent_id = s.agent_id AND q.session_id = s.session_id AND NOT q.extracted)"
        " ORDER BY last_turn_at, group_id, agent_id, session_id",
        (idle_before,),
    ).fetchall()
    return [SessionRow(*row) for row in rows]


class PostgresTarget:
    """Digesting a session into the database (see the module doc)."""

    def __init__(self, conn: psycopg.Connection, home: Home, language: str = "auto") -> None:
        self.conn = conn
        self.home = home
        self.language = language

    def pending(self, key: SessionKey) -> set[int]:
        return pending(self.conn, key)

    def records(self, key: SessionKey) -> list[dict[str, Any]]:
        return sessions.read(self.conn, self.home, key).records

    def store(
        self,
        key: SessionKey,
        stretch: list[dict[str, Any]],
        drafts: list[Draft],
        episode: Episode,
        now: datetime,
    ) -> tuple[Episode, list[Remembered]] | None:
        from soloqueue_mem.lifecycle.digest import remembered_for, still_pending

        conn = self.conn
        last = stretch[-1]["turn_index"]
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ("digest/" + "/".join(key),))
            if not still_pending(pending(conn, key, last), stretch):
                return None
            episode, found = remembered_for(
                episode, drafts, lambda d: memories.remember(conn, d, key.group, key.agent, now)
            )
            insert(conn, episode)
            conn.execute(
                "UPDATE quarantine_logs SET extracted = TRUE, episode_id = %s"
                f" WHERE {_KEY} AND turn_index <= %s AND NOT extracted",
                (episode.id, *key, last),
            )
        return episode, found

    def note_progress(
        self, key: SessionKey, episode: Episode, now: datetime, rewrite: Rewrite | None = None
    ) -> None:
        """The scratchpad updated for the episode (``lifecycle.digest.next_pad``)."""
        from soloqueue_mem.lifecycle.digest import next_pad
        from soloqueue_mem.memory import scratchpad
        from soloqueue_mem.memory.scratchpad import template

        group, agent = key.group, key.agent
        with self.conn.transaction():
            scratchpad.lock(self.conn, group, agent)
            pad = scratchpad.get(self.conn, group, agent, template(self.language)).content
            content = next_pad(pad, episode, self.language, rewrite)
            scratchpad.put(self.conn, group, agent, content, now)
