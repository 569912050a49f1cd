"""``soloqueue-mem consolidate``: the nightly lifecycle, safe to run from cron."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from soloqueue_mem.cli.boundary import boundary
from soloqueue_mem.cli.options import FormatOpt, RootOpt
from soloqueue_mem.cli.output import emit_object, print_table
from soloqueue_mem.cli.progress import ProgressLine
from soloqueue_mem.cli.state import app_context


@boundary
def consolidate(
    ctx: typer.Context,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", "-n", help="Report what would change; write nothing.")
    ] = False,
    idle: Annotated[
        str | None,
        typer.Option("--idle", help="A session quiet this long counts as finished (2h)."),
    ] = None,
    wait: Annotated[
        bool, typer.Option("--wait", help="Wait for a running consolidate instead of exit 75.")
    ] = False,
    fmt: FormatOpt = None,
    root: RootOpt = None,
) -> None:
    """Turn finished sessions into episodes and memories, dedup, decay, expire, and
    refresh identity/MEMORY.md, identity/USER.md and daily_summaries/.

    Idempotent: a second run with nothing new changes nothing. Works offline with
    rules; an OpenAI-compatible endpoint (SOLOQUEUE_LLM_URL, SOLOQUEUE_LLM_MODEL)
    improves extraction when set. Cron: `43 3 * * * soloqueue-mem --quiet consolidate`.
    """
    from datetime import timedelta

    from soloqueue_mem.clock import parse_duration
    from soloqueue_mem.db.stores import open_artifacts, open_memory
    from soloqueue_mem.lifecycle.consolidate import Options, run
    from soloqueue_mem.lifecycle.on_log import extracted_in_store
    from soloqueue_mem.lifecycle.vocabulary import vocabulary
    from soloqueue_mem.memory.backend import DENSE_BACKENDS

    app = app_context(ctx, fmt, root)
    config = app.config
    options = Options(
        dry_run=dry_run,
        idle=timedelta(seconds=parse_duration(idle or config.consolidate_idle)),
        wait=wait,
        embed=config.search_backend in DENSE_BACKENDS,
        words=vocabulary(config.predicates),
        extracted_on_log=lambda key: extracted_in_store(app.home, config, key),
        graph=lambda: _graph_step(app),
    )
    model = _model(app)
    try:
        with ProgressLine(app.quiet, "consolidating sessions") as line:
            progress = (lambda step, done, total: line.update(done, total)) if line else None
            report = run(
                app.home,
                lambda: open_memory(app.home, config),
                app.now,
                options,
                model,
                progress,
                open_artifacts=lambda: open_artifacts(app.home, config, create=False),
            )
    finally:
        if model is not None:
            model.close()
    emit_object(report, app.format, table=lambda: _table(report))


def _graph_step(app: Any) -> dict[str, Any]:
    """The graph queue and one compression slice per agent graph (graph.db only)."""
    import os

    from soloqueue_mem.cli.graph_worker import start_if_queued, steps_for
    from soloqueue_mem.db.stores import open_graph
    from soloqueue_mem.graph.params import params
    from soloqueue_mem.graph.worker import consolidate_graphs

    config = app.config
    report = consolidate_graphs(
        app.home.root,
        lambda: open_graph(app.home, config, create=False),
        steps_for(app.home, config, os.environ),
        params(config),
    )
    conn = open_graph(app.home, config, create=False)
    if conn is not None:
        try:
            start_if_queued(app.home.root, conn)  # tasks queued during the step
        finally:
            conn.close()
    return report


def _model(app: Any) -> Any:
    """The model extractor when SOLOQUEUE_LLM_URL and SOLOQUEUE_LLM_MODEL are set."""
    import os

    from soloqueue_mem.db.stores import open_state
    from soloqueue_mem.lifecycle.llm import from_env
    from soloqueue_mem.lifecycle.model_extract import ModelExtraction

    config = app.config
    llm = from_env(
        os.environ,
        config.llm_timeout,
        config.llm_attempts,
        config.llm_backoff_base,
        config.llm_backoff_cap,
    )
    if llm is None:
        return None
    return ModelExtraction(llm, lambda: open_state(app.home, config), config, app.now)


def _table(report: dict[str, Any]) -> None:
    rows: list[tuple[str, Any]] = []
    for step in (
        "queue",
        "sessions",
        "model",
        "dedup",
        "decay",
        "expire",
        "embed",
        "graph",
        "identity",
        "daily_summary",
    ):
        for name, value in report.get(step, {}).items():
            rows.append((f"{step}: {name}", value))
    rows.append(("seconds", report["seconds"]))
    print_table(
        "consolidate" + (" (dry run)" if report["dry_run"] else ""), ["what", "value"], rows
    )
