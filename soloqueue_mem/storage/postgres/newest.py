"""The newest rows matching a ``tsquery``, without reading every match.

Ranking reads each candidate's ``tsvector`` from its row, and reading rows is what
costs at a million turns (a common word matches tens of thousands). The GIN index alone
cannot say which matches are newest; the primary key can bound them. So the matches are
asked for in a range of the newest keys: the planner intersects the GIN bitmap with the
key range's (a ``BitmapAnd``), and only the matches inside the range are read. The
range is sized from the planner's own estimate of the match count (the ``tsvector``
column's statistics), and widened until it holds ``window`` matches or is the whole
table; a term estimated narrow (at most twice ``window``) is read whole at once.
Plain index scans are off for that query (``enable_indexscan``, for its transaction
only): a scan of the key's index, backward or over the range, reads every row in it,
matching or not (a 40,000-row range of memories: 160 ms, against 55 ms as bitmaps).
The setting and the query go as one message of two statements (one implicit
transaction), as do the estimate and the newest key: two round trips a term, not six
(a short-lived process on a loaded machine waits for the server at each one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg

MARGIN = 1.5  # the first range holds this many times the matches it should
WIDEN = 4  # each further range is this much wider


def newest_matches(
    conn: psycopg.Connection,
    table: str,
    key: str,
    phrase: str,
    where: str,
    params: dict[str, Any],
    window: int,
    columns: str = "",
) -> list[tuple[Any, ...]]:
    """``(key, *columns)`` of the ``window`` newest rows of ``table`` (by ``key``, an
    increasing integer) with ``search @@ to_tsquery('simple', phrase)`` and ``where``,
    newest first. ``where`` and ``columns`` use ``%(name)s`` placeholders from
    ``params``; ``table``, ``key``, ``where`` and ``columns`` are trusted SQL. Computing
    the ranking in ``columns`` reads each row once."""
    from psycopg import ClientCursor

    values = {**params, "_phrase": phrase, "_window": window}
    match = f"search @@ to_tsquery('simple', %(_phrase)s) AND {where}"
    with ClientCursor(conn) as cursor:  # binds here: several statements, one round trip
        cursor.execute(
            f"EXPLAIN (FORMAT JSON) SELECT 1 FROM {table} WHERE {match};"  # noqa: S608
            f" SELECT max({key}) FROM {table}",
            values,
        )
        plan = cursor.fetchone()
        estimate = float(plan[0][0]["Plan"]["Plan Rows"]) if plan else 0.0
        cursor.nextset()
        top = cursor.fetchone()
        if top is None or top[0] is None:
            return []
        wide = estimate > 2 * window
        span = max(window, int(top[0] * window / estimate * MARGIN)) if wide else None
        while True:
            low = top[0] - span if span is not None and span < top[0] else None
            bounded = "" if low is None else f" AND {key} > %(_low)s"
            # one implicit transaction (unless the caller's): the setting lapses after the query
            cursor.execute(
                "SELECT set_config('enable_indexscan', 'off', true);"
                f" SELECT {key}{', ' if columns else ''}{columns} FROM {table}"  # noqa: S608
                f" WHERE {match}{bounded}"
                f" ORDER BY {key} DESC LIMIT %(_window)s",
                {**values, "_low": low},
            )
            cursor.nextset()
            rows = cursor.fetchall()
            if len(rows) >= window or low is None:
                return [tuple(row) for row in rows]
            assert span is not None
            span *= WIDEN


def newest_ranked(
    conn: psycopg.Connection,
    table: str,
    key: str,
    phrases: list[str],
    where: str,
    params: dict[str, Any],
    window: int,
    columns: str = "",
) -> dict[Any, tuple[Any, ...]]:
    """The :func:`newest_matches` of each of ``phrases``, by key: each row's ``ts_rank``
    against all of them (any one matching), then its ``columns``."""
    values = {**params, "match": " | ".join(f"({p})" for p in phrases)}
    rank = f"ts_rank(search, to_tsquery('simple', %(match)s)){columns}"
    ranked: dict[Any, tuple[Any, ...]] = {}
    for phrase in phrases:
        for row in newest_matches(conn, table, key, phrase, where, values, window, rank):
            ranked[row[0]] = row[1:]
    return ranked
