"""The graph half of :class:`soloqueue_mem.Store`: seed 002's associative memory
(``graph remember``, ``graph work``, ``graph recall``, ``graph focus``) in one agent's
graph of graph.db, or of the PostgreSQL database when ``database_url`` is set."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from soloqueue_mem.api.base import StoreBase, serialised
from soloqueue_mem.errors import BadInput, NotFound
from soloqueue_mem.tuples import Any

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from soloqueue_mem.graph.db import GraphDb
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
        db = self._graph_db(create=True)
        assert db is not None
        result = ops.remember(db, scope, chosen, iso(self.now()), self._graph_params())
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
        db = self._graph_db(create=False)
        if db is None:
            return graph_recall.Recalled([], [])
        chosen = list(relations) if relations else None
        floor = params.link_break_threshold
        return graph_recall.recall(db, scope, words, chosen, depth, limit, floor)

    @serialised
    def graph_focus(
        self, *, group: str = "default", agent: str = "default"
    ) -> list[dict[str, Any]]:
        """The agent's focus nodes, newest first (``graph focus``)."""
        from soloqueue_mem.graph import ops

        db = self._graph_db(create=False)
        return [] if db is None else ops.focus_nodes(db, self._graph_scope(group, agent))

    @serialised
    def graph_show(self, node: int) -> dict[str, Any]:
        """A node with its links out and in (``graph show``); NotFound."""
        from soloqueue_mem.graph.ops import show

        db = self._graph_db(create=False)
        if db is None:
            raise NotFound(f"graph node {node} not found (no graph yet)")
        return show(db, node, self._graph_params())

    @serialised
    def graph_export(self, *, group: str = "default", agent: str = "default") -> dict[str, Any]:
        """The agent's whole graph: nodes, links, focus (``graph export``'s JSON)."""
        from soloqueue_mem.graph.export import as_json

        scope = self._graph_scope(group, agent)
        db = self._graph_db(create=False)
        if db is None:
            return as_json([], [], [])
        return as_json(db.nodes_of(scope), db.links_of(scope), db.focus(scope))

    def _graph_work(self, wait: bool) -> dict[str, Any] | None:
        from functools import partial

        from soloqueue_mem.graph.steps import Steps
        from soloqueue_mem.graph.worker import work
        from soloqueue_mem.storage.graph import open_graph_db, worker_lock

        def open_store() -> GraphDb:  # the worker closes its connections
            db = open_graph_db(self.home, self.config, create=True)
            assert db is not None
            return db

        steps = Steps(self._lexicon_loader)
        lock = partial(worker_lock, self.home, self.config)
        return work(lock, open_store, steps, self._graph_params(), wait, None)

    def _graph_db(self, create: bool) -> GraphDb | None:
        """The back end's graph (kept open); None when the store has none and not
        ``create``."""
        from soloqueue_mem.storage.graph import has_graph

        if not create and not has_graph(self.home, self.config):
            return None
        return self._storage().graph_db()

    def _graph_params(self) -> Any:
        from soloqueue_mem.graph.params import params

        return params(self.config)

    @staticmethod
    def _graph_scope(group: str, agent: str) -> Scope:
        from soloqueue_mem.graph.store import Scope
        from soloqueue_mem.home import validate_id

        return Scope(validate_id("group", group), validate_id("agent", agent))
