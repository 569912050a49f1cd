"""The graph half of :class:`soloqueue_mem.Store`: seed 002's associative memory
(``graph remember``, ``graph work``, ``graph recall``, ``graph focus``) in one agent's
graph of graph.db."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from soloqueue_mem.api.base import StoreBase, serialised
from soloqueue_mem.errors import BadInput

if TYPE_CHECKING:
    import sqlite3

    from soloqueue_mem.graph.recall import Recalled
    from soloqueue_mem.graph.store import Scope


class GraphMethods(StoreBase):
    """Seed 002's graph; :class:`soloqueue_mem.Store` inherits these methods."""

    @serialised
    def graph_remember(
        self,
        messages: Iterable[Mapping[str, Any]],
        *,
        sync: bool = False,
        group: str = "default",
        agent: str = "default",
    ) -> dict[str, Any]:
        """Queue chat messages (``{"role", "content"}``) for the agent's graph
        (``graph remember``); the queued task as the CLI prints it. The queue runs
        serially: with ``sync`` now (``"processed"`` is the worker's report), else at
        the next :meth:`graph_work` or ``consolidate``. A full queue raises TempFail."""
        from soloqueue_mem.clock import iso
        from soloqueue_mem.graph import ops
        from soloqueue_mem.sessions.events import parse_event

        scope = self._graph_scope(group, agent)
        redact = self._redactor()
        events = []
        for message in messages:
            if not isinstance(message, Mapping):
                raise BadInput("each message must be an object with role and content")
            events.append(parse_event(dict(message)))
        chosen = ops.messages_of(events)
        if redact is not None:
            chosen = [{**m, "content": redact.text(m["content"])} for m in chosen]
        conn = self._graph_conn(create=True)
        assert conn is not None
        result = ops.remember(conn, scope, chosen, iso(self.now()), self._graph_params())
        if sync:
            result["processed"] = self._graph_work(wait=True)
        return result

    @serialised
    def graph_work(self, *, wait: bool = True) -> dict[str, Any] | None:
        """Run the graph queue until it is empty (``graph work``); None when another
        worker holds the lock and ``wait`` is False."""
        return self._graph_work(wait)

    @serialised
    def graph_recall(
        self,
        keywords: str | Iterable[str],
        *,
        relations: Iterable[str] | None = None,
        depth: int | None = None,
        limit: int | None = None,
        group: str = "default",
        agent: str = "default",
    ) -> Recalled:
        """Best-first search from the agent's focus nodes (``graph recall``); never
        changes the focus. ``graph.recall.as_json``/``as_text`` give the CLI's output."""
        from soloqueue_mem.graph import recall as graph_recall

        params = self._graph_params()
        given = [keywords] if isinstance(keywords, str) else list(keywords)
        words, depth, limit = graph_recall.checked_request(given, depth, limit, params)
        scope = self._graph_scope(group, agent)
        conn = self._graph_conn(create=False)
        if conn is None:
            return graph_recall.Recalled([], [])
        chosen = list(relations) if relations else None
        floor = params.link_break_threshold
        return graph_recall.recall(conn, scope, words, chosen, depth, limit, floor)

    @serialised
    def graph_focus(
        self, *, group: str = "default", agent: str = "default"
    ) -> list[dict[str, Any]]:
        """The agent's focus nodes, newest first (``graph focus``)."""
        from soloqueue_mem.graph import ops

        conn = self._graph_conn(create=False)
        return [] if conn is None else ops.focus_nodes(conn, self._graph_scope(group, agent))

    def _graph_work(self, wait: bool) -> dict[str, Any] | None:
        from soloqueue_mem.graph.steps import Steps
        from soloqueue_mem.graph.worker import work

        def open_store() -> sqlite3.Connection:  # the worker closes its connections
            from soloqueue_mem.db.stores import open_graph

            conn = open_graph(self.home, self.config, create=True)
            assert conn is not None
            return conn

        steps = Steps(self._lexicon_loader)
        return work(self.home.root, open_store, steps, self._graph_params(), wait, None)

    def _graph_conn(self, create: bool) -> sqlite3.Connection | None:
        return self._db("graph", create=create)

    def _graph_params(self) -> Any:
        from soloqueue_mem.graph.params import params

        return params(self.config)

    @staticmethod
    def _graph_scope(group: str, agent: str) -> Scope:
        from soloqueue_mem.graph.store import Scope
        from soloqueue_mem.home import validate_id

        return Scope(validate_id("group", group), validate_id("agent", agent))
