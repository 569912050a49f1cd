"""``soloqueue-mem attach`` and ``attachment``: files and media (seed 003 §4.4)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from soloqueue_mem.api.base import check_ids
from soloqueue_mem.cli.options import (
    AgentFilter,
    AgentOpt,
    GroupFilter,
    GroupOpt,
    SessionFilter,
    SessionOpt,
    TagFilter,
    checked_limit,
    command,
    subcommand,
)
from soloqueue_mem.cli.output import emit_list, emit_object, print_table
from soloqueue_mem.cli.state import AppContext
from soloqueue_mem.errors import BadInput, UsageError

if TYPE_CHECKING:
    from soloqueue_mem.memory.attachments import Attachment

app = typer.Typer(help="List, show and remove attachments.", no_args_is_help=True)

RefArg = Annotated[str, typer.Argument(help="Attachment id (or a unique prefix of 4+ digits).")]
NOT_HERE = "its bytes are not in this data directory (attached on another host, or removed)"


def attachment_json(attachment: Attachment) -> dict[str, Any]:
    data = attachment._asdict()
    data["artifact_id"] = None if attachment.artifact_id is None else str(attachment.artifact_id)
    return data


def _table(rows: list[Attachment]) -> None:
    print_table(
        None,
        ["id", "created", "direction", "filename", "size", "description"],
        (
            (a.id[:12], a.created_at, a.direction, a.filename, a.file_size, a.description[:60])
            for a in rows
        ),
    )


@command
def attach(
    app_ctx: AppContext,
    source: Annotated[str, typer.Argument(help="The file to attach, or '-' for stdin.")],
    direction: Annotated[
        str, typer.Option("--direction", help="inbound (the user sent it) or outbound.")
    ] = "inbound",
    description: Annotated[
        str, typer.Option("--description", "-d", help="What it shows or contains.")
    ] = "",
    transcription: Annotated[
        str, typer.Option("--transcription", help="What is said in it (audio, video).")
    ] = "",
    tag: Annotated[
        list[str] | None, typer.Option("--tag", "-t", help="A tag (repeatable).")
    ] = None,
    name: Annotated[
        str | None,
        typer.Option("--name", help="Its file name (default: FILE's; needed for '-')."),
    ] = None,
    mime: Annotated[
        str | None, typer.Option("--mime", help="Media type (default: from the name).")
    ] = None,
    url: Annotated[str, typer.Option("--url", help="Where it lives remotely.")] = "",
    duration: Annotated[
        str,
        typer.Option(
            "--duration",
            help="Kept for: permanent, or 30d, 12h ... (consolidate removes it after).",
        ),
    ] = "permanent",
    group: GroupOpt = "default",
    agent: AgentOpt = "default",
    session: SessionOpt = None,
) -> None:
    """Attach a file: its bytes in the CAS (user:persistent); its description,
    transcription, tags and extracted text (plain text, Markdown, JSON, HTML) are what
    `recall` finds it by (`--channels attachments` for attachments alone)."""
    from datetime import timedelta
    from pathlib import Path

    from soloqueue_mem.cli.artifact_run import open_source
    from soloqueue_mem.clock import parse_duration
    from soloqueue_mem.memory.attach import NewAttachment, check

    check_ids(group=group, agent=agent, session=session)
    filename = name if name is not None else Path(source).name
    if source == "-" and name is None:
        raise BadInput("give --name for an attachment read from stdin")
    expires = None
    if duration.strip().lower() != "permanent":
        expires = app_ctx.now + timedelta(seconds=parse_duration(duration))
    new = NewAttachment(
        filename, group, agent, direction, description, transcription, tuple(tag or ()),
        session or "", mime, url, expires,
    )  # fmt: skip
    check(new)
    with open_source(source, app_ctx.config.max_artifact_bytes, "max_artifact_bytes") as given:
        with app_ctx.store() as store:
            row = store.attach(given, new)
    emit_object(attachment_json(row), app_ctx.format, table=lambda: _table([row]))


@subcommand(app, "list")
def list_command(
    app_ctx: AppContext,
    direction: Annotated[
        str | None, typer.Option("--direction", help="Only inbound or outbound.")
    ] = None,
    tag: TagFilter = None,
    session: SessionFilter = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="Most to list (1-1000).")] = 100,
    group: GroupFilter = None,
    agent: AgentFilter = None,
) -> None:
    """Attachments that have not expired, newest first."""

    from soloqueue_mem.memory.attachments import DIRECTIONS

    check_ids(group=group, agent=agent, session=session)
    if direction is not None and direction not in DIRECTIONS:
        raise UsageError(f"--direction must be inbound or outbound, not {direction!r}")
    checked_limit(limit, 1000)
    with app_ctx.store() as store:
        rows = store.attachments(
            group=group, agent=agent, session=session, direction=direction, tag=tag, limit=limit
        )
    emit_list((attachment_json(a) for a in rows), app_ctx.format, table=lambda: _table(rows))


@subcommand(app, "show")
def show(app_ctx: AppContext, ref: RefArg) -> None:
    """One attachment, with its extracted text (a note on stderr when its bytes are not
    in this data directory: attached on another host sharing the database)."""
    from soloqueue_mem.artifacts.cas import check
    from soloqueue_mem.cli.output import stderr

    with app_ctx.store() as store:
        row = store.attachment(ref)
    emit_object(attachment_json(row), app_ctx.format, table=lambda: _table([row]))
    if check(app_ctx.home, row.local_path, row.file_size, row.content_hash, rehash=False) != "ok":
        stderr(f"note: {NOT_HERE}", app_ctx.quiet)


@subcommand(app, "rm")
def rm(app_ctx: AppContext, ref: RefArg) -> None:
    """Remove an attachment and its artifact row (`gc --deep` frees the blob)."""
    with app_ctx.store() as store:
        row = store.attachment_remove(ref)
    emit_object({**attachment_json(row), "removed": True}, app_ctx.format)
