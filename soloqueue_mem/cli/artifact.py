"""``soloqueue-mem artifact``: the L4 content-addressed store."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from soloqueue_mem.cli import spec
from soloqueue_mem.cli.artifact_run import artifact_json, open_catalog, rows_table, run_save
from soloqueue_mem.cli.options import GroupFilter, TagFilter, list_limit, option, subcommand
from soloqueue_mem.cli.output import emit_list, emit_object
from soloqueue_mem.cli.state import AppContext

app = typer.Typer(
    help="Save, read, list, tag and remove artifacts (content-addressed blobs).",
    no_args_is_help=True,
)

RefArg = Annotated[str, typer.Argument(help="Artifact id (a number) or its full sha256.")]


@subcommand(app, "save")
def save(
    app_ctx: AppContext,
    source: Annotated[str, typer.Argument(help="A file to store, or '-' for stdin.")],
    title: Annotated[str | None, option(spec.SAVE, "title", help="A title.")] = None,
    tag: Annotated[
        list[str] | None,
        option(
            spec.SAVE,
            "tag",
            help="A tag (repeatable): "
            "sys:ephemeral is removed by gc after some days, user:persistent never.",
        ),
    ] = None,
    group: Annotated[
        str | None,
        option(
            spec.SAVE,
            "group",
            help="Group it belongs to (default: $SOLOQUEUE_GROUP).",
            show_default=False,
        ),
    ] = None,
    author: Annotated[str | None, option(spec.SAVE, "author", help="Who made it.")] = None,
    mime: Annotated[
        str | None, option(spec.SAVE, "mime", help="Media type, e.g. text/plain.")
    ] = None,
) -> None:
    """Store a file (streamed, hashed with SHA-256, deduplicated) and catalog it."""
    run_save(app_ctx, source, title, tag or (), group, author, mime)


@subcommand(app, "read")
def read(
    app_ctx: AppContext,
    ref: RefArg,
    meta: Annotated[bool, typer.Option("--meta", help="Print the metadata instead.")] = False,
) -> None:
    """Write an artifact's exact bytes to stdout (checked against its hash first)."""
    from soloqueue_mem.artifacts.store import read as read_artifact

    with open_catalog(app_ctx, create=False) as conn:
        artifact, chunks = read_artifact(app_ctx.home, conn, ref)
        if meta:
            emit_object(artifact_json(artifact), app_ctx.format)
            return
        out = sys.stdout.buffer
        for chunk in chunks:
            out.write(chunk)
        out.flush()


@subcommand(app, "show")
def show(app_ctx: AppContext, ref: RefArg) -> None:
    """An artifact's metadata."""
    with app_ctx.store() as store:
        artifact = store.artifact(ref)
    emit_object(artifact_json(artifact), app_ctx.format, table=lambda: rows_table([artifact]))


@subcommand(app, "list")
def list_command(
    app_ctx: AppContext,
    tag: TagFilter = None,
    group: GroupFilter = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="Most to list (0: all).")] = 100,
) -> None:
    """Artifacts, newest first."""
    with app_ctx.store() as store:
        rows = store.artifacts(tag=tag, group=group, limit=list_limit(limit))
    emit_list((artifact_json(a) for a in rows), app_ctx.format, table=lambda: rows_table(rows))


@subcommand(app, "tag")
def tag_command(
    app_ctx: AppContext,
    ref: RefArg,
    add: Annotated[list[str] | None, typer.Argument(help="Tags to add.")] = None,
    remove: Annotated[
        list[str] | None, typer.Option("--remove", help="A tag to remove (repeatable).")
    ] = None,
) -> None:
    """Add or remove tags, e.g. keep an offloaded output: `artifact tag 12 user:persistent`."""
    from soloqueue_mem.artifacts.store import tag as tag_artifact

    with open_catalog(app_ctx, create=False) as conn:
        artifact = tag_artifact(conn, ref, add or [], remove or [])
    emit_object(artifact_json(artifact), app_ctx.format, table=lambda: rows_table([artifact]))


@subcommand(app, "rm")
def rm(app_ctx: AppContext, ref: RefArg) -> None:
    """Remove an artifact's row; its blob is deleted by `gc --deep` once unreferenced."""
    from soloqueue_mem.artifacts.store import remove

    with open_catalog(app_ctx, create=False) as conn:
        artifact = remove(conn, ref)
    emit_object({**artifact_json(artifact), "removed": True}, app_ctx.format)
