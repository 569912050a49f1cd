"""``embedding_cache`` and ``embedded_items`` rows for ``export``/``import``.

Vectors are exported as the stored bytes, so no model (and no numpy) is needed to
move them. A link is put back only beside its vector: a link without one would make
the item look embedded and keep it out of the dense channel for good.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

from soloqueue_mem.db.adapter import Db
from soloqueue_mem.db.ids import put_back_row

if TYPE_CHECKING:
    from soloqueue_mem.db.adapter import Connection


class Cached(NamedTuple):
    model: str
    content_hash: str
    dim: int
    vector: bytes
    created_at: str


class Linked(NamedTuple):
    model: str
    kind: str
    item_id: str
    group: str
    agent: str
    content_hash: str


def cached(conn: Connection) -> Iterator[Cached]:
    """Every cached vector, by model and content hash (either back end: a page at a
    time)."""
    db = Db(conn)
    for model, digest, dim, vector, created_at in db.stream(
        "SELECT model, content_hash, dim, vector, created_at FROM embedding_cache"
        f" ORDER BY {db.bytewise('model')}, {db.bytewise('content_hash')}"
    ):
        yield Cached(model, digest, dim, bytes(vector), created_at)


def linked(conn: Connection) -> list[Linked]:
    """Every item's link to its vector."""
    rows = Db(conn).fetchall(
        "SELECT model, kind, item_id, group_id, agent_id, content_hash FROM embedded_items"
    )
    return [Linked(*row) for row in rows]


def put_back_cached(conn: Connection, row: Cached) -> str:
    """``added``, ``existing`` (the same vector) or ``conflict`` (either back end)."""
    db = Db(conn)
    return put_back_row(
        db,
        "SELECT dim, vector FROM embedding_cache WHERE model = ? AND content_hash = ?",
        (row.model, row.content_hash),
        lambda held: (held[0], bytes(held[1])) == (row.dim, row.vector),
        lambda: db.execute(
            "INSERT INTO embedding_cache (model, content_hash, dim, vector, created_at)"
            " VALUES (?, ?, ?, ?, ?)",
            row,
        ),
    )


def put_back_linked(conn: Connection, row: Linked) -> str:
    """``added``, ``existing``, ``conflict`` (the item is linked to another text) or
    ``missing-vector`` (the store has no vector under that model and hash); either
    back end."""
    db = Db(conn)
    with db.write():
        held = db.fetchone(
            "SELECT content_hash FROM embedded_items WHERE model = ? AND kind = ? AND item_id = ?",
            (row.model, row.kind, row.item_id),
        )
        if held is not None:
            return "existing" if held[0] == row.content_hash else "conflict"
        vector = db.fetchone(
            "SELECT 1 FROM embedding_cache WHERE model = ? AND content_hash = ?",
            (row.model, row.content_hash),
        )
        if vector is None:
            return "missing-vector"
        db.execute(
            "INSERT INTO embedded_items (model, kind, item_id, group_id, agent_id, content_hash)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            row,
        )
    return "added"
