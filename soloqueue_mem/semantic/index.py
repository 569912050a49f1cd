"""All SQL for ``embedding_cache`` and ``embedded_items``, and the embedding pass, on
either back end's connection (written once through :class:`soloqueue_mem.db.adapter.Db`).

:func:`embed_items` gives every item a vector under the model: texts whose content
hash is already cached are only linked (nothing is embedded twice), the rest are
embedded in batches, each batch written in its own short transaction. A time budget
stops between batches; the next run carries on where this one stopped. PostgreSQL also
keeps each item's vector in the item's own column (``copy``: storage/postgres/embed.py).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from soloqueue_mem.clock import iso
from soloqueue_mem.db.adapter import Db
from soloqueue_mem.db.ids import in_lists

if TYPE_CHECKING:
    import sqlite3

    import numpy as np

    from soloqueue_mem.semantic.model import Embedder
    from soloqueue_mem.semantic.sketch import Sketch

BATCH = 32  # texts per model call and per write transaction
KINDS = ("memory", "episode", "turn")
Progress = Callable[[int, int], None]  # done, total


class Item(NamedTuple):
    kind: str  # memory (promoted chunks are memories), episode or turn
    id: str
    group: str
    agent: str
    text: str


# Called in the transaction that links ``items`` to their texts' vectors (content hash
# -> stored bytes): PostgreSQL copies each into the item's own column.
Copy = Callable[[list[Item], dict[str, bytes]], None]


class EmbedReport(NamedTuple):
    items: int  # items offered
    current: int  # already linked to a vector of their present text
    linked: int  # linked to a cached vector (same text elsewhere or before)
    embedded: int  # texts run through the model
    remaining: int  # left for the next run (time budget)
    seconds: float

    def as_json(self) -> dict[str, float | int]:
        return self._asdict()


def content_hash(text: str) -> str:
    """The cache key of a text: sha256 of exactly what the model reads."""
    from soloqueue_mem.semantic.model import MAX_CHARS

    return hashlib.sha256(text[:MAX_CHARS].encode("utf-8")).hexdigest()


def pending(conn: Any, model: str, items: Iterable[Item]) -> list[Item]:
    """The items without a vector of their present text under ``model``."""
    items = list(items)
    known = _links(Db(conn), model, {item.kind for item in items})
    return [i for i in items if known.get((i.kind, i.id)) != content_hash(i.text)]


def _links(db: Db, model: str, kinds: Iterable[str]) -> dict[tuple[str, str], str]:
    """The content hash each item of ``kinds`` is linked to under ``model``."""
    known: dict[tuple[str, str], str] = {}
    for kind in sorted(kinds):
        rows = db.execute(
            "SELECT item_id, content_hash FROM embedded_items WHERE model = ? AND kind = ?",
            (model, kind),
        )
        known.update(((kind, item_id), digest) for item_id, digest in rows)
    return known


def cached_vectors(conn: Any, model: str, hashes: list[str]) -> dict[str, bytes]:
    """The stored bytes of the texts among ``hashes`` that ``model`` has embedded."""
    found: dict[str, bytes] = {}
    db = Db(conn)
    for marks, part in in_lists(hashes):
        rows = db.execute(
            "SELECT content_hash, vector FROM embedding_cache"  # noqa: S608 - marks only
            f" WHERE model = :model AND content_hash IN ({marks})",
            {"model": model, **part},
        )
        found.update((digest, bytes(vector)) for digest, vector in rows)
    return found


_LINK_SQL = """
INSERT INTO embedded_items (model, kind, item_id, group_id, agent_id, content_hash)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (model, kind, item_id) DO UPDATE SET content_hash = excluded.content_hash
"""
_CACHE_SQL = """
INSERT INTO embedding_cache (model, content_hash, dim, vector, created_at)
VALUES (?, ?, ?, ?, ?) ON CONFLICT (model, content_hash) DO NOTHING
"""


def _link(
    db: Db, model: str, items: list[Item], vectors: dict[str, bytes], copy: Copy | None
) -> None:
    db.executemany(
        _LINK_SQL,
        [(model, i.kind, i.id, i.group, i.agent, content_hash(i.text)) for i in items],
    )
    if copy is not None:
        copy(items, vectors)


def embed_items(
    conn: Any,
    embedder: Embedder,
    items: Iterable[Item],
    now: datetime,
    deadline: float | None = None,
    progress: Progress | None = None,
    copy: Copy | None = None,
) -> EmbedReport:
    """Vectors for ``items`` (see the module doc); ``deadline`` is a
    ``time.monotonic()`` value after which no new batch starts."""
    import numpy as np

    db = Db(conn)
    started = time.monotonic()
    items = list(items)
    known = _links(db, embedder.name, {item.kind for item in items})
    todo = [i for i in items if known.get((i.kind, i.id)) != content_hash(i.text)]
    cached = cached_vectors(conn, embedder.name, sorted({content_hash(i.text) for i in todo}))
    ready = [i for i in todo if content_hash(i.text) in cached]
    if ready:
        with db.write():
            _link(db, embedder.name, ready, cached, copy)
    by_hash: dict[str, list[Item]] = {}  # each new text is embedded once
    for item in todo:
        if content_hash(item.text) not in cached:
            by_hash.setdefault(content_hash(item.text), []).append(item)
    order = [(digest, group[0].text) for digest, group in by_hash.items()]
    embedded = 0
    for start in range(0, len(order), BATCH):
        if deadline is not None and time.monotonic() >= deadline:
            break
        batch = order[start : start + BATCH]
        rows = np.ascontiguousarray(embedder.passages([text for _, text in batch]), dtype="<f4")
        made = {digest: rows[n].tobytes() for n, (digest, _) in enumerate(batch)}
        with db.write():
            stamp = iso(now)
            db.executemany(
                _CACHE_SQL,
                [
                    (embedder.name, digest, rows.shape[1], vector, stamp)
                    for digest, vector in made.items()
                ],
            )
            _link(db, embedder.name, [i for digest in made for i in by_hash[digest]], made, copy)
        embedded += len(batch)
        if progress:
            progress(embedded, len(order))
    return EmbedReport(
        items=len(items),
        current=len(items) - len(todo),
        linked=len(ready),
        embedded=embedded,
        remaining=len(order) - embedded,
        seconds=round(time.monotonic() - started, 3),
    )


class Matrix(NamedTuple):
    keys: Sequence[tuple[str, str]]  # (kind, item id), one per row
    vectors: np.ndarray  # (n, dim) float32
    sketch: Sketch | None = None  # the rows' sign sketch (the mapped copy keeps one)


def matrix(
    conn: sqlite3.Connection,
    model: str,
    kinds: Iterable[str],
    group: str | None = None,
    agent: str | None = None,
) -> Matrix:
    """Every vector of ``kinds`` under ``model`` in the scope, as one matrix, read from
    SQLite (:mod:`.mapped` keeps a faster copy for stores on disk)."""
    keys, vectors = scoped_rows(conn, model, kinds, group, agent)
    return Matrix([(kind, item_id) for kind, item_id, _, _ in keys], vectors)


def scoped_rows(
    conn: sqlite3.Connection,
    model: str,
    kinds: Iterable[str] = KINDS,
    group: str | None = None,
    agent: str | None = None,
) -> tuple[list[tuple[str, str, str, str]], np.ndarray]:
    """``(kind, item id, group, agent)`` and the vector of every item in the scope,
    ordered by kind and item id."""
    import numpy as np

    clauses = ["i.model = ?"]
    params: list[str] = [model]
    kinds = list(kinds)
    clauses.append(f"i.kind IN ({','.join('?' * len(kinds))})")
    params += kinds
    for column, value in (("group_id", group), ("agent_id", agent)):
        if value is not None:
            clauses.append(f"i.{column} = ?")
            params.append(value)
    rows = conn.execute(
        "SELECT i.kind, i.item_id, i.group_id, i.agent_id, c.dim, c.vector"  # noqa: S608
        " FROM embedded_items AS i"
        " JOIN embedding_cache AS c ON c.model = i.model AND c.content_hash = i.content_hash"
        f" WHERE {' AND '.join(clauses)} ORDER BY i.kind, i.item_id",
        params,
    ).fetchall()
    if not rows:
        return [], np.zeros((0, 0), dtype=np.float32)
    dim = rows[0][4]
    flat = np.frombuffer(b"".join(row[5] for row in rows), dtype="<f4")
    return [row[:4] for row in rows], flat.reshape(len(rows), dim)


def counts(conn: Any, model: str) -> dict[str, int]:
    """How many items of each kind have a vector under ``model``."""
    rows = Db(conn).execute(
        "SELECT kind, count(*) FROM embedded_items WHERE model = ? GROUP BY kind", (model,)
    )
    return {kind: int(count) for kind, count in rows}
