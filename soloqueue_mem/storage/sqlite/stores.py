"""Open the store's databases by name, with the settings from config."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from soloqueue_mem.config import Config
from soloqueue_mem.db.connect import Deferred, Migration, open_db
from soloqueue_mem.home import Home

# len(schema_memory.MIGRATIONS): opening a memory.db at this version imports none of
# them (``log`` opens it on every call). Bump it with each new migration (a test checks).
MEMORY_HEAD = 15
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
