"""``soloqueue-mem kv``: an agent's preferences as JSON values by key (seed 000 §2),
and the rendering ``session set|get|unset`` shares for session variables."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from soloqueue_mem import jsonio
from soloqueue_mem.api.base import check_ids
from soloqueue_mem.api.shapes import entry_json
from soloqueue_mem.cli.options import AgentOpt, GroupOpt, subcommand
from soloqueue_mem.cli.output import emit_list, emit_object, print_table
from soloqueue_mem.cli.state import AppContext
from soloqueue_mem.errors import BadInput

if TYPE_CHECKING:
    from soloqueue_mem.state.values import Entry

app = typer.Typer(
    help="Get, set, list and remove an agent's preferences (JSON values by key).",
    no_args_is_help=True,
)
KeyArg = Annotated[str, typer.Argument(help="The key: 1-128 of A-Z a-z 0-9 . _ -.")]


def emit_entry(app_ctx: AppContext, entry: Entry, **extra: Any) -> None:
    emit_object(
        {**entry_json(entry), **extra},
        app_ctx.format,
        table=lambda: _table([entry]),
        text=lambda: jsonio.dumps_compact(entry.value) + "\n",
    )


def emit_entries(app_ctx: AppContext, rows: list[Entry]) -> None:
    emit_list((entry_json(e) for e in rows), app_ctx.format, table=lambda: _table(rows))


def _table(rows: list[Entry]) -> None:
    print_table(
        None,
        ["key", "value", "updated"],
        ((e.key, jsonio.dumps_compact(e.value), e.updated_at) for e in rows),
    )


def parse_value(text: str, as_text: bool) -> Any:
    """The JSON value of a VALUE argument (the argument itself with ``as_text``)."""
    if as_text:
        return text
    try:
        return jsonio.loads(text)
    except BadInput as exc:
        raise BadInput(f"VALUE is not JSON ({exc.reason}); quote a string or use --text") from None


@subcommand(app, "set")
def set_command(
    app_ctx: AppContext,
    key: KeyArg,
    value: Annotated[str, typer.Argument(help="A JSON value: 42, true, '\"vim\"', '{\"a\": 1}'.")],
    as_text: Annotated[
        bool, typer.Option("--text", help="Store VALUE as a string, not as JSON.")
    ] = False,
    group: GroupOpt = "default",
    agent: AgentOpt = "default",
) -> None:
    """Set KEY to a JSON value for this group/agent (replacing what it held)."""
    check_ids(group=group, agent=agent, key=key)
    parsed = parse_value(value, as_text)
    with app_ctx.store() as store:
        emit_entry(app_ctx, store.kv_set(key, parsed, group=group, agent=agent))


@subcommand(app, "get")
def get(
    app_ctx: AppContext,
    key: KeyArg,
    group: GroupOpt = "default",
    agent: AgentOpt = "default",
) -> None:
    """One key's value (--format text: the JSON value alone). Exit 3 when unset."""
    with app_ctx.store() as store:
        emit_entry(app_ctx, store.kv_get(key, group=group, agent=agent))


@subcommand(app, "list")
def list_command(
    app_ctx: AppContext,
    group: GroupOpt = "default",
    agent: AgentOpt = "default",
) -> None:
    """Every key of this group/agent, in key order."""
    with app_ctx.store() as store:
        emit_entries(app_ctx, store.kv_list(group=group, agent=agent))


@subcommand(app, "rm")
def rm(
    app_ctx: AppContext,
    key: KeyArg,
    group: GroupOpt = "default",
    agent: AgentOpt = "default",
) -> None:
    """Remove a key (prints what it held). Exit 3 when unset."""
    with app_ctx.store() as store:
        entry = store.kv_remove(key, group=group, agent=agent)
    emit_entry(app_ctx, entry, removed=True)
