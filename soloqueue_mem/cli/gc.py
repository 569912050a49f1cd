"""``soloqueue-mem gc``: two-phase garbage collection, safe to run from cron."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from soloqueue_mem.cli.options import command, finite
from soloqueue_mem.cli.output import emit_object, print_table, report_wanted
from soloqueue_mem.cli.progress import ProgressLine
from soloqueue_mem.cli.state import AppContext
from soloqueue_mem.clock import MAX_DAYS


@command
def gc(
    app: AppContext,
    deep: Annotated[bool, typer.Option("--deep", help="Run the blob scan (phase 2) now.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Report, delete nothing.")] = False,
    ephemeral_days: Annotated[
        float | None,
        typer.Option(
            "--ephemeral-days",
            min=0,
            max=MAX_DAYS,
            callback=finite,
            help="Age at which sys:ephemeral rows go (0 to 36500).",
        ),
    ] = None,
    grace: Annotated[
        str | None, typer.Option("--grace", help="Never delete files younger than this (1h).")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Allow deleting more than half of the blobs.")
    ] = False,
    wait: Annotated[
        bool, typer.Option("--wait", help="Wait for a running gc instead of exit 75.")
    ] = False,
) -> None:
    """Remove expired ephemeral artifacts, then (weekly or --deep) unreferenced blobs.

    Phase 1 deletes the rows of sys:ephemeral artifacts older than --ephemeral-days
    (3). Phase 2 deletes blob files no row references and temporary files, both only
    when older than --grace, removes empty folders, and reports rows whose blob is
    missing. It deletes nothing if it cannot read every reference. --quiet prints
    nothing unless --format is given. Cron names the store: `17 3 * * * soloqueue-mem
    --root ~/proj/.soloqueue --quiet gc` (phase 2 runs itself once a week).
    """
    from soloqueue_mem.lifecycle.gc import MassDeleteRefused

    try:
        with app.store() as store, ProgressLine(app.quiet, "scanning blobs") as line:
            report = store.gc(
                deep=deep,
                dry_run=dry_run,
                ephemeral_days=ephemeral_days,
                grace=grace,
                force=force,
                wait=wait,
                progress=line.advance if line else None,
            )
    except MassDeleteRefused as exc:  # the report of what was done, then the error
        done = exc.report
        emit_object(done, app.format, table=lambda: _table(done))
        raise
    if report_wanted(app.quiet, app.format_option):
        emit_object(report, app.format, table=lambda: _table(report))


def _table(report: dict[str, Any]) -> None:
    phase2 = report["phase2"]
    rows: list[tuple[str, Any]] = [("expired rows (phase 1)", report["phase1"]["expired_rows"])]
    if "refused" in phase2:
        rows.append(("blob scan (phase 2)", "refused: nothing deleted (see the error)"))
    elif phase2["ran"]:
        rows += [
            ("blobs scanned", phase2["blobs"]),
            ("orphans", phase2["orphans"]),
            ("protected (younger than grace)", phase2["protected_recent"]),
            ("rows with a missing blob", len(phase2["missing_blobs"])),
            ("stray files (kept)", len(phase2["strays"])),
        ]
        if not report["dry_run"]:
            rows += [
                ("blobs deleted", phase2["deleted_blobs"]),
                ("bytes freed", phase2["freed_bytes"]),
                ("temporary files deleted", phase2["temp_files"]),
            ]
    else:
        rows.append(("blob scan (phase 2)", "not due (use --deep)"))
    rows.append(("seconds", report["seconds"]))
    print_table("gc" + (" (dry run)" if report["dry_run"] else ""), ["what", "count"], rows)
