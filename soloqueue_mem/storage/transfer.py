"""What ``export`` and ``import`` open: the store's databases (memory.db, state.db,
graph.db), or on the PostgreSQL back end its database (the graph's tables too), and
this host's artifacts.db on either. Each is closed with the caller's ``ExitStack``.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

from soloqueue_mem.config import Config
from soloqueue_mem.home import Home
from soloqueue_mem.ops.export import Sources
from soloqueue_mem.ops.import_dump import Targets
from soloqueue_mem.storage.sqlite.stores import open_artifacts, open_graph, open_memory, open_state

if TYPE_CHECKING:
    from soloqueue_mem.graph.db import GraphDb


def open_database(stack: ExitStack, config: Config) -> Any:
    """The PostgreSQL back end's connection (closed with ``stack``) when
    ``database_url`` is set, else None."""
    from soloqueue_mem.storage.base import database_url

    url = database_url(config)
    if url is None:
        return None
    from soloqueue_mem.storage.postgres.connect import connect

    conn = connect(url)
    stack.callback(conn.close)
    return conn


def open_sources(stack: ExitStack, home: Home, config: Config) -> Sources:
    """The store's databases that exist, closed with ``stack``; on the PostgreSQL back
    end, its database (the graph's tables too) and this host's artifacts.db."""
    database = open_database(stack, config)
    conns = []
    for opener in (open_memory, open_artifacts, open_state):
        local = database is None or opener is open_artifacts
        conn = opener(home, config, create=False) if local else None
        if conn is not None:
            stack.callback(conn.close)
        conns.append(conn)
    memory, artifacts, state = conns
    graph = graph_of(stack, home, config, database, create=False)
    return Sources(memory, artifacts, state, graph=graph, database=database)


def graph_of(
    stack: ExitStack, home: Home, config: Config, database: Any, create: bool
) -> GraphDb | None:
    """The graph on the database's connection, or graph.db (closed with ``stack``;
    None when it does not exist and not ``create``)."""
    from soloqueue_mem.graph.db import SqlGraph

    if database is not None:
        return SqlGraph(database)
    conn = open_graph(home, config, create=create)
    if conn is None:
        return None
    stack.callback(conn.close)
    return SqlGraph(conn)


def target_opener(stack: ExitStack, home: Home, config: Config) -> Callable[[bool], Targets]:
    """What :func:`import_dump` opens the store with (every database closed with
    ``stack``, graph.db only for a dump with graph records); on the PostgreSQL back
    end, its database (the graph's tables too) and this host's artifacts.db."""

    def open_targets(with_graph: bool) -> Targets:
        database = open_database(stack, config)
        conns = []
        for opener in (open_memory, open_artifacts, open_state):
            local = database is None or opener is open_artifacts
            conn = opener(home, config) if local else None
            if conn is not None:
                stack.callback(conn.close)
            conns.append(conn)
        memory, artifacts, state = conns
        assert artifacts is not None  # opened with create=True
        graph = graph_of(stack, home, config, database, create=True) if with_graph else None
        return Targets(home, config, memory, artifacts, state, graph=graph, database=database)

    return open_targets
