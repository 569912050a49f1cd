"""``hook claude [EVENT]``: Claude Code hooks (the Typer side: help and completion).

A real hook call never gets here: ``cli.fast`` runs every ``hook claude`` call that
does not ask for help, without Typer, so the hook stays as quick as ``log`` and a bad
option cannot exit 2 (see :mod:`soloqueue_mem.cli.hook_run`).
"""

from typing import Annotated

import typer

from soloqueue_mem.cli import spec
from soloqueue_mem.cli.options import AgentOpt, RootOpt, option
from soloqueue_mem.cli.state import app_context

app = typer.Typer(help="Hooks for agent harnesses: read the hook's JSON on stdin.")


@app.command("claude")
def claude(
    ctx: typer.Context,
    event: Annotated[
        str | None,
        typer.Argument(
            help="SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, PostToolUseFailure, "
            "PreCompact, Stop or SessionEnd (default: the payload's hook_event_name).",
            show_default=False,
        ),
    ] = None,
    group: Annotated[
        str | None,
        option(
            spec.GROUP,
            help="Group id (default: hook_group in config.toml, else one group per project).",
            show_default=False,
        ),
    ] = None,
    agent: AgentOpt = "default",
    root: RootOpt = None,
) -> None:
    """Handle one Claude Code hook event; always exits 0 (fail-open).

    SessionStart prints a brief of the memory (scratchpad, core memory, latest
    episode) as additional context; UserPromptSubmit logs the prompt (hook_recall adds
    recalled memories); PreToolUse/PostToolUse log the tool call and result;
    PreCompact runs context compress; Stop logs the last reply; SessionEnd ends the
    session. Errors go to logs/hook-errors.jsonl in the store and are counted in stats.
    """
    from soloqueue_mem.cli.hook_run import run_claude_hook

    run_claude_hook(app_context(ctx, None, root), event, group, agent)
