"""``graph remember`` and the worker as the CLI runs them, without importing Typer, so
the fast parser (:mod:`soloqueue_mem.cli.fast`) can run a plain ``graph remember``."""

from __future__ import annotations

import os
import sys

from soloqueue_mem.cli.output import emit_object, print_table
from soloqueue_mem.cli.state import AppContext, opened
from soloqueue_mem.errors import NotFound, UsageError
from soloqueue_mem.home import validate_id

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import Any

    from soloqueue_mem.graph.db import GraphDb
    from soloqueue_mem.graph.store import Scope

NO_GRAPH = "no graph in this store yet (try: soloqueue-mem graph remember)"


def run_remember(
    app_ctx: AppContext, session: str | None, sync: bool, group: str, agent: str
) -> None:
    """Queue the messages of stdin (or of ``session``), then start a worker or, with
    ``sync``, run the queue; print the task."""
    from soloqueue_mem.clock import iso
    from soloqueue_mem.graph import ops

    scope = scope_of(group, agent)
    if session is not None:
        messages = _session_messages(app_ctx, scope, validate_id("session", session))
    else:
        if sys.stdin is None:
            raise UsageError("stdin is closed: give messages on stdin or --session")
        data = sys.stdin.buffer.read(app_ctx.config.max_input_bytes + 1)
        messages = ops.read_messages(data, app_ctx.config.max_input_bytes)
    messages = [{**m, "content": app_ctx.redacted(m["content"])} for m in messages]
    with opened(graph_db(app_ctx, create=True), NO_GRAPH) as conn:
        result = ops.remember(conn, scope, messages, iso(app_ctx.now), graph_params(app_ctx))
    if sync:
        result["processed"] = work_now(app_ctx, wait=True)
    else:
        from soloqueue_mem.cli.graph_worker import start

        start(app_ctx.home.dir)
    emit_object(result, app_ctx.format)


def run_recall(
    app_ctx: AppContext,
    keywords: list[str],
    relation: list[str] | None,
    depth: int | None,
    limit: int | None,
    group: str,
    agent: str,
) -> None:
    """Recall from the agent's focus and print the result (JSON, table or the seed's
    text)."""
    from soloqueue_mem.graph import recall as graph_recall

    params = graph_params(app_ctx)
    words, depth, limit = graph_recall.checked_request(keywords, depth, limit, params)
    conn = graph_db(app_ctx)
    result = graph_recall.Recalled([], [])
    if conn is not None:
        with opened(conn, NO_GRAPH):
            floor = params.link_break_threshold
            scope = scope_of(group, agent)
            result = graph_recall.recall(conn, scope, words, relation, depth, limit, floor)
    data = graph_recall.as_json(result, app_ctx.config.language)
    emit_object(
        data,
        app_ctx.format,
        table=lambda: print_table(
            None,
            ["node", "strength", "matched", "content"],
            (
                (r["node_id"], r["path_strength"], ",".join(r["matched_keywords"]), r["content"])
                for r in data["results"]
            ),
        ),
        text=lambda: str(data["text"]),
    )


def _session_messages(app_ctx: AppContext, scope: Scope, session: str) -> list[dict[str, str]]:
    from soloqueue_mem.graph.ops import messages_of
    from soloqueue_mem.sessions.events import parse_event

    missing = f"session {session} not found (try: soloqueue-mem session list)"
    with app_ctx.store() as store:
        turns = store.session_turns(session, group=scope.group, agent=scope.agent)
    if not turns:
        raise NotFound(missing)
    return messages_of(parse_event({"role": t.role, "content": t.content}) for t in turns)


def scope_of(group: str, agent: str) -> Scope:
    from soloqueue_mem.graph.store import Scope

    return Scope(validate_id("group", group), validate_id("agent", agent))


def graph_db(app_ctx: AppContext, create: bool = False) -> GraphDb | None:
    """graph.db (None when it does not exist and not ``create``), or the database's
    graph on PostgreSQL."""
    from soloqueue_mem.storage.graph import open_graph_db

    return open_graph_db(app_ctx.home, app_ctx.config, create=create)


def graph_params(app_ctx: AppContext) -> Any:
    from soloqueue_mem.graph.params import params

    return params(app_ctx.config)


def work_now(app_ctx: AppContext, wait: bool, budget: float | None = None) -> dict[str, Any] | None:
    from functools import partial

    from soloqueue_mem.cli.graph_worker import steps_for
    from soloqueue_mem.graph.worker import work
    from soloqueue_mem.storage.graph import worker_lock

    def open_store() -> GraphDb:
        db = graph_db(app_ctx, create=True)
        assert db is not None
        return db

    steps = steps_for(app_ctx.home, app_ctx.config, os.environ)
    lock = partial(worker_lock, app_ctx.home, app_ctx.config)
    return work(lock, open_store, steps, graph_params(app_ctx), wait, budget)
