"""A memory-mapped copy of one model's vectors: derived, in the store's cache folder.

Reading 100k vectors out of SQLite BLOBs takes about a second (150 MB); the same
matrix in a ``.npy`` file is mapped in a millisecond and the page cache keeps it warm
between processes. The copy lives in ``cache/vectors/<model>/<state>/`` (``Home.cache_dir``
of the store that holds memory.db), rows in the order ``index.matrix`` reads them:

* ``vectors.npy`` (n, dim) float32, and ``kinds.npy``, ``ids.npy``, ``groups.npy``,
  ``agents.npy``: each row's item and scope;
* ``<state>`` names what it was built from — the number of linked items, the count
  and highest rowid of the model's ``embedding_cache`` rows, and a digest of the
  first and last links and the newest vector's text (so another database with the
  same counts, a backup restored in place, names another state). Embedding a new text
  or linking a new item changes it, so a stale copy is never read: the next search builds
  the new one beside it (into a temporary folder, renamed into place) and removes the
  old. The one change the state does not show, an item re-linked to a text already
  cached (an edit back to an earlier text), removes the copies (:func:`drop`).

Everything here is rebuilt from memory.db; deleting the folder is always safe.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from soloqueue_mem.home import Home

if TYPE_CHECKING:
    from soloqueue_mem.semantic.index import Matrix

COLUMNS = ("kinds", "ids", "groups", "agents")


def folder(conn: sqlite3.Connection, model: str) -> Path | None:
    """Where the copies of ``model`` live; None for a database without a file."""
    for _, name, path in conn.execute("PRAGMA database_list"):
        if name == "main" and path:
            slug = hashlib.sha256(model.encode("utf-8")).hexdigest()[:16]
            return Path(Home(os.path.dirname(path)).cache_dir, "vectors", slug)
    return None


class _Keys(Sequence[tuple[str, str]]):
    """``(kind, item id)`` of each row, read from the mapped columns only when asked
    (a search looks at its best rows, not at 100k)."""

    def __init__(self, kinds: Any, ids: Any) -> None:
        self._kinds, self._ids = kinds, ids

    def __len__(self) -> int:
        return len(self._ids)

    def __getitem__(self, n: Any) -> Any:
        if isinstance(n, slice):
            return [self[i] for i in range(*n.indices(len(self)))]
        return (str(self._kinds[n]), str(self._ids[n]))


def _state(conn: sqlite3.Connection, model: str) -> str:
    (items,) = conn.execute(
        "SELECT count(*) FROM embedded_items WHERE model = ?", (model,)
    ).fetchone()
    rows, highest = conn.execute(
        "SELECT count(*), max(rowid) FROM embedding_cache WHERE model = ?", (model,)
    ).fetchone()
    return f"{items}-{rows}-{highest or 0}-{_edges(conn, model, highest)}"


def _edges(conn: sqlite3.Connection, model: str, highest: int | None) -> str:
    """A digest of the first and last link and the newest vector's text: equal counts
    in another database (a backup restored, a store imported in place of this one)
    hold other items, so their copy is not this one's."""
    links = [
        conn.execute(
            "SELECT kind, item_id, content_hash FROM embedded_items WHERE model = ?"  # noqa: S608
            f" ORDER BY kind {order}, item_id {order} LIMIT 1",
            (model,),
        ).fetchone()
        for order in ("ASC", "DESC")
    ]
    newest = conn.execute(  # by rowid: a scan from the end would read other models' rows
        "SELECT content_hash FROM embedding_cache WHERE rowid = ?", (highest,)
    ).fetchone()
    return hashlib.sha256(repr((links, newest)).encode("utf-8")).hexdigest()[:12]


def load(conn: sqlite3.Connection, model: str, kinds: tuple[str, ...], group: str | None,
         agent: str | None) -> Matrix | None:  # fmt: skip
    """The scope's rows of the current copy, built first when missing or stale; None
    when the store has no folder for it (an in-memory database) or cannot write it."""
    import numpy as np

    from soloqueue_mem.semantic.index import Matrix

    current = refresh(conn, model)
    if current is None:
        return None
    columns = {name: np.load(current / f"{name}.npy", mmap_mode="r") for name in COLUMNS}
    vectors = np.load(current / "vectors.npy", mmap_mode="r")
    mask = np.isin(columns["kinds"], list(kinds))
    for name, value in (("groups", group), ("agents", agent)):
        if value is not None:
            mask &= columns[name] == value
    if mask.all():
        return Matrix(_Keys(columns["kinds"], columns["ids"]), vectors)
    rows = np.flatnonzero(mask)
    return Matrix(_Keys(columns["kinds"][rows], columns["ids"][rows]), vectors[rows])


def refresh(conn: sqlite3.Connection, model: str) -> Path | None:
    """The folder of the current copy, built when missing (``embed_store`` calls this
    after a pass, so a search rarely pays for it); None when there is none."""
    root = folder(conn, model)
    if root is None:
        return None
    current = root / _state(conn, model)
    if current.is_dir() or _build(conn, model, root, current):
        return current
    return None


def _build(conn: sqlite3.Connection, model: str, root: Path, target: Path) -> bool:
    """Write the copy of the state ``target`` names; False when the folder is not
    writable (the caller then reads SQLite)."""
    import numpy as np

    from soloqueue_mem.semantic.index import scoped_rows

    opened = not conn.in_transaction
    if opened:
        conn.execute("BEGIN")  # one read snapshot: the state and the rows agree
    try:
        state = _state(conn, model)
        keys, vectors = scoped_rows(conn, model)
    finally:
        if opened:
            conn.execute("COMMIT")
    if state != target.name or not keys:
        return False  # written meanwhile (read SQLite this once), or nothing to map
    try:
        root.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=".build-", dir=root))
    except OSError:
        return False
    try:
        for name, values in zip(COLUMNS, zip(*keys, strict=True), strict=True):
            np.save(scratch / f"{name}.npy", np.array(values, dtype=str))
        np.save(scratch / "vectors.npy", vectors)
        os.rename(scratch, target)
    except OSError:  # another process renamed its copy first, or the disk is full
        shutil.rmtree(scratch, ignore_errors=True)
        return target.is_dir()
    for old in root.iterdir():
        if old != target and not old.name.startswith(".build-"):
            shutil.rmtree(old, ignore_errors=True)
    return True


def drop(conn: sqlite3.Connection, model: str) -> None:
    """Remove every copy of ``model`` (the next search builds a fresh one)."""
    root = folder(conn, model)
    if root is not None:
        shutil.rmtree(root, ignore_errors=True)
