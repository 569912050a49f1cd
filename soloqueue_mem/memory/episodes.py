"""All SQL for ``episodes``, written once for both back ends (:mod:`soloqueue_mem.db.adapter`),
and its FTS5 index; PostgreSQL's full-text index (the ``search`` column) is its
:class:`FullText` in :mod:`soloqueue_mem.storage.postgres.episodes`."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from soloqueue_mem import jsonio
from soloqueue_mem.db.adapter import Connection, Db
from soloqueue_mem.db.ids import in_lists, put_back_row, row_by_prefix, scope_where
from soloqueue_mem.memory import fts_index
from soloqueue_mem.sessions.events import SessionKey
from soloqueue_mem.text.cjk import index_form
from soloqueue_mem.text.fts import match_expression
from soloqueue_mem.tuples import Any, NamedTuple, Protocol


class Episode(NamedTuple):
    id: str
    group: str
    agent: str
    session: str
    summary: str
    goal: str
    outcome: str  # success, partial, failed or ongoing
    started_at: str
    ended_at: str
    action_nodes: list[dict[str, Any]]
    entities: list[str]
    tools_used: list[str]
    linked_memory_ids: list[str]
    tags: list[str]
    importance: float
    access_count: int
    source: str  # session_end, context_compress or consolidate
    first_turn: int
    last_turn: int
    created_at: str


COLUMNS = (
    "id, group_id, agent_id, session_id, summary, goal, outcome, started_at, ended_at, "
    "action_nodes, entities, tools_used, linked_memory_ids, tags, importance_score, "
    "access_count, source, first_turn, last_turn, created_at"
)
_JSON_FIELDS = (9, 10, 11, 12, 13)


def _episode(row: tuple[Any, ...]) -> Episode:
    values = list(row)
    for i in _JSON_FIELDS:
        values[i] = jsonio.loads(values[i])
    return Episode(*values)


def stored_values(episode: Episode) -> list[Any]:
    """The episode's columns as stored (its lists as JSON), in ``COLUMNS``' order."""
    values: list[Any] = list(episode)
    for i in _JSON_FIELDS:
        values[i] = jsonio.dumps_compact(values[i])
    return values


class FullText(Protocol):
    """How a back end's full-text index of episodes follows the table."""

    order: str  # the column that orders rows as they were inserted

    def insert(self, db: Db, values: list[Any], episode: Episode) -> None:
        """Insert ``episode`` (its ``stored_values``) and index it."""
        ...

    def search(
        self, db: Db, terms: list[str], filters: EpisodeFilters, limit: int
    ) -> list[tuple[Episode, float]]:
        """Episodes matching any of ``terms``, best first, with their scores."""
        ...


class Fts5:
    """:class:`FullText` on memory.db: the ``episodes_fts`` table, by rowid."""

    order = "rowid"

    def insert(self, db: Db, values: list[Any], episode: Episode) -> None:
        rowid = db.insert(
            f"INSERT INTO episodes ({COLUMNS}) VALUES ({', '.join('?' * len(values))})",  # noqa: S608
            values,
        )
        _index(db.conn, rowid, episode)

    def search(
        self, db: Db, terms: list[str], filters: EpisodeFilters, limit: int
    ) -> list[tuple[Episode, float]]:
        match = match_expression(terms)
        return [] if match is None else search(db.conn, match, filters, limit)


FTS5 = Fts5()


def insert(conn: Connection, episode: Episode, index: FullText = FTS5) -> None:
    """Store ``episode`` and index it (``index``: the back end's full-text index)."""
    index.insert(Db(conn), stored_values(episode), episode)


def _index(conn: sqlite3.Connection, rowid: int | None, episode: Episode) -> None:
    conn.execute(
        "INSERT INTO episodes_fts (rowid, summary, goal, entities, tools) VALUES (?, ?, ?, ?, ?)",
        (
            rowid,
            index_form(episode.summary),
            index_form(episode.goal),
            index_form(" ".join([*episode.entities, *episode.tags])),
            " ".join(episode.tools_used),
        ),
    )


def rebuild_fts(conn: sqlite3.Connection) -> int:
    """Re-create the episode index from the table (inside the caller's write
    transaction); return the number of episodes indexed."""
    return fts_index.rebuild(
        conn, "episodes", COLUMNS, lambda conn, rowid, row: _index(conn, rowid, _episode(row))
    )


def link_memories(conn: Connection, episode_id: str, memory_ids: list[str]) -> None:
    Db(conn).execute(
        "UPDATE episodes SET linked_memory_ids = ? WHERE id = ?",
        (jsonio.dumps_compact(memory_ids), episode_id),
    )


