"""``soloqueue-mem index --embed``: fill the embedding cache on request."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from soloqueue_mem.cli.options import command
from soloqueue_mem.cli.output import emit_object, print_table, stderr
from soloqueue_mem.cli.progress import ProgressLine
from soloqueue_mem.cli.state import AppContext
from soloqueue_mem.errors import UsageError


@command
def index_command(
    app: AppContext,
    embed: Annotated[
        bool,
        typer.Option("--embed", help="Embed memories, episodes and promoted chunks."),
    ] = False,
    with_turns: Annotated[
        bool, typer.Option("--turns", help="Embed turns too (slow: ~14 per second).")
    ] = False,
    time_budget: Annotated[
        str | None,
        typer.Option(
            "--time-budget",
            help="Stop starting new batches after this long (e.g. 60s, 10m); the next run goes on.",
            show_default=False,
        ),
    ] = None,
    estimate_only: Annotated[
        bool, typer.Option("--estimate", help="Only say how much there is to embed.")
    ] = False,
) -> None:
    """Build the dense index (the semantic extra): every text without a vector under
    the model is embedded once and cached in memory.db (or the PostgreSQL database)
    by (model, content hash).

    consolidate does the same for memories and episodes when search_backend is hybrid
    or dense; turns are embedded only here, with --turns. Progress and the estimate
    go to stderr; the report is printed when done.
    """
    from soloqueue_mem.clock import parse_duration

    if not embed:
        raise UsageError("nothing to do: give --embed (see soloqueue-mem index --help)")
    budget = parse_duration(time_budget) if time_budget else None
    with app.store() as store:
        planned = store.index_estimate(turns=with_turns)
        if _announce(app, planned, estimate_only):
            return
        with ProgressLine(app.quiet, "embedding") as line:
            progress = line.update if line else None
            report = store.index_embed(turns=with_turns, time_budget=budget, progress=progress)
    report["estimate"] = planned
    emit_object(report, app.format, table=lambda: _table(report))


def _announce(app: Any, planned: dict[str, Any], estimate_only: bool) -> bool:
    """Say how much there is to embed (stderr); print the estimate and return True
    when that is all that was asked."""
    from soloqueue_mem.semantic.embed import TEXTS_PER_SECOND

    stderr(
        f"to embed: {planned['memories']} memories/episodes, {planned['turns']} turns"
        f" (at most ~{planned['seconds']} s at {TEXTS_PER_SECOND:g} texts/s)",
        app.quiet,
    )
    if estimate_only:
        emit_object({"estimate": planned}, app.format)
    return estimate_only


def _table(report: dict[str, Any]) -> None:
    rows = [("model", report["model"])]
    for part in ("memories", "turns"):
        for name, value in report.get(part, {}).items():
            rows.append((f"{part}: {name}", value))
    rows += [(f"vectors: {kind}", count) for kind, count in report["vectors"].items()]
    print_table("index --embed", ["what", "value"], rows)
