"""The Typer application: the root callback and the command registry.

Command modules are imported only for the command being run (see ``COMMANDS``).
"""

import importlib
import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from soloqueue_mem import __version__
from soloqueue_mem.cli import spec
from soloqueue_mem.cli.boundary import boundary, report, use_json_errors
from soloqueue_mem.cli.examples import epilog
from soloqueue_mem.cli.options import FormatOpt, RootOpt, option
from soloqueue_mem.cli.output import Format, use_fields
from soloqueue_mem.cli.state import AppContext
from soloqueue_mem.clock import now

# name -> (module, attribute, is_group). Modules are imported only for the command
# being run: building every Typer command costs ~1.5 ms each, paid on every `log`.
COMMANDS: dict[str, tuple[str, str, bool]] = {
    "log": ("soloqueue_mem.cli.log", "log", False),
    "trace": ("soloqueue_mem.cli.trace", "trace_command", False),
    "session": ("soloqueue_mem.cli.session", "app", True),
    "remember": ("soloqueue_mem.cli.memory", "remember", False),
    "memory": ("soloqueue_mem.cli.memory", "app", True),
    "recall": ("soloqueue_mem.cli.recall", "recall_command", False),
    "episode": ("soloqueue_mem.cli.episode", "app", True),
    "graph": ("soloqueue_mem.cli.graph", "app", True),
    "scratchpad": ("soloqueue_mem.cli.scratchpad", "app", True),
    "context": ("soloqueue_mem.cli.context", "app", True),
    "identity": ("soloqueue_mem.cli.identity", "app", True),
    "artifact": ("soloqueue_mem.cli.artifact", "app", True),
    "attach": ("soloqueue_mem.cli.attachment", "attach", False),
    "attachment": ("soloqueue_mem.cli.attachment", "app", True),
    "gc": ("soloqueue_mem.cli.gc", "gc", False),
    "consolidate": ("soloqueue_mem.cli.consolidate", "consolidate", False),
    "index": ("soloqueue_mem.cli.index", "index_command", False),
    "kv": ("soloqueue_mem.cli.kv", "app", True),
    "working": ("soloqueue_mem.cli.working", "app", True),
    "promote": ("soloqueue_mem.cli.working", "promote", False),
    "query": ("soloqueue_mem.cli.working", "query_command", False),
    "init": ("soloqueue_mem.cli.ops", "init", False),
    "path": ("soloqueue_mem.cli.ops", "path", False),
    "stats": ("soloqueue_mem.cli.ops", "stats", False),
    "verify": ("soloqueue_mem.cli.verify", "verify", False),
    "export": ("soloqueue_mem.cli.transfer", "export", False),
    "import": ("soloqueue_mem.cli.transfer", "import_command", False),
    "migrate": ("soloqueue_mem.cli.migrate", "migrate", False),
    "demo": ("soloqueue_mem.cli.ops", "demo", False),
    "completion": ("soloqueue_mem.cli.completion", "completion", False),
    "hook": ("soloqueue_mem.cli.hook", "app", True),
    "mcp": ("soloqueue_mem.cli.serve", "mcp_command", False),
    "serve": ("soloqueue_mem.cli.serve", "serve_command", False),
}
_GLOBAL_WITH_VALUE = {name for opt in spec.GLOBAL if opt.kind == spec.VALUE for name in opt.names}
_GLOBAL_FLAGS = {name for opt in spec.GLOBAL if opt.kind == spec.FLAG for name in opt.names}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"soloqueue-mem {__version__}")
        raise typer.Exit()


