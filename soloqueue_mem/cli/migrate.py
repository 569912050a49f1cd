"""``soloqueue-mem migrate --to postgresql://…``: copy the SQLite store into PostgreSQL."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from soloqueue_mem.cli.boundary import boundary
from soloqueue_mem.cli.options import FormatOpt, RootOpt
from soloqueue_mem.cli.output import emit_object, print_table, stderr
from soloqueue_mem.cli.state import app_context
from soloqueue_mem.errors import NotFound

CONFLICTS_EXIT = 65


@boundary
def migrate(
    ctx: typer.Context,
    to: Annotated[
        str, typer.Option("--to", help="The PostgreSQL database: postgresql://user@host/db.")
    ],
    fmt: FormatOpt = None,
    root: RootOpt = None,
) -> None:
    """Copy this store's sessions, turns and memories (with every version), episodes and
    graph memory into a PostgreSQL database. Resumable: run it again to finish an
    interrupted copy; what is there already is left alone. Every row is read back and
    compared (counts and SHA-256 in the report); exit 65 when the database holds some
    differently."""
    from soloqueue_mem.db.stores import open_graph, open_memory
    from soloqueue_mem.pg.connect import connect
    from soloqueue_mem.pg.copy_sqlite import copy_store
    from soloqueue_mem.storage.base import check_url, shown_url

    app = app_context(ctx, fmt, root)
    url = check_url(to, "--to")
    source = open_memory(app.home, app.config, create=False)
    if source is None:
        raise NotFound(f"no SQLite store to migrate in {app.home.root}")
    graph = open_graph(app.home, app.config, create=False)
    try:
        target = connect(url)
        try:
            report = {"to": shown_url(url), **copy_store(source, target, graph=graph)}
        finally:
            target.close()
    finally:
        source.close()
        if graph is not None:
            graph.close()
    emit_object(report, app.format, table=lambda: _table(report))
    if not report["verified"]:
        stderr(
            f"warning: {sum(t['conflicts'] for t in report['tables'].values())} rows are held "
            "differently in the database and were left as they are (see conflicts)",
            app.quiet,
        )
        raise typer.Exit(CONFLICTS_EXIT)


def _table(report: dict[str, Any]) -> None:
    columns = ["table", "source", "copied", "existing", "conflicts", "checksums"]
    rows = [
        [
            name,
            t["source"],
            t["copied"],
            t["existing"],
            t["conflicts"],
            "equal" if t["source_sha256"] == t["target_sha256"] else "differ",
        ]
        for name, t in report["tables"].items()
    ]
    print_table(f"migrated to {report['to']}", columns, rows)
