"""``soloqueue-mem identity``: SOUL.md, AGENT.md, USER.md, MEMORY.md compiled for the
system prompt (seed 003 §6)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from soloqueue_mem.cli.options import subcommand
from soloqueue_mem.cli.output import emit_list, print_table
from soloqueue_mem.cli.state import AppContext
from soloqueue_mem.errors import BadInput, UsageError

if TYPE_CHECKING:
    from soloqueue_mem.context.identity import Compiled

app = typer.Typer(
    help="Show, compile and edit the identity files the system prompt is built from.",
    no_args_is_help=True,
)

NameArg = Annotated[
    str, typer.Argument(help="SOUL.md, AGENT.md, USER.md or MEMORY.md (or soul, agent ...).")
]


def _json(item: Compiled) -> dict[str, Any]:
    return {**item._asdict(), "path": f"identity/{item.name}"}


def _render(items: list[Compiled], app_ctx: AppContext) -> None:
    emit_list(
        (_json(c) for c in items),
        app_ctx.format,
        table=lambda: print_table(
            None,
            ["file", "status", "tokens", "budget", "compiled at"],
            ((c.name, c.status, c.tokens, c.budget, c.compiled_at or "") for c in items),
        ),
        text=lambda: "\n\n".join(c.text for c in items if c.text) + "\n",
    )


def _compile(app_ctx: AppContext, force: bool) -> list[Compiled]:
    from soloqueue_mem.context.identity import (
        BUDGETS,
        SOURCES,
        Compiled,
        compile_identity,
        folder,
    )

    if not folder(app_ctx.home.root).is_dir():  # nothing to compile: create nothing
        return [Compiled(name, "missing", "", 0, BUDGETS[name], None) for name in SOURCES]
    app_ctx.home.check_safe()
    return compile_identity(app_ctx.home.root, app_ctx.now, force=force)


@subcommand(app, "show")
def show(app_ctx: AppContext) -> None:
    """Each identity file as `context build` uses it (compiled first if its source
    changed); --format text prints the compiled texts."""
    _render(_compile(app_ctx, force=False), app_ctx)


@subcommand(app, "compile")
def compile_command(
    app_ctx: AppContext,
    force: Annotated[
        bool, typer.Option("--force", help="Compile every source, changed or not.")
    ] = False,
) -> None:
    """Compile the sources that changed since their last compile (status compiled),
    keep the rest (cached)."""
    _render(_compile(app_ctx, force), app_ctx)


def source_name(name: str) -> str:
    from soloqueue_mem.context.identity import SOURCES

    wanted = name.strip()
    wanted = wanted if wanted.upper().endswith(".MD") else f"{wanted}.md"
    for source in SOURCES:
        if source.lower() == wanted.lower():
            return source
    raise BadInput(f"unknown identity file {name!r} (use {', '.join(SOURCES)})")


@subcommand(app, "edit")
def edit(
    app_ctx: AppContext,
    name: NameArg,
) -> None:
    """Edit a source in $VISUAL or $EDITOR (default vi), then compile what changed."""
    from soloqueue_mem.context.identity import folder
    from soloqueue_mem.home import ensure_private_dir, replace_private_file

    source = source_name(name)
    if not sys.stdin or not sys.stdin.isatty():
        raise UsageError("edit needs a terminal; write the file itself in scripts")
    app_ctx.home.ensure()
    path = folder(app_ctx.home.root) / source
    current = path.read_bytes() if path.is_file() else b""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.TemporaryDirectory() as scratch:
        draft = Path(scratch) / source
        draft.write_bytes(current)
        if subprocess.call([*editor.split(), str(draft)]) != 0:  # noqa: S603 - the user's editor
            raise UsageError(f"{editor} exited with an error; {source} is unchanged")
        edited = draft.read_bytes()
    if edited != current:
        ensure_private_dir(app_ctx.home.root, path.parent)
        replace_private_file(path, edited)
    _render(_compile(app_ctx, force=False), app_ctx)
