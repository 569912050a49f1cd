"""``soloqueue-mem log``: record one agent event (or a stream of them)."""

from typing import Annotated

import typer

from soloqueue_mem.cli import spec
from soloqueue_mem.cli.boundary import boundary
from soloqueue_mem.cli.log_run import run_log
from soloqueue_mem.cli.options import (
    AgentOpt,
    FormatOpt,
    GroupOpt,
    Role,
    RootOpt,
    SessionOpt,
    option,
)
from soloqueue_mem.cli.state import app_context


@boundary
def log(
    ctx: typer.Context,
    text: Annotated[
        str | None,
        typer.Argument(help="The content; '-' reads it from stdin. Omit to read a JSON event."),
    ] = None,
    role: Annotated[Role, option(spec.LOG, "role", help="Who is speaking.")] = Role["user"],
    batch: Annotated[
        bool, option(spec.LOG, "batch", help="Read a JSONL stream of events from stdin.")
    ] = False,
    event_id: Annotated[
        str | None,
        option(spec.LOG, "event_id", help="Idempotency key: a retried call logs nothing twice."),
    ] = None,
    metadata: Annotated[
        str | None, option(spec.LOG, "metadata", help="A JSON object stored with the turn.")
    ] = None,
    offload: Annotated[
        bool,
        option(spec.LOG, "offload", help="Offload any long content, not only tool results."),
    ] = False,
    echo: Annotated[
        bool,
        option(spec.LOG, "echo", help="--batch: print every stored turn, not a summary."),
    ] = False,
    group: GroupOpt = "default",
    agent: AgentOpt = "default",
    session: SessionOpt = None,
    fmt: FormatOpt = None,
    root: RootOpt = None,
) -> None:
    """Log an event to the session's JSONL and Markdown logs and index it for search.

    Forms: `log --role user "text"`; one JSON event (or an array) on stdin; `--batch`
    with one event per line, each of which may name its own group, agent and session.
    OpenAI chat messages are accepted as they are. Prints each stored turn; a batch
    prints a summary (counts) unless --echo or an explicit --format is given.
    Bad input exits 65 with the line number; nothing of a bad line is written.
    """
    app = app_context(ctx, fmt, root)
    run_log(app, text, role.value, batch, event_id, metadata, offload, group, agent, session, echo)
