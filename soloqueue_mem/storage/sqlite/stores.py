"""Open the store's databases by name, with the settings from config."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Sequence

from soloqueue_mem.config import Config
from soloqueue_mem.db.connect import Deferred, Migration, open_db, read_only_uri, writable
from soloqueue_mem.home import Home

# len(schema_memory.MIGRATIONS): opening a memory.db at this version imports none of
# them (``log`` opens it on every call). Bump it with each new migration (a test checks).
MEMORY_HEAD = 27
GRAPH_HEAD = 1  # len(schema_graph.MIGRATIONS), the same for ``graph remember``


def _memory_migrations() -> Sequence[Migration]:
    from soloqueue_mem.storage.sqlite.schema_memory import MIGRATIONS

    return MIGRATIONS


def _graph_migrations() -> Sequence[Migration]:
    from soloqueue_mem.storage.sqlite.schema_graph import MIGRATIONS

    return MIGRATIONS


def open_memory(home: Home, config: Config, *, create: bool = True) -> sqlite3.Connection | None:
    """memory.db (turns, memories, FTS). With ``create=False`` a missing store gives None."""
    return _open(home, home.memory_db, Deferred(MEMORY_HEAD, _memory_migrations), config, create)


def open_artifacts(home: Home, config: Config, *, create: bool = True) -> sqlite3.Connection | None:
    """artifacts.db (the L4 catalog). With ``create=False`` a missing file gives None."""
    from soloqueue_mem.storage.sqlite.schema_artifacts import MIGRATIONS

    return _open(home, home.artifacts_db, MIGRATIONS, config, create)


def open_state(home: Home, config: Config, *, create: bool = True) -> sqlite3.Connection | None:
    """state.db (the extraction queue). With ``create=False`` a missing file gives None."""
    from soloqueue_mem.storage.sqlite.schema_state import MIGRATIONS

    return _open(home, home.state_db, MIGRATIONS, config, create)


def state_opener(home: Home, config: Config) -> Callable[[], sqlite3.Connection]:
    """Opens state.db, created if missing, when first called (the model's queue of
    failed turns is opened only when a turn fails)."""

    def opened() -> sqlite3.Connection:
        conn = open_state(home, config)
        assert conn is not None  # opened with create=True
        return conn

    return opened


def open_graph(home: Home, config: Config, *, create: bool = True) -> sqlite3.Connection | None:
    """graph.db (seed 002's associative graphs). With ``create=False`` a missing file
    gives None."""
    return _open(home, home.graph_db, Deferred(GRAPH_HEAD, _graph_migrations), config, create)


def _open(
    home: Home,
    path: str,
    migrations: Sequence[Migration] | Deferred,
    config: Config,
    create: bool,
) -> sqlite3.Connection | None:
    if create:
        home.ensure()
    elif not home.exists():
        return None
    else:
        home.check_safe()
    return open_db(
        path,
        migrations,
        durability=config.durability,
        busy_timeout_ms=config.busy_timeout_ms,
        create=create,
    )


def open_read_only(path: str) -> sqlite3.Connection | None:
    """``path`` opened read-only (``mode=ro``), for a report that writes nothing (no
    migration, no ``-wal``); None when there is no such file."""
    if not os.path.exists(path):
        return None
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def open_query_only(path: str, busy_timeout_ms: int) -> sqlite3.Connection:
    """A connection that cannot write, for ``verify``. A read-write open made query-only
    is preferred to ``mode=ro``: as the last connection to close it removes the
    ``-wal``/``-shm`` files, where a read-only one would leave them behind. A store that
    cannot be written (a read-only copy) is opened read-only (``immutable=1`` without a
    ``-wal`` file: no ``-shm`` can be created there)."""
    timeout = busy_timeout_ms / 1000
    uri = f"file:{path}" if writable(path) else read_only_uri(path)
    conn = sqlite3.connect(uri, uri=True, timeout=timeout)
    conn.execute("PRAGMA query_only = ON")
    conn.execute("PRAGMA trusted_schema = OFF")
    return conn
