"""``soloqueue-mem trace``: search raw turns (level 2 retrieval)."""

from __future__ import annotations

from typing import Annotated

import typer

from soloqueue_mem.cli import spec
from soloqueue_mem.cli.options import AgentFilter, GroupFilter, Role, command, option
from soloqueue_mem.cli.state import AppContext
from soloqueue_mem.cli.trace_run import run_trace


@command
def trace_command(
    app_ctx: AppContext,
    query: Annotated[str, typer.Argument(help="What to look for; '-' reads it from stdin.")],
    group: GroupFilter = None,
    agent: AgentFilter = None,
    session: Annotated[
        str | None, option(spec.TRACE, "session", help="Only this session.", show_default=False)
    ] = None,
    role: Annotated[
        Role | None, option(spec.TRACE, "role", help="Only turns with this role.")
    ] = None,
    since: Annotated[
        str | None,
        option(spec.TRACE, "since", help="Only turns since a time or a duration ago (3d)."),
    ] = None,
    limit: Annotated[int, option(spec.TRACE, "limit", help="Most hits to return (1-1000).")] = 10,
) -> None:
    """Search logged turns, with their tool inputs and results (Chinese and English).

    Words are matched independently (any of them), best BM25 matches first; Chinese is
    segmented like jieba. Turns a crashed writer left unindexed are found in the
    JSONL logs. Scope with --group/--agent/--session; nothing outside it is returned.
    """
    run_trace(
        app_ctx,
        query,
        group,
        agent,
        session,
        role.value if role else None,
        since,
        limit,
    )
