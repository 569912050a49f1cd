"""The ``soloqueue-mem`` command line: parse, call the core, render. Nothing else.

Start-up matters because hooks run ``log`` once per agent turn: modules here import
only Typer, the standard library and light core modules at top level; Rich, jieba
and tiktoken load inside the functions that need them.
"""

from __future__ import annotations

from typing import Annotated

import typer

from soloqueue_mem import __version__
from soloqueue_mem.cli import log as log_cli
from soloqueue_mem.cli import ops, session, trace
from soloqueue_mem.cli.options import FormatOpt, RootOpt
from soloqueue_mem.cli.output import Format
from soloqueue_mem.cli.state import AppContext
from soloqueue_mem.clock import now

app = typer.Typer(
    name="soloqueue-mem",
    help="Local-first memory for LLM agents: session logs, search and context on SQLite.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,  # our boundary reports errors; no Rich tracebacks
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"soloqueue-mem {__version__}")
        raise typer.Exit()


@app.callback()
def root_callback(
    ctx: typer.Context,
    fmt: FormatOpt = None,
    root: RootOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress or warnings on stderr.")] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """Local-first memory for LLM agents.

    Data lives in one directory: --root, else SOLOQUEUE_HOME, else the nearest
    .soloqueue/ above the working directory, else the user data directory.
    Output is a table on a terminal and JSON in a pipe (--format to choose).
    Exit codes: 0 ok, 1 unexpected, 2 usage, 3 not found, 65 bad input, 74 I/O, 75 busy.
    """
    ctx.obj = AppContext(root, fmt or Format.auto, quiet, now())


app.command("log")(log_cli.log)
app.command("trace")(trace.trace_command)
app.add_typer(session.app, name="session")
app.command("init")(ops.init)
app.command("path")(ops.path)
app.command("stats")(ops.stats)
app.command("demo")(ops.demo)


def main() -> None:
    app()
