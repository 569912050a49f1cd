"""``soloqueue-mem scratchpad``: working notes that outlive a session (seed 003 §4.3)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer

from soloqueue_mem.cli.options import AgentOpt, GroupOpt, subcommand
from soloqueue_mem.cli.output import emit_object, print_table
from soloqueue_mem.cli.source import argument_or_stdin
from soloqueue_mem.cli.state import AppContext
from soloqueue_mem.errors import UsageError
from soloqueue_mem.home import validate_id

app = typer.Typer(
    help="Show, set or edit the scratchpad: current projects, recent progress, open questions,"
    " next steps (headings in the language setting's language).",
    no_args_is_help=True,
)


SHOWN = ("group", "agent", "content", "updated_at")


def _emit(app_ctx: AppContext, pad: object) -> None:
    from soloqueue_mem.memory.scratchpad import as_json

    data = as_json(pad)  # type: ignore[arg-type]
    emit_object(
        data,
        app_ctx.format,
        # the Markdown as written (its sections' items are parsed from it, for JSON)
        table=lambda: print_table(None, ["field", "value"], ((k, data[k]) for k in SHOWN)),
        text=lambda: data["content"],
    )


def _scope(group: str, agent: str) -> tuple[str, str]:
    return validate_id("group", group), validate_id("agent", agent)


@subcommand(app, "show")
def show(app_ctx: AppContext, group: GroupOpt = "default", agent: AgentOpt = "default") -> None:
    """The scratchpad and its parsed fields (an empty template before the first write)."""
    _emit(app_ctx, _current(app_ctx, _scope(group, agent)))


def _current(app_ctx: AppContext, scope: tuple[str, str]) -> Any:
    """The stored scratchpad, or the empty template (a read never creates a store)."""
    group, agent = scope
    with app_ctx.store() as store:
        return store.scratchpad(group=group, agent=agent)


def _save(app_ctx: AppContext, scope: tuple[str, str], content: str) -> None:
    group, agent = scope
    with app_ctx.store() as store:
        pad = store.scratchpad_set(content, group=group, agent=agent)
    _emit(app_ctx, pad)


@subcommand(app, "set")
def set_command(
    app_ctx: AppContext,
    content: Annotated[
        str, typer.Argument(help="The Markdown (at most 2000 characters); '-' for stdin.")
    ],
    group: GroupOpt = "default",
    agent: AgentOpt = "default",
) -> None:
    """Replace the scratchpad."""
    scope = _scope(group, agent)
    content = argument_or_stdin(content)
    _save(app_ctx, scope, content)


@subcommand(app, "edit")
def edit(app_ctx: AppContext, group: GroupOpt = "default", agent: AgentOpt = "default") -> None:
    """Edit the scratchpad in $VISUAL or $EDITOR (default vi), like git commit."""
    scope = _scope(group, agent)
    if not sys.stdin or not sys.stdin.isatty():
        raise UsageError("edit needs a terminal; use `scratchpad set -` in scripts")
    current = _current(app_ctx, scope).content
    from soloqueue_mem.cli.source import read_file

    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "scratchpad.md"
        path.write_text(current, encoding="utf-8")
        if subprocess.call([*editor.split(), str(path)]) != 0:  # noqa: S603 - the user's editor
            raise UsageError(f"{editor} exited with an error; the scratchpad is unchanged")
        edited = read_file(path, app_ctx.config.max_input_bytes)
    _save(app_ctx, scope, edited)
