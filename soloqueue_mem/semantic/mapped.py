"""A memory-mapped copy of one model's vectors: derived, in the store's cache folder.

Reading 100k vectors out of SQLite BLOBs takes about a second (150 MB); the same
matrix in a ``.npy`` file is mapped in a millisecond and the page cache keeps it warm
between processes. The copy lives in ``cache/vectors/<model>/<state>/`` (``Home.cache_dir``
of the store that holds memory.db), rows in the order ``index.matrix`` reads them:

* ``vectors.npy`` (n, dim) float32, and ``kinds.npy``, ``ids.npy``, ``groups.npy``,
  ``agents.npy``: each row's item and scope;
* ``signs.npy`` and ``centre.npy``: the vectors' sign sketch (:mod:`.sketch`), through
  which a search of a large copy reads 1/32 of the floats;
* ``<state>`` is ``<version>.<FORMAT>``: the model's version in ``embedding_versions``,
  a new random one on every write to the model's vectors or links (triggers, see
  :func:`soloqueue_mem.semantic.schema.m016_version_embeddings`), so a search reads
  one row to know whether its copy is current, and a stale copy is never read (another
  database put in place of this one, a backup restored, holds another version). The
  next search after a change builds the new copy beside the old one (into a temporary
  folder, renamed into place) and removes the old.

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

from soloqueue_mem.errors import StorageError
from soloqueue_mem.home import Home, make_private_dirs

if TYPE_CHECKING:
    from soloqueue_mem.semantic.index import Matrix

COLUMNS = ("kinds", "ids", "groups", "agents")
# The files' layout, in the folder's name: a copy written by an older layout (without
# the sketch) is another state, rebuilt and removed as a stale one is.
FORMAT = "s1"


def folder(conn: sqlite3.Connection, model: str) -> Path | None:
    """Where the copies of ``model`` live; None for a database without a file."""
    cache = cache_dir(conn)
    if cache is None:
        return None
    slug = hashlib.sha256(model.encode("utf-8")).hexdigest()[:16]
    return Path(cache, "vectors", slug)


def cache_dir(conn: sqlite3.Connection) -> str | None:
    """The cache folder of the store whose memory.db ``conn`` holds; None for a
    database without a file."""
    for _, name, path in conn.execute("PRAGMA database_list"):
        if name == "main" and path:
            return Home(os.path.dirname(path)).cache_dir
    return None


class Keys(Sequence[tuple[str, str]]):
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

    def at(self, rows: Any) -> list[tuple[str, str]]:
        """The keys of ``rows`` (an array of row numbers), one read of each column."""
        return list(zip(self._kinds[rows].tolist(), self._ids[rows].tolist(), strict=True))


def _state(conn: sqlite3.Connection, model: str) -> str | None:
    """The model's version and the copy's layout; None when it has no vectors."""
    row = conn.execute(
        "SELECT version FROM embedding_versions WHERE model = ?", (model,)
    ).fetchone()
    return None if row is None else f"{row[0]}.{FORMAT}"


def load(conn: sqlite3.Connection, model: str, kinds: tuple[str, ...], group: str | None,
         agent: str | None) -> Matrix | None:  # fmt: skip
    """The scope's rows of the current copy, built first when missing or stale; None
    when the store has no folder for it (an in-memory database) or cannot write it."""
    from soloqueue_mem.semantic.index import Matrix

    current = refresh(conn, model)
    if current is None:
        return None
    from soloqueue_mem.semantic.sketch import Sketch

    opened = _open(current)
    rows = opened.rows(tuple(sorted(kinds)), group, agent)
    columns = opened.columns
    if rows is None:
        return Matrix(
            Keys(columns["kinds"], columns["ids"]),
            columns["vectors"],
            Sketch(columns["signs"], columns["centre"]),
        )
    return Matrix(
        Keys(columns["kinds"][rows], columns["ids"][rows]),
        columns["vectors"][rows],
        Sketch(columns["signs"][rows], columns["centre"]),
    )


class _Opened:
    """A copy's mapped arrays and the rows of each scope asked so far: a warm process
    (``serve``, ``mcp``, the ``Store`` API) searches the same copy again and again, and
    opening five files and comparing 100k strings cost more than the search itself."""

    SCOPES = 64  # row selections kept per copy (a few hundred KB each at 100k rows)

    def __init__(self, folder: Path) -> None:
        import numpy as np

        self.folder = folder
        self.columns = {
            name: np.load(folder / f"{name}.npy", mmap_mode="r")
            for name in (*COLUMNS, "vectors", "signs", "centre")
        }
        self._rows: dict[tuple[tuple[str, ...], str | None, str | None], Any] = {}

    def rows(self, kinds: tuple[str, ...], group: str | None, agent: str | None) -> Any:
        """The row numbers in scope; None for every row."""
        key = (kinds, group, agent)
        if key not in self._rows:
            import numpy as np

            mask = np.isin(self.columns["kinds"], list(kinds))
            for name, value in (("groups", group), ("agents", agent)):
                if value is not None:
                    mask &= self.columns[name] == value
            if len(self._rows) >= self.SCOPES:
                self._rows.clear()
            self._rows[key] = None if mask.all() else np.flatnonzero(mask)
        return self._rows[key]


_opened: dict[Path, _Opened] = {}  # a model's folder -> its current copy, opened


def _open(current: Path) -> _Opened:
    """The copy in ``current``, opened once per process (its folder names its state,
    so an opened copy never goes stale: a change makes another folder)."""
    opened = _opened.get(current.parent)
    if opened is None or opened.folder != current:
        opened = _opened[current.parent] = _Opened(current)
    return opened


def refresh(conn: sqlite3.Connection, model: str) -> Path | None:
    """The folder of the current copy, built when missing (``embed_store`` calls this
    after a pass, so a search rarely pays for it); None when there is none."""
    root = folder(conn, model)
    if root is None:
        return None
    state = _state(conn, model)
    if state is None:
        return None
    current = root / state
    if current.is_dir() or _build(conn, model, root, current):
        return current
    return None


def _build(conn: sqlite3.Connection, model: str, root: Path, target: Path) -> bool:
    """Write the copy of the state ``target`` names; False when the folder is not
    writable (the caller then reads SQLite)."""
    import numpy as np

    from soloqueue_mem.semantic.index import scoped_rows
    from soloqueue_mem.semantic.sketch import build

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
        make_private_dirs(root)  # 0700 like the data directory, no symlink followed
        scratch = Path(tempfile.mkdtemp(prefix=".build-", dir=root))
    except (OSError, StorageError):
        return False
    try:
        for name, values in zip(COLUMNS, zip(*keys, strict=True), strict=True):
            np.save(scratch / f"{name}.npy", np.array(values, dtype=str))
        np.save(scratch / "vectors.npy", vectors)
        signs, centre = build(vectors)
        np.save(scratch / "signs.npy", signs)
        np.save(scratch / "centre.npy", centre)
        os.rename(scratch, target)
    except OSError:  # another process renamed its copy first, or the disk is full
        shutil.rmtree(scratch, ignore_errors=True)
        return target.is_dir()
    for old in root.iterdir():
        if old != target and not old.name.startswith(".build-"):
            shutil.rmtree(old, ignore_errors=True)
    return True
