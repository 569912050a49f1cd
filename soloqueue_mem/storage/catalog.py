"""This host's artifact catalog, artifacts.db. The artifact blobs and their catalog stay
on the local disk whichever back end holds the rest (PostgreSQL too), so the library
and the CLI open the catalog here, and what offloads oversized output to it gets its
connection here.

Imported on ``log``'s path: it imports nothing until called.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    import sqlite3
    from datetime import datetime

    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.sessions.offload import Offloader


def open_catalog(home: Home, config: Config, *, create: bool = True) -> sqlite3.Connection | None:
    """artifacts.db, migrated; None when it does not exist and ``create`` is False."""
    from soloqueue_mem.storage.sqlite.stores import open_artifacts

    return open_artifacts(home, config, create=create)


def offloader(home: Home, config: Config, now: datetime, all_content: bool = False) -> Offloader:
    """What one write (``log``, a hook, an import, ``context build``) offloads oversized
    output with: it opens a connection of its own to the catalog at its first blob, and
    closes it with ``close()``."""
    from soloqueue_mem.sessions.offload import Offloader

    return Offloader(home, config, now, lambda: open_catalog(home, config), all_content)
