"""``soloqueue-mem verify``: integrity checks of databases, blobs and session logs."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from soloqueue_mem.cli.options import command
from soloqueue_mem.cli.output import emit_object, print_table, write
from soloqueue_mem.cli.state import AppContext
from soloqueue_mem.errors import UsageError


@command
def verify(
    app: AppContext,
    quick: Annotated[
        bool, typer.Option("--quick", help="quick_check and blob sizes (default).")
    ] = False,
    full: Annotated[
        bool, typer.Option("--full", help="integrity_check and re-hash every blob.")
    ] = False,
    repair: Annotated[
        bool,
        typer.Option("--repair", help="Re-index turns from the logs; rebuild full-text indexes."),
    ] = False,
) -> None:
    """Check the store: databases, blobs against their hashes, orphans, logs vs index.

    Read-only unless --repair. Exit status: 0 sound, 8 warnings only (orphans, temp
    files, a torn log tail, turns not indexed yet), 9 errors (corruption, a missing
    blob, a bad log line), 75 a database stayed busy (try again).
    """
    if quick and full:
        raise UsageError("choose one of --quick and --full")
    with app.store() as store:
        report = store.verify(full=full, repair=repair)
    emit_object(report, app.format, table=lambda: _table(report))
    if report["exit_code"]:
        raise typer.Exit(report["exit_code"])


def _table(report: dict[str, Any]) -> None:
    summary = report["summary"]
    if not report["findings"]:
        write("verify: the store is sound\n")
        return
    rows = [(f["severity"], f["kind"], f["where"], f["detail"]) for f in report["findings"]]
    counts = f"{summary['error']} error(s), {summary['warning']} warning(s), {summary['info']} info"
    print_table(f"verify: {counts}", ["severity", "kind", "where", "detail"], rows)
