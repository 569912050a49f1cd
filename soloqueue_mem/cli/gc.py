"""``soloqueue-mem gc``: two-phase garbage collection, safe to run from cron."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from soloqueue_mem.cli.boundary import boundary
from soloqueue_mem.cli.options import FormatOpt, RootOpt
from soloqueue_mem.cli.output import emit_object, print_table, report_wanted
from soloqueue_mem.cli.progress import ProgressLine
from soloqueue_mem.cli.state import app_context


@boundary
def gc(
    ctx: typer.Context,
    deep: Annotated[bool, typer.Option("--deep", help="Run the blob scan (phase 2) now.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Report, delete nothing.")] = False,
    ephemeral_days: Annotated[
        float | None, typer.Option("--ephemeral-days", help="Age at which sys:ephemeral rows go.")
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
    fmt: FormatOpt = None,
    root: RootOpt = None,
) -> None:
    """Remove expired ephemeral artifacts, then (weekly or --deep) unreferenced blobs.

    Phase 1 deletes the rows of sys:ephemeral artifacts older than --ephemeral-days
    (3). Phase 2 deletes blob files no row references and temporary files, both only
    when older than --grace, removes empty folders, and reports rows whose blob is
    missing. It deletes nothing if it cannot read every reference. --quiet prints
    nothing unless --format is given. Cron names the store: `17 3 * * * soloqueue-mem
    --root ~/proj/.soloqueue --quiet gc` (phase 2 runs itself once a week).
    """
    from soloqueue_mem.clock import parse_duration
    from soloqueue_mem.db.stores import open_artifacts
    from soloqueue_mem.lifecycle.gc import GcOptions, run_gc

    app = app_context(ctx, fmt, root)
    config = app.config
    options = GcOptions(
        ephemeral_days=config.gc_ephemeral_days if ephemeral_days is None else ephemeral_days,
        grace_seconds=parse_duration(grace or config.gc_grace),
        deep_every_seconds=parse_duration(config.gc_deep_every),
        deep=deep,
        dry_run=dry_run,
        force=force,
        wait=wait,
    )
    if not app.home.exists():
        report: dict[str, Any] = {
            "dry_run": dry_run,
            "phase1": {"expired_rows": 0, "artifact_ids": []},
            "phase2": {"ran": False},
            "seconds": 0.0,
        }
    else:
        app.home.check_safe()
        with ProgressLine(app.quiet, "scanning blobs") as line:
            progress = line.advance if line else None
            report = run_gc(
                app.home,
                lambda: open_artifacts(app.home, config, create=False),
                app.now,
                options,
                progress,
            )
    if report_wanted(app.quiet, app.format_option):
        emit_object(report, app.format, table=lambda: _table(report))


def _table(report: dict[str, Any]) -> None:
    phase2 = report["phase2"]
    rows: list[tuple[str, Any]] = [("expired rows (phase 1)", report["phase1"]["expired_rows"])]
    if phase2["ran"]:
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
