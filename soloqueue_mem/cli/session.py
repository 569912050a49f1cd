"""``soloqueue-mem session``: list, show, export and end sessions."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from soloqueue_mem.api.shapes import session_json
from soloqueue_mem.cli.boundary import boundary
from soloqueue_mem.cli.options import (
    AgentFilter,
    AgentOpt,
    GroupFilter,
    GroupOpt,
    RootOpt,
    list_limit,
    subcommand,
)
from soloqueue_mem.cli.output import (
    Format,
    emit_list,
    emit_object,
    print_table,
    stderr,
    turn_summary,
    write,
)
from soloqueue_mem.cli.state import AppContext, app_context
from soloqueue_mem.errors import UsageError
from soloqueue_mem.home import validate_id
from soloqueue_mem.sessions.events import SessionKey

if TYPE_CHECKING:
    from soloqueue_mem.sessions.turns import SessionRow

app = typer.Typer(
    help="List, show, export and end sessions; set, get and unset session variables.",
    no_args_is_help=True,
)

# The one scope rule (issue 15 §14): an option or argument given wins, then
# SOLOQUEUE_SESSION / SOLOQUEUE_GROUP / SOLOQUEUE_AGENT, then "default" (or, for
# filters, every scope) — the same in every command.
SessionArg = Annotated[
    str,
    typer.Argument(
        envvar="SOLOQUEUE_SESSION",
        help="Session id (default: $SOLOQUEUE_SESSION).",
        show_default=False,
    ),
]


def _key(group: str, agent: str, session: str) -> SessionKey:
    return SessionKey(
        validate_id("group", group), validate_id("agent", agent), validate_id("session", session)
    )


@subcommand(app, "list")
def list_sessions(
    app_ctx: AppContext,
    group: GroupFilter = None,
    agent: AgentFilter = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", help="Most sessions to list (0: all).")
    ] = 100,
) -> None:
    """Sessions, most recently active first."""
    limit = list_limit(limit)
    with app_ctx.store() as store:
        rows = store.sessions(group=group, agent=agent, limit=limit)
    emit_list((session_json(r) for r in rows), app_ctx.format, table=lambda: _table(rows))


def _table(rows: list[SessionRow]) -> None:
    print_table(
        None,
        ["group", "agent", "session", "turns", "started", "last", "ended"],
        (
            (r.group, r.agent, r.session, r.turn_count, r.started_at, r.last_turn_at,
             r.ended_at or "")
            for r in rows
        ),
    )  # fmt: skip


@subcommand(app, "show")
def show(
    app_ctx: AppContext,
    session: SessionArg,
    group: GroupOpt = "default",
    agent: AgentOpt = "default",
) -> None:
    """Every turn of a session, read from its JSONL log."""
    from soloqueue_mem.sessions.markdown import render_turns

    content = _read(app_ctx, group, agent, session)
    key = content.key
    if app_ctx.format is Format.table:
        print_table(
            f"{key.group}/{key.agent}/{key.session}",
            ["turn", "role", "time", "content"],
            (
                (
                    r["turn_index"],
                    r["role"],
                    r["timestamp"],
                    turn_summary(r.get("content"), r.get("tool_calls"), r.get("tool_results")),
                )
                for r in content.records
            ),
        )
    elif app_ctx.format is Format.text:
        from soloqueue_mem.cli.output import print_text_block

        print_text_block(render_turns(key, content.records, first=True))
    else:
        emit_object(
            {
                "group": key.group,
                "agent": key.agent,
                "session": key.session,
                "turns": content.records,
                "problems": content.problems,
            },
            app_ctx.format,
        )


def _read(app_ctx: AppContext, group: str, agent: str, session: str) -> Any:
    with app_ctx.store() as store:
        content = store.session(session, group=group, agent=agent)
    for problem in content.problems:
        stderr(f"warning: {problem}", app_ctx.quiet)
    return content


class ExportFormat(StrEnum):
    jsonl = "jsonl"
    md = "md"
    openai = "openai"
    anthropic = "anthropic"


# ``--format`` after ``session export``: the global option (``-f json``), or the old
# spelling of ``--as`` (``-f md``; ``jsonl`` means the same either way).
FormatOrAs = StrEnum(  # type: ignore[misc]
    "FormatOrAs", [(name, name) for name in dict.fromkeys([*Format, *ExportFormat])]
)


def _format_or_as(value: Any) -> tuple[Format | None, ExportFormat | None]:
    if value is None:
        return None, None
    if value.value in ExportFormat.__members__:
        return None, ExportFormat(value.value)
    return Format(value.value), None


@app.command("export")
@boundary
def export(
    ctx: typer.Context,
    session: SessionArg,
    as_: Annotated[
        ExportFormat | None,
        typer.Option(
            "--as",
            help="jsonl (the log as recorded), md, openai (the chat messages array) or "
            "anthropic ({system, messages} of the Messages API).",
            case_sensitive=False,
            show_default=False,
        ),
    ] = None,
    format_or_as: Annotated[
        FormatOrAs | None,
        typer.Option(
            "--format",
            "-f",
            hidden=True,
            case_sensitive=False,
            help="The global --format; jsonl, md and openai: deprecated, use --as.",
        ),
    ] = None,
    full: Annotated[
        bool,
        typer.Option(
            "--full", help="openai, anthropic: original tool output instead of references."
        ),
    ] = False,
    group: GroupOpt = "default",
    agent: AgentOpt = "default",
    root: RootOpt = None,
) -> None:
    """Write a session out: its JSONL records, Markdown, or OpenAI or Anthropic messages.

    The messages are the L1 view (offloaded tool output as a reference to its
    artifact, as the agent should send them) unless --full gives the original output.
    """
    from soloqueue_mem.api.store import exported

    fmt, old_as = _format_or_as(format_or_as)
    app_ctx = app_context(ctx, fmt, root)
    if old_as is not None:
        stderr("warning: `session export --format` is deprecated: use --as", app_ctx.quiet)
        as_ = as_ or old_as
    as_ = as_ or ExportFormat.jsonl
    content = _read(app_ctx, group, agent, session)
    write(exported(content.key, content.records, as_.value, full))


@subcommand(app, "end")
def end(
    app_ctx: AppContext,
    session: SessionArg,
    group: GroupOpt = "default",
    agent: AgentOpt = "default",
) -> None:
    """Mark a session ended and turn its new turns into an episode and memories.

    What the user stated becomes memories (quick rules), the episode records the goal,
    tools, errors and outcome, and the scratchpad notes it under recent progress. The
    session's TRANSIENT memories are deleted (transient_cleared).
    """
    with app_ctx.store() as store:
        ended = store.session_end(session, group=group, agent=agent)
    emit_object(ended._asdict(), app_ctx.format)


NameArg = Annotated[str, typer.Argument(help="The variable: 1-128 of A-Z a-z 0-9 . _ -.")]
# ``session set``'s three words: SESSION NAME VALUE, or NAME VALUE with the session in
# $SOLOQUEUE_SESSION (an argument's envvar would take NAME for the session).
SessionOrName = Annotated[
    str,
    typer.Argument(
        help="Session id (default: $SOLOQUEUE_SESSION, when only NAME VALUE are given).",
        show_default=False,
    ),
]


@subcommand(app, "set")
def set_variable(
    app_ctx: AppContext,
    session: SessionOrName,
    name: Annotated[
        str,
        typer.Argument(help="The variable: 1-128 of A-Z a-z 0-9 . _ -.", show_default=False),
    ],
    value: Annotated[
        str | None,
        typer.Argument(help="The value (text; JSON with --json).", show_default=False),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Parse VALUE as JSON.")] = False,
    group: GroupOpt = "default",
    agent: AgentOpt = "default",
) -> None:
    """Set a session variable, shown in context build's scratchpad layer.

    current_task becomes the first item of the scratchpad's current projects (a task it
    replaces goes to recent progress with the date); next_step the first item of next
    steps.
    """
    import os

    from soloqueue_mem.cli.kv import emit_entry, parse_value

    if value is None:  # NAME VALUE: the session is $SOLOQUEUE_SESSION's
        session, name, value = os.environ.get("SOLOQUEUE_SESSION") or "", session, name
        if not session:
            raise UsageError("give SESSION NAME VALUE, or NAME VALUE with $SOLOQUEUE_SESSION set")
    _key(group, agent, session)
    validate_id("variable", name)
    parsed = parse_value(value, as_text=not as_json)
    with app_ctx.store() as store:
        entry = store.session_set(session, name, parsed, group=group, agent=agent)
    emit_entry(app_ctx, entry)


@subcommand(app, "get")
def get_variables(
    app_ctx: AppContext,
    session: SessionArg,
    name: Annotated[str | None, typer.Argument(help="One variable (default: all).")] = None,
    group: GroupOpt = "default",
    agent: AgentOpt = "default",
) -> None:
    """A session variable (exit 3 when unset), or all of them."""
    from soloqueue_mem.cli.kv import emit_entries, emit_entry

    with app_ctx.store() as store:
        if name is None:
            emit_entries(app_ctx, store.session_variables(session, group=group, agent=agent))
        else:
            emit_entry(app_ctx, store.session_get(session, name, group=group, agent=agent))


@subcommand(app, "unset")
def unset_variable(
    app_ctx: AppContext,
    session: SessionArg,
    name: NameArg,
    group: GroupOpt = "default",
    agent: AgentOpt = "default",
) -> None:
    """Remove a session variable (prints what it held). Exit 3 when unset."""
    from soloqueue_mem.cli.kv import emit_entry

    with app_ctx.store() as store:
        entry = store.session_unset(session, name, group=group, agent=agent)
    emit_entry(app_ctx, entry, removed=True)
