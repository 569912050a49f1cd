"""Which graph a data directory uses: graph.db, or the PostgreSQL database when
``database_url`` is set (:mod:`soloqueue_mem.graph.db` has the interface), and the
graph worker's lock on each."""

from __future__ import annotations

import os

from soloqueue_mem.storage.url import database_url

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from soloqueue_mem.config import Config
    from soloqueue_mem.graph.db import GraphDb
    from soloqueue_mem.home import Home

WORKER = "graph worker"


def open_graph_db(home: Home, config: Config, create: bool = True) -> GraphDb | None:
    """The store's graph: the PostgreSQL database when ``database_url`` is set, else
    graph.db (None when it does not exist and ``create`` is False)."""
    from soloqueue_mem.graph.db import SqlGraph

    url = database_url(config)
    if url is not None:
        from soloqueue_mem.storage.postgres.connect import connect

        return SqlGraph(connect(url))
    from soloqueue_mem.storage.sqlite.stores import open_graph

    conn = open_graph(home, config, create=create)
    return None if conn is None else SqlGraph(conn)


def has_graph(home: Home, config: Config) -> bool:
    """Whether the store may hold a graph, without opening anything."""
    return database_url(config) is not None or os.path.exists(home.graph_db)


def worker_lock(home: Home, config: Config, wait: bool = False) -> AbstractContextManager[None]:
    """The lock the graph worker holds while it runs the queue: ``.graph.lock`` in the
    data directory, or on PostgreSQL an advisory lock on the database, so one worker
    runs at a time across every host. A held lock raises TempFail unless ``wait``."""
    url = database_url(config)
    if url is not None:
        from soloqueue_mem.storage.postgres.graph import worker_lock as pg_worker_lock

        return pg_worker_lock(url, wait)
    from soloqueue_mem import lock
    from soloqueue_mem.graph.worker import lock_path

    return lock.exclusive(lock_path(home.root), WORKER, wait=wait)
