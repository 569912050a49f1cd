"""``soloqueue-mem graph``: seed 002's associative graph memory, one graph per agent."""

from __future__ import annotations

import os
from enum import StrEnum
from typing import Annotated

import typer

from soloqueue_mem.cli import spec
from soloqueue_mem.cli.boundary import boundary
from soloqueue_mem.cli.graph_run import NO_GRAPH, graph_db, graph_params, scope_of, work_now
from soloqueue_mem.cli.options import (
    AgentOpt,
    GroupOpt,
    RootOpt,
    finite,
    option,
    subcommand,
)
from soloqueue_mem.cli.output import Format, emit_list, emit_object, print_table, write
from soloqueue_mem.cli.state import AppContext, app_context, opened
from soloqueue_mem.errors import UsageError

app = typer.Typer(
    help="Associative graph memory of an agent: remember, recall, focus, compress.",
    no_args_is_help=True,
)
# No SOLOQUEUE_SESSION here: a hook's session variable must not turn "messages on stdin"
# into "that session's turns".
SessionTurns = Annotated[
    str | None,
    option(
        spec.GRAPH_REMEMBER, "session", help="Remember this session's turns.", show_default=False
    ),
]
BudgetOpt = Annotated[
    float | None,
    typer.Option(
        "--time-budget",
        callback=finite,
        help="Seconds for a compression slice (graph_time_slice).",
    ),
]
WaitOpt = Annotated[
    bool, typer.Option("--wait", help="Wait for a running worker instead of exit 75.")
]


class ExportFormat(StrEnum):
    json = "json"
    dot = "dot"
    mermaid = "mermaid"


@subcommand(app, "remember")
def remember(
    app_ctx: AppContext,
    session: SessionTurns = None,
    sync: Annotated[
        bool, option(spec.GRAPH_REMEMBER, "sync", help="Process the queue before returning.")
    ] = False,
    group: GroupOpt = "default",
    agent: AgentOpt = "default",
) -> None:
    """Queue chat messages for the agent's graph and return at once.

    Messages come from stdin (an OpenAI message array, one message, or JSONL), or are
    the turns of --session. A background worker turns them into nodes, links and focus;
    --sync does it before returning. Exit 75 when the queue is full.
    """
    from soloqueue_mem.cli.graph_run import run_remember

    run_remember(app_ctx, session, sync, group, agent)


@subcommand(app, "work")
def work_command(
    app_ctx: AppContext,
    wait: WaitOpt = False,
    budget: BudgetOpt = None,
) -> None:
    """Process the graph queue now, in order (each task then one compression slice)."""
    from soloqueue_mem.errors import TempFail
    from soloqueue_mem.storage.graph import has_graph

    if not has_graph(app_ctx.home, app_ctx.config):
        empty = ("tasks", "nodes", "requeued", "compressed", "deleted", "queued")
        emit_object(dict.fromkeys(empty, 0), app_ctx.format)
        return
    report = work_now(app_ctx, wait=wait, budget=budget)
    if report is None:
        raise TempFail("another graph worker is running; try again later or use --wait")
    emit_object(report, app_ctx.format)


@subcommand(app, "recall")
def recall(
    app_ctx: AppContext,
    keywords: Annotated[
        list[str],
        option(
            spec.GRAPH_RECALL, "keywords", help="Keyword to match (repeat, or comma-separated)."
        ),
    ],
    relation: Annotated[
        list[str] | None,
        option(spec.GRAPH_RECALL, "relation", help="Only paths over these relations (repeat)."),
    ] = None,
    depth: Annotated[
        int | None,
        option(
            spec.GRAPH_RECALL, "depth", help="Hops from the focus (graph_default_search_depth)."
        ),
    ] = None,
    limit: Annotated[
        int | None,
        option(
            spec.GRAPH_RECALL, "limit", help="Most results, 0 for all (graph_max_search_results)."
        ),
    ] = None,
    group: GroupOpt = "default",
    agent: AgentOpt = "default",
) -> None:
    """Search from the focus nodes, strongest path first; the focus does not change.

    --format text prints "[记忆] …" blocks separated by ---, with a line for
    each forgotten thing a returned memory points at.
    """
    from soloqueue_mem.cli.graph_run import run_recall

    run_recall(app_ctx, keywords, relation, depth, limit, group, agent)


