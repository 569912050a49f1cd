"""``soloqueue-mem consolidate``: the nightly lifecycle, safe to run from cron."""

from __future__ import annotations

import os
from typing import Annotated, Any

import typer

from soloqueue_mem.cli.options import command
from soloqueue_mem.cli.output import emit_object, print_table, report_wanted
from soloqueue_mem.cli.progress import ProgressLine
from soloqueue_mem.cli.state import AppContext


@command
def consolidate(
    app: AppContext,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Report what would change; write nothing.")
    ] = False,
    idle: Annotated[
        str | None,
        typer.Option("--idle", help="A session quiet this long counts as finished (2h)."),
    ] = None,
    wait: Annotated[
        bool, typer.Option("--wait", help="Wait for a running consolidate instead of exit 75.")
    ] = False,
) -> None:
    """Turn finished sessions into episodes and memories, dedup, decay, expire, and
    refresh identity/MEMORY.md, identity/USER.md and daily_summaries/.

    Idempotent: a second run with nothing new changes nothing. Works offline with
    rules; an OpenAI-compatible endpoint (SOLOQUEUE_LLM_URL, SOLOQUEUE_LLM_MODEL)
    improves extraction when set. --quiet prints nothing unless --format is given. Cron
    names the store: `43 3 * * * soloqueue-mem --root ~/proj/.soloqueue --quiet consolidate`.
    """
    from soloqueue_mem.cli.graph_worker import steps_for

    model = _model(app)
    try:
        with app.store() as store, ProgressLine(app.quiet, "consolidating sessions") as line:
            progress = (lambda step, done, total: line.update(done, total)) if line else None
            report = store.consolidate(
                dry_run=dry_run,
                idle=idle,
                wait=wait,
                model=model,
                graph_steps=steps_for(app.home, app.config, os.environ),
                progress=progress,
            )
    finally:
        if model is not None:
            model.close()
    _start_graph_worker(app)
    if report_wanted(app.quiet, app.format_option):
        emit_object(report, app.format, table=lambda: _table(report))


def _start_graph_worker(app: Any) -> None:
    """A detached worker for graph tasks queued while consolidate held the worker lock."""
    from soloqueue_mem.cli.graph_worker import start_if_queued
    from soloqueue_mem.storage.graph import open_graph_db

    db = open_graph_db(app.home, app.config, create=False)
    if db is not None:
        try:
            start_if_queued(app.home.dir, db)
        finally:
            db.close()


def _model(app: Any) -> Any:
    """The model when SOLOQUEUE_LLM_URL and SOLOQUEUE_LLM_MODEL are set."""
    from soloqueue_mem.lifecycle.model_extract import configured

    return configured(app.config, app.now)


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
