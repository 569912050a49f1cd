"""``soloqueue-mem mcp`` and ``soloqueue-mem serve``: the Store behind a protocol."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Annotated

import typer

from soloqueue_mem.api.base import check_ids
from soloqueue_mem.cli.boundary import boundary
from soloqueue_mem.cli.options import AgentFilter, GroupFilter, RootOpt
from soloqueue_mem.cli.state import app_context
from soloqueue_mem.errors import MissingExtra, UsageError, install_hint

if TYPE_CHECKING:
    from soloqueue_mem.api.store import Store

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
            raise MissingExtra(f"{module} is not installed; {install_hint(extra)}") from None


def _scope(group: str | None, agent: str | None) -> tuple[str | None, str | None]:
    check_ids(group=group, agent=agent)
    return group, agent


def _live_store(ctx: typer.Context, root: str | None) -> Store:
    """A Store on the real clock (a server outlives the invocation's pinned time)."""
    from soloqueue_mem.api.store import Store

    app = app_context(ctx, None, root)
    store = Store(app.home.root, config=app.config)
    try:
        store.warm()
    except BaseException:
        store.close()
        raise
    return store


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
    session_export, query (recent plus long-term memory), graph_recall, graph_remember.
    With --group/--agent every tool stays in that scope. Answers are
    JSON cut to --max-output-tokens (lists shortened, text and artifacts paged).
    """
    require("mcp", "mcp")
    if max_output_tokens < 200:
        raise UsageError("--max-output-tokens must be at least 200")
    from soloqueue_mem.api.mcp_server import Scope, serve_stdio

    with _live_store(ctx, root) as store:
        serve_stdio(store, Scope(*_scope(group, agent)), max_output_tokens)


@boundary
def serve_command(
    ctx: typer.Context,
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on (loopback by default).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", "-p", help="Port (0: any free one).")] = 8765,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="SOLOQUEUE_API_TOKEN",
            help="Bearer token every call must send (default: the one in <root>/serve.token, "
            "made on the first serve).",
            show_default=False,
        ),
    ] = None,
    no_auth: Annotated[
        bool,
        typer.Option(
            "--no-auth", help="No token (loopback only): any local user can use the port."
        ),
    ] = False,
    max_body_bytes: Annotated[
        int, typer.Option("--max-body-bytes", help="Largest request body accepted.")
    ] = 1 << 20,
    root: RootOpt = None,
) -> None:
    """Serve the HTTP API (needs the server extra): memory/ingest and
    memory/query, plus log, trace, recall, remember and artifact reads.

    Prints its URL on stderr once it accepts connections, with the token as Jupyter
    does (http://127.0.0.1:PORT/?token=...: opening it logs a browser in); every call
    but /health sends Authorization: Bearer TOKEN. Stops on Ctrl-C. Errors are JSON
    objects {"error": {"code", "message", "exit_code"}} with the exit code mapped to an
    HTTP status (2→400, 3→404, 65→422, 69→501, 75→503, others 500).

    It also listens on <root>/serve.sock, where a short `recall --format json|jsonl`
    process on this host hands its query over instead of opening the store (and
    loading the embedding models, or connecting to PostgreSQL) itself.
    """
    require("server", "starlette", "uvicorn")
    if not 0 <= port <= 65535:
        raise UsageError("--port must be between 0 and 65535")
    if max_body_bytes < 1024:
        raise UsageError("--max-body-bytes must be at least 1024")
    if no_auth and token:
        raise UsageError("give --token or --no-auth, not both")
    from soloqueue_mem.api.guard import stored_token
    from soloqueue_mem.api.http import check_bind, serve
    from soloqueue_mem.cli.output import stderr

    if no_auth:
        check_bind(host, None)  # before opening the store: a usage error
    with _live_store(ctx, root) as store:
        if no_auth:
            stderr(
                "warning: --no-auth: any local user can read and write this store through the port"
            )
        else:
            token = token or stored_token(store.home)
        ready = lambda url: stderr(f"serving on {url}")  # noqa: E731 - always shown
        note = lambda message: stderr(f"note: {message}")  # noqa: E731
        serve(store, host, port, token, max_body_bytes, ready, note)
