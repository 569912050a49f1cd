"""Rows found by an id or a unique prefix of it, the way git finds commits, and rows
put back under their id (import)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from soloqueue_mem.db.adapter import Db
from soloqueue_mem.errors import BadInput, NotFound, UsageError

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import Any

    from soloqueue_mem.db.adapter import Connection

MIN_PREFIX = 4
_HEX = frozenset("0123456789abcdef")


def scope_where(group: str | None, agent: str | None, table: str = "") -> tuple[str, list[str]]:
    """SQL (``?`` marks, see :class:`soloqueue_mem.db.adapter.Db`): a row (of the
    ``table`` alias, when a join names one) is of ``group`` and ``agent`` (None: of any),
    and its parameters."""
    prefix = f"{table}." if table else ""
    clauses, params = ["1 = 1"], []
    for column, value in (("group_id", group), ("agent_id", agent)):
        if value is not None:
            clauses.append(f"{prefix}{column} = ?")
            params.append(value)
    return " AND ".join(clauses), params


def checked_ref(ref: str, kind: str) -> str:
    """``ref`` lower-cased when it can be an id or an id's prefix; BadInput if not."""
    ref = ref.strip().lower()
    if len(ref) < MIN_PREFIX or not set(ref) <= _HEX:
        article = "an" if kind[:1] in "aeiou" else "a"  # an episode, a memory
        raise BadInput(
            f"not {article} {kind} id: {ref!r} (32 hex digits, or a prefix of {MIN_PREFIX}+)"
        )
    return ref


def row_by_prefix(
    conn: Connection, table: str, columns: str, ref: str, kind: str
) -> tuple[Any, ...]:
    """The row of ``table`` whose hex ``id`` is ``ref`` or the only one starting with it
    (on either back end: hex digits sort alike in every collation).

    ``table`` and ``columns`` are constants of the calling module, never user input.
    """
    ref = checked_ref(ref, kind)
    rows = Db(conn).fetchall(
        f"SELECT {columns} FROM {table} WHERE id >= ? AND id < ? ORDER BY id LIMIT 2",  # noqa: S608
        (ref, ref + "g"),
    )
    return only_row(rows, ref, kind)


def only_row(rows: list[Any], ref: str, kind: str) -> Any:
    """The one row an id prefix ``ref`` found: NotFound for none, UsageError for more."""
    if not rows:
        raise NotFound(f"no {kind} {ref}")
    if len(rows) > 1:
        raise UsageError(f"{kind} id prefix {ref} is ambiguous; give more digits")
    return rows[0]


def in_lists(values: list[str], size: int = 500) -> Iterator[tuple[str, dict[str, str]]]:
    """``values`` in slices for ``IN (…)``: each slice's ``:v0,:v1,…`` placeholders and
    their named parameters (SQLite caps the number of parameters of one statement)."""
    for start in range(0, len(values), size):
        params = {f"v{n}": value for n, value in enumerate(values[start : start + size])}
        yield ",".join(f":{name}" for name in params), params


def put_back_row(
    db: Db,
    select: str,
    key: Sequence[Any],
    same: Callable[[tuple[Any, ...]], bool],
    insert: Callable[[], object],
) -> str:
    """Put back an exported row in one write transaction: ``existing`` when ``select``
    finds a row under ``key`` that is the ``same``, ``conflict`` when it finds another,
    else ``insert`` it and ``added`` (import's verdicts)."""
    with db.write():
        held = db.fetchone(select, key)
        if held is not None:
            return "existing" if same(held) else "conflict"
        insert()
    return "added"
