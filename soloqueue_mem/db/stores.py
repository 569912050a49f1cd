"""Open the store's databases by name, with the settings from config."""

from __future__ import annotations

import sqlite3

from soloqueue_mem.config import Config
from soloqueue_mem.db.connect import open_db
from soloqueue_mem.home import Home


def open_memory(home: Home, config: Config, *, create: bool = True) -> sqlite3.Connection | None:
    """memory.db (turns, memories, FTS). With ``create=False`` a missing store gives None."""
    from soloqueue_mem.db.schema_memory import MIGRATIONS

    if create:
        home.ensure()
    elif not home.exists():
        return None
    else:
        home.check_safe()
    return open_db(
        home.memory_db,
        MIGRATIONS,
        durability=config.durability,
        busy_timeout_ms=config.busy_timeout_ms,
        create=create,
    )
