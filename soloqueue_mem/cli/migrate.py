"""``soloqueue-mem migrate --to postgresql://…``: copy the SQLite store into PostgreSQL."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from soloqueue_mem.cli.options import command
from soloqueue_mem.cli.output import emit_object, print_table, stderr
from soloqueue_mem.cli.state import AppContext

CONFLICTS_EXIT = 65


@command
def migrate(
    app: AppContext,
    to: Annotated[
        str, typer.Option("--to", help="The PostgreSQL database: postgresql://user@host/db.")
    ],
) -> None:
    """Copy this store's sessions, turns and memories (with every version), episodes,
    graph memory, extraction state, scratchpads, working memory, kv, session variables
    and embedding vectors into a PostgreSQL database. Resumable: run it again to finish an
    interrupted copy; what is there already is left alone. Every row is read back and
    compared (counts and SHA-256 in the report); exit 65 when the database holds some
    differently."""
    from soloqueue_mem.storage.base import check_url, shown_url
    from soloqueue_mem.storage.postgres.copy_sqlite import migrate_store

    url = check_url(to, "--to")
    report = {"to": shown_url(url), **migrate_store(app.home, app.config, url)}
    emit_object(report, app.format, table=lambda: _table(report))
    if not report["verified"]:
        stderr(
            f"warning: {_conflicts(report)} rows are held "
            "differently in the database and were left as they are (see conflicts)",
            app.quiet,
        )
        raise typer.Exit(CONFLICTS_EXIT)


def _conflicts(report: dict[str, Any]) -> int:
    counts = [*report["tables"].values(), *report["records"].values()]
    return sum(t["conflicts"] for t in counts)


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
    rows += [
        [kind, t["source"], t["copied"], t["existing"], t["conflicts"], "per record"]
        for kind, t in report["records"].items()
    ]
    print_table(f"migrated to {report['to']}", columns, rows)
