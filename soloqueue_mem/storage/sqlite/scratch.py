"""A dry run's private copy of memory.db (its own module: ``stores`` is on ``log``'s
path, and this imports ``tempfile``)."""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def scratch_copy(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A private copy of ``conn``'s database in the system's temp folder (``conn`` is
    closed), removed when the block ends: a dry run writes there, never to the store."""
    with tempfile.TemporaryDirectory(prefix="soloqueue-consolidate-") as folder:
        try:
            copy = sqlite3.connect(Path(folder) / "memory.db", isolation_level=None)
            conn.backup(copy)
            copy.execute("PRAGMA synchronous = OFF")
        finally:
            conn.close()
        try:
            yield copy
        finally:
            copy.close()
