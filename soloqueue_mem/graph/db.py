"""The graph's storage interface, :class:`GraphDb`, and its implementation,
:class:`SqlGraph` (the SQL of :mod:`.store` and :mod:`.queue`), on either back end's
connection: graph.db on this host or the PostgreSQL back end's database;
:mod:`soloqueue_mem.storage.graph` chooses one by configuration.

Everything above it (remember, the worker, compression, recall, the recall channel,
export/import) is written once against this interface, so both back ends give the
same nodes, links, focus and scores. Writes happen inside :meth:`GraphDb.transaction`
(re-entrant: nested blocks are savepoints).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence

from soloqueue_mem.graph import queue, store
from soloqueue_mem.tuples import Protocol

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from contextlib import AbstractContextManager
    from typing import Any

    from soloqueue_mem.graph.queue import Task
    from soloqueue_mem.graph.store import Link, Node, Scope


class GraphDb(Protocol):
    """Nodes, links, focus lists and the task queue of every (group, agent) graph.
    Each method is the function of the same name in :mod:`.store` or :mod:`.queue`."""

    def transaction(self) -> AbstractContextManager[Any]: ...

    def close(self) -> None: ...

    # nodes
    def create_node(
        self, scope: Scope, content: str, phrase: str, keywords: list[str], created_at: str
    ) -> int: ...

    def insert_node(self, node: Node) -> None: ...

    def reserve_node_ids(self, at_least: int) -> None: ...

    def get_node(self, node_id: int) -> Node | None: ...

    def get_nodes(self, node_ids: Iterable[int]) -> dict[int, Node]: ...

    def texts_of(self, node_ids: Iterable[int]) -> dict[int, tuple[str, str]]: ...

    def update_content(
        self, node_id: int, content: str, phrase: str, keywords: list[str]
    ) -> None: ...

    def delete_node(self, node_id: int) -> None: ...

    def increment_scan_count(self, node_id: int) -> None: ...

    def scan_order(self, scope: Scope) -> list[int]: ...

    def nodes_of(self, scope: Scope) -> list[Node]: ...

    def scopes(self) -> list[Scope]: ...

    # links
    def create_link(
        self, from_id: int, to_id: int, strength: float, relation: str | None
    ) -> None: ...

    def out_links(self, node_id: int, floor: float = 0.0) -> list[Link]: ...

    def out_links_of(
        self, node_ids: Iterable[int], floor: float = 0.0
    ) -> dict[int, list[Link]]: ...

    def in_links(self, node_id: int, floor: float = 0.0) -> list[Link]: ...

    def importance(self, node_id: int, floor: float) -> float: ...

    def decay_links(
        self, node_id: int, rate: float, floor: float, protected: Iterable[int]
    ) -> int: ...

    def dangling_from(self, node_ids: Sequence[int], floor: float = 0.0) -> list[Link]: ...

    def links_of(self, scope: Scope) -> list[Link]: ...

    # focus
    def focus(self, scope: Scope) -> list[int]: ...

    def push_focus(self, scope: Scope, node_ids: list[int], limit: int) -> None: ...

    def counts(self, scope: Scope, floor: float) -> dict[str, int]: ...

    # the task queue
    def enqueue(
        self, scope: Scope, messages: list[dict[str, str]], enqueued_at: str, max_size: int
    ) -> int: ...

    def head(self, after: int = 0) -> Task | None: ...

    def pending(self) -> list[Task]: ...

    def task(self, task_id: int) -> Task | None: ...

    def insert_task(self, task: Task) -> None: ...

    def take(self, task_id: int) -> bool: ...

    def requeue(self, task: Task) -> int: ...

    def depth(self) -> int: ...


def _on_conn(function: Callable[..., Any]) -> Any:
    """A method that calls ``function`` with the graph's connection first."""

    @functools.wraps(function)
    def method(self: SqlGraph, *args: Any, **kwargs: Any) -> Any:
        return function(self.conn, *args, **kwargs)

    return method


class SqlGraph:
    """:class:`GraphDb` with its SQL written once for both back ends (:mod:`.store`'s
    functions over :class:`soloqueue_mem.db.adapter.Db`, and the queue); whoever opened
    ``conn`` closes it, through :meth:`close` or otherwise."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn  # graph.db's sqlite3.Connection, or the PostgreSQL back end's

    create_node = _on_conn(store.create_node)
    insert_node = _on_conn(store.insert_node)
    reserve_node_ids = _on_conn(store.reserve_node_ids)
    update_content = _on_conn(store.update_content)
    delete_node = _on_conn(store.delete_node)
    decay_links = _on_conn(store.decay_links)
    get_node = _on_conn(store.get_node)
    get_nodes = _on_conn(store.get_nodes)
    texts_of = _on_conn(store.texts_of)
    increment_scan_count = _on_conn(store.increment_scan_count)
    scan_order = _on_conn(store.scan_order)
    nodes_of = _on_conn(store.nodes_of)
    scopes = _on_conn(store.scopes)
    create_link = _on_conn(store.create_link)
    out_links = _on_conn(store.out_links)
    out_links_of = _on_conn(store.out_links_of)
    dangling_from = _on_conn(store.dangling_from)
    in_links = _on_conn(store.in_links)
    importance = _on_conn(store.importance)
    links_of = _on_conn(store.links_of)
    focus = _on_conn(store.focus)
    push_focus = _on_conn(store.push_focus)
    counts = _on_conn(store.counts)
    enqueue = _on_conn(queue.enqueue)
    head = _on_conn(queue.head)
    pending = _on_conn(queue.pending)
    task = _on_conn(queue.task)
    insert_task = _on_conn(queue.insert_task)
    take = _on_conn(queue.take)
    requeue = _on_conn(queue.requeue)
    depth = _on_conn(queue.depth)

    def transaction(self) -> AbstractContextManager[Any]:
        from soloqueue_mem.db.adapter import Db

        return Db(self.conn).write()

    def close(self) -> None:
        self.conn.close()