def covering(conn: Connection, key: SessionKey, source: str, last_turn: int) -> Episode | None:
    """The episode of ``source`` that already covers the session up to ``last_turn``."""
    row = Db(conn).fetchone(
        f"SELECT {COLUMNS} FROM episodes WHERE group_id = ? AND agent_id = ?"  # noqa: S608
        " AND session_id = ? AND source = ? AND last_turn = ? LIMIT 1",
        (key.group, key.agent, key.session, source, last_turn),
    )
    return _episode(row) if row else None


class EpisodeFilters(NamedTuple):
    group: str | None = None
    agent: str | None = None
    session: str | None = None
    since: str | None = None  # ended at or after


def where(filters: EpisodeFilters) -> tuple[str, dict[str, Any]]:
    """The SQL condition (``:name`` marks) of ``filters`` and its parameters."""
    columns = {"group": "group_id", "agent": "agent_id", "session": "session_id"}
    clauses = [
        f"episodes.{col} = :{name}" for name, col in columns.items() if getattr(filters, name)
    ]
    if filters.since:
        clauses.append("episodes.ended_at >= :since")
    return " AND ".join(clauses) or "TRUE", filters._asdict()


def list_episodes(
    conn: Connection,
    filters: EpisodeFilters,
    limit: int,
    index: FullText = FTS5,
    oldest: bool = False,
) -> list[Episode]:
    """Episodes, most recently ended first (``oldest``: the earliest ended first)."""
    condition, params = where(filters)
    order = "ASC" if oldest else "DESC"
    rows = Db(conn).fetchall(
        f"SELECT {COLUMNS} FROM episodes WHERE {condition}"  # noqa: S608 - fixed fragments
        f" ORDER BY ended_at {order}, {index.order} {order} LIMIT :limit",
        {**params, "limit": limit},
    )
    return [_episode(row) for row in rows]


def get(conn: Connection, ref: str) -> Episode:
    """The episode with id ``ref`` or the only one whose id starts with it."""
    return _episode(row_by_prefix(conn, "episodes", COLUMNS, ref, "episode"))


def search(
    conn: sqlite3.Connection, match: str, filters: EpisodeFilters, limit: int
) -> list[tuple[Episode, float]]:
    """Episodes matching an FTS5 expression, best BM25 first (higher is better)."""
    condition, params = where(filters)
    qualified = ", ".join(f"episodes.{name}" for name in COLUMNS.split(", "))
    rows = conn.execute(
        f"""SELECT {qualified}, -bm25(episodes_fts) AS score
            FROM episodes_fts JOIN episodes ON episodes.rowid = episodes_fts.rowid
            WHERE episodes_fts MATCH :match AND {condition}
            ORDER BY score DESC, episodes.ended_at DESC LIMIT :limit""",  # noqa: S608
        {**params, "match": match, "limit": limit},
    )
    return [(_episode(row[:-1]), float(row[-1])) for row in rows]


def touch(conn: Connection, ids: list[str]) -> None:
    """Count a retrieval: ``access_count`` + 1."""
    if not ids:
        return
    db = Db(conn)
    with db.write():
        db.executemany(
            "UPDATE episodes SET access_count = access_count + 1 WHERE id = ?", [(i,) for i in ids]
        )


def matching_ids(
    conn: sqlite3.Connection, ids: list[str], filters: EpisodeFilters
) -> dict[str, Episode]:
    """The episodes among ``ids`` that match ``filters``, by id (the dense channel)."""
    condition, params = where(filters)
    found: dict[str, Episode] = {}
    for marks, part in in_lists(ids):
        rows = conn.execute(
            f"SELECT {COLUMNS} FROM episodes WHERE {condition}"  # noqa: S608 - fixed fragments
            f" AND episodes.id IN ({marks})",
            {**params, **part},
        )
        found.update((row[0], _episode(row)) for row in rows)
    return found


def every(
    conn: Connection, group: str | None = None, agent: str | None = None, index: FullText = FTS5
) -> Iterator[Episode]:
    """Every episode of ``group`` and ``agent`` (None: of any), oldest row first, read a
    page at a time (export)."""
    where, params = scope_where(group, agent)
    sql = f"SELECT {COLUMNS} FROM episodes WHERE {where} ORDER BY {index.order}"  # noqa: S608
    return map(_episode, Db(conn).stream(sql, params))


def put_back(conn: Connection, episode: Episode, index: FullText = FTS5) -> str:
    """Put back an exported episode: ``added``, ``existing`` or ``conflict``."""
    db = Db(conn)
    return put_back_row(
        db,
        f"SELECT {COLUMNS} FROM episodes WHERE id = ?",  # noqa: S608
        (episode.id,),
        lambda held: _episode(held) == episode,
        lambda: index.insert(db, stored_values(episode), episode),
    )