@boundary
def root_callback(
    ctx: typer.Context,
    fmt: FormatOpt = None,
    root: RootOpt = None,
    quiet: Annotated[
        bool, option(spec.GLOBAL, "quiet", help="No progress or warnings on stderr.")
    ] = False,
    fields: Annotated[
        str | None,
        option(
            spec.GLOBAL,
            "fields",
            help="Only these fields of each listed item, in this order: id,content.",
            show_default=False,
        ),
    ] = None,
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
    use_fields(fields)
    ctx.obj = AppContext(root, fmt or Format.auto, quiet, now())


def hoist_global_flags(argv: list[str]) -> list[str]:
    """``argv`` with ``--quiet``/``-q`` and ``--fields X`` given after the command moved
    before it.

    ``--format`` and ``--root`` are options of every command as well; ``--quiet`` and
    ``--fields`` are only the root's, so Click would refuse them after the command.
    Tokens after ``--`` stay where they are (they are arguments)."""
    head, rest = [], list(argv)
    if "--" in rest:
        cut = rest.index("--")
        rest, tail = rest[:cut], rest[cut:]
    else:
        tail = []
    kept: list[str] = []
    index = 0
    while index < len(rest):
        token = rest[index]
        if token in _GLOBAL_FLAGS or token.startswith("--fields="):
            head.append(token)
        elif token == "--fields" and index + 1 < len(rest):
            head += rest[index : index + 2]
            index += 1
        else:
            kept.append(token)
        index += 1
    return head + kept + tail


def wants_json(argv: list[str]) -> bool:
    """Whether ``argv`` asks for JSON output (so errors are JSON objects too)."""
    for index, token in enumerate(argv):
        if token == "--":
            break
        if token in ("--format", "-f") and index + 1 < len(argv):
            value = argv[index + 1]
        elif token.startswith("--format="):
            value = token.partition("=")[2]
        else:
            continue
        if value.lower() in (Format.json, Format.jsonl):
            return True
    return False


def _usage_message(exc: Any) -> str:
    """Click's usage error as one line, naming the help to read."""
    message = " ".join(exc.format_message().split())
    ctx = getattr(exc, "ctx", None)
    return message if ctx is None else f"{message} (see '{ctx.command_path} --help')"


class _Root(TyperGroup):
    """The root group: global flags are accepted after the command too, and Click's
    usage errors are one ``error:`` line (a JSON object under --format json), exit 2,
    like every other error."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # Click's Context
        return super().parse_args(ctx, hoist_global_flags(args))

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        argv = sys.argv[1:] if args is None else list(args)
        try:
            code = super().main(argv, prog_name, complete_var, False, windows_expand_args, **extra)
        except typer.Abort:
            report("interrupted", "aborted", 1)
            sys.exit(1)
        except Exception as exc:
            if not hasattr(exc, "format_message") or not hasattr(exc, "exit_code"):
                raise  # not one of Click's errors
            if type(exc).__name__ != "NoArgsIsHelpError":  # the help is printed already
                use_json_errors(wants_json(argv))
                report(
                    "usage" if exc.exit_code == 2 else "unexpected",
                    _usage_message(exc),
                    exc.exit_code,
                )
            sys.exit(exc.exit_code)
        sys.exit(code if isinstance(code, int) else 0)


def build_app(only: str | None = None) -> typer.Typer:
    """The Typer app with every command, or with just ``only`` (for a fast start)."""
    app = typer.Typer(
        name="soloqueue-mem",
        cls=_Root,
        help="Local-first memory for LLM agents: session logs, search and context on SQLite.",
        no_args_is_help=True,
        context_settings={"help_option_names": ["-h", "--help"]},
        pretty_exceptions_enable=False,  # our boundary reports errors; no Rich tracebacks
        rich_markup_mode=None,  # Click's plain help: text re-flowed, a choice list never split
        add_completion=False,
    )
    app.callback()(root_callback)
    for name, (module, attribute, is_group) in COMMANDS.items():
        if only is not None and name != only:
            continue
        target = getattr(importlib.import_module(module), attribute)
        if is_group:
            _add_examples(target, name)
            app.add_typer(target, name=name, epilog=epilog(name))
        else:
            app.command(name, epilog=epilog(name))(target)
    return app


def _add_examples(group: typer.Typer, path: str) -> None:
    """Give each subcommand of ``group`` its examples as the ``--help`` epilog."""
    for info in group.registered_commands:
        assert info.callback is not None
        name = info.name or typer.main.get_command_name(info.callback.__name__)
        info.epilog = epilog(f"{path} {name}")


def command_named(argv: list[str]) -> str | None:
    """The command ``argv`` runs, when it can be told without parsing everything."""
    skip = False
    for token in argv:
        if skip:
            skip = False
        elif token in _GLOBAL_WITH_VALUE:
            skip = True
        elif token in _GLOBAL_FLAGS or token.startswith(("--root=", "--format=")):
            continue
        else:
            return token if token in COMMANDS else None
    return None
