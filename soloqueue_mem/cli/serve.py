"""``soloqueue-mem mcp`` and ``soloqueue-mem serve``: the Store behind a protocol."""

from __future__ import annotations

import importlib
from typing import Annotated

import typer

from soloqueue_mem.cli.boundary import boundary
from soloqueue_mem.cli.options import AgentFilter, GroupFilter, RootOpt
from soloqueue_mem.cli.state import app_context
from soloqueue_mem.errors import MissingExtra, UsageError
from soloqueue_mem.home import validate_id

MaxOutputOpt = Annotated[
    int,
    typer.Option("--max-output-tokens", help="Cap on one answer, in (estimated) tokens."),
]


def require(extra: str, *modules: str) -> None:
    """MissingExtra naming the install command unless every module can be imported."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError:
            raise MissingExtra(
                f"{module} is not installed; install it with: pip install 'soloqueue-mem[{extra}]'"
            ) from None


def _scope(group: str | None, agent: str | None) -> tuple[str | None, str | None]:
    for kind, value in (("group", group), ("agent", agent)):
        if value is not None:
            validate_id(kind, value)
    return group, agent


@boundary
def mcp_command(
    ctx: typer.Context,
    group: GroupFilter = None,
    agent: AgentFilter = None,
    max_output_tokens: MaxOutputOpt = 4000,
    root: RootOpt = None,
) -> None:
    """Serve the memory to an MCP client over stdio (needs the mcp extra).

    Tools: recall, trace, remember, forget, read_artifact (byte ranges), context_build,
    session_export. With --group/--agent every tool stays in that scope. Answers are
    JSON cut to --max-output-tokens (lists shortened, text and artifacts paged).
    """
    require("mcp", "mcp")
    if max_output_tokens < 200:
        raise UsageError("--max-output-tokens must be at least 200")
    from soloqueue_mem.api.mcp_server import Scope, serve_stdio

    app = app_context(ctx, None, root)
    with app.store() as store:
        serve_stdio(store, Scope(*_scope(group, agent)), max_output_tokens)
