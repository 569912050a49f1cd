"""The storage back ends beneath the library: SQLite (the default) and PostgreSQL.

:class:`~soloqueue_mem.storage.base.Backend` is what a back end offers the library;
:class:`~soloqueue_mem.storage.sqlite.backend.SqliteBackend` reaches the data
directory's files through the domain functions, :class:`~soloqueue_mem.storage.
postgres.backend.PostgresBackend` a database. :func:`open_backend` picks one.
"""

from __future__ import annotations

from soloqueue_mem.storage.url import database_url

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.storage.base import Backend


def open_backend(home: Home, config: Config) -> Backend:
    """The PostgreSQL back end when ``database_url`` is set, else the SQLite one on the
    data directory (neither connects before its first call)."""
    url = database_url(config)
    if url is None:
        from soloqueue_mem.storage.sqlite.backend import SqliteBackend

        return SqliteBackend(home, config)
    from soloqueue_mem.storage.postgres.backend import PostgresBackend

    return PostgresBackend(home, config, url)