@subcommand(app, "focus")
def focus(app_ctx: AppContext, group: GroupOpt = "default", agent: AgentOpt = "default") -> None:
    """The agent's focus nodes, newest first."""
    from soloqueue_mem.graph.ops import focus_nodes

    conn = graph_db(app_ctx)
    rows = []
    if conn is not None:
        with opened(conn, NO_GRAPH):
            rows = focus_nodes(conn, scope_of(group, agent))
    if app_ctx.format is Format.table:
        print_table(
            "focus",
            ["#", "node", "phrase"],
            ((r["position"], r["node_id"], r["phrase"]) for r in rows),
        )
    else:
        emit_list(rows, app_ctx.format)


@subcommand(app, "show")
def show(
    app_ctx: AppContext,
    node: Annotated[int, typer.Argument(help="Node id (see graph focus, graph recall).")],
) -> None:
    """A node: content, phrase, keywords, links out and in with strengths, dangling."""
    from soloqueue_mem.graph.ops import show as show_node

    with opened(graph_db(app_ctx), f"graph node {node} not found") as conn:
        data = show_node(conn, node, graph_params(app_ctx))

    def table() -> None:
        rows = [("content", data["content"]), ("phrase", data["phrase"])]
        rows += [("keywords", ", ".join(data["keywords"])), ("importance", data["importance"])]
        for way in ("out", "in"):
            for link in data[way]:
                gone = " (forgotten)" if link["dangling"] else ""
                name = link["relation"] or ""
                rows.append((f"{way} {link['node_id']}{gone}", f"{link['strength']} {name}"))
        print_table(f"node {data['node_id']}", ["what", "value"], rows)

    emit_object(data, app_ctx.format, table=table)


@subcommand(app, "stats")
def stats(app_ctx: AppContext) -> None:
    """Nodes, links, dangling links, focus and queued tasks of every graph."""
    from soloqueue_mem.graph.ops import stats as graph_stats

    conn = graph_db(app_ctx)
    try:
        data = graph_stats(conn, graph_params(app_ctx))
    finally:
        if conn is not None:
            conn.close()
    columns = ["group", "agent", "nodes", "links", "dangling_links", "focus", "queued"]
    emit_object(
        data,
        app_ctx.format,
        table=lambda: print_table(
            f"graphs ({data['queued']} queued)",
            columns,
            ([g[c] for c in columns] for g in data["graphs"]),
        ),
    )


@subcommand(app, "compress")
def compress(
    app_ctx: AppContext,
    budget: BudgetOpt = None,
    wait: WaitOpt = False,
    group: GroupOpt = "default",
    agent: AgentOpt = "default",
) -> None:
    """Run one compression slice over the agent's graph (under the worker lock)."""
    from soloqueue_mem.cli.graph_worker import start_if_queued, steps_for
    from soloqueue_mem.graph.compress import compress_slice
    from soloqueue_mem.storage.graph import worker_lock

    scope = scope_of(group, agent)
    if budget is not None and budget <= 0:
        raise UsageError("--time-budget must be positive")
    steps = steps_for(app_ctx.home, app_ctx.config, os.environ)
    with opened(graph_db(app_ctx), NO_GRAPH) as db:
        with worker_lock(app_ctx.home, app_ctx.config, wait):
            report = compress_slice(db, scope, steps, graph_params(app_ctx), budget)
        start_if_queued(app_ctx.home.dir, db)  # tasks queued meanwhile found no worker
    emit_object({"group": scope.group, "agent": scope.agent, **report}, app_ctx.format)


@app.command("export")
@boundary
def export(
    ctx: typer.Context,
    as_format: Annotated[
        ExportFormat, typer.Option("--format", "-f", help="json, dot (Graphviz) or mermaid.")
    ] = ExportFormat.json,
    group: GroupOpt = "default",
    agent: AgentOpt = "default",
    root: RootOpt = None,
) -> None:
    """The agent's graph as JSON, a Graphviz DOT file or a Mermaid flowchart."""
    from soloqueue_mem.graph import export as exporter

    app_ctx = app_context(ctx, None, root)
    scope = scope_of(group, agent)
    nodes, links, focus_ids = [], [], []
    db = graph_db(app_ctx)
    if db is not None:
        with opened(db, NO_GRAPH):
            nodes, links = db.nodes_of(scope), db.links_of(scope)
            focus_ids = db.focus(scope)
    if as_format is ExportFormat.json:
        from soloqueue_mem import jsonio

        write(jsonio.dumps(exporter.as_json(nodes, links, focus_ids)) + "\n")
    else:
        render = exporter.as_dot if as_format is ExportFormat.dot else exporter.as_mermaid
        write(render(nodes, links, focus_ids))
