"""A parser for plain ``log``, ``artifact save``, ``trace``, ``recall``, ``graph
remember`` and ``graph recall`` calls (and a lone ``--version``) that does not import
Typer.

``import typer`` costs more than three times a bare Python process that inserts a row
in SQLite, and hooks run ``log`` once per agent turn (and ``artifact save`` for their
big outputs); agents run ``trace`` and ``recall`` as often, where Typer was a quarter
of the call (``graph remember`` must return within a ``log`` call's time, ``graph
recall`` within 150 ms on a big graph). This parser accepts exactly the options of
those commands (and the global ones before them) with valid values; anything else —
help, an unknown or repeated-oddly option, a bad choice or number, a missing value —
returns None and the call goes to the Typer app, which gives the usual help or error.
Its tables and the Typer commands' options come from one spec (:mod:`soloqueue_mem.cli.spec`).
"""

from __future__ import annotations

import os
import sys

from soloqueue_mem.cli import spec

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import Any

INTEGERS = ("limit", "max_tokens", "recent")  # converted as Click does (int()), else Typer reports
FORMATS = ("auto", "table", "json", "jsonl", "text")


class Options:
    """A command's options as the parser looks them up, built from their :mod:`spec`:
    each spelling maps to its key; ``envvars`` maps a key to its variable. (Plain
    classes here: a NamedTuple costs ~0.1 ms to create, on every call.)"""

    def __init__(self, opts: tuple[spec.Opt, ...]) -> None:
        self.values: dict[str, str] = {}
        self.flags: dict[str, str] = {}
        self.lists: dict[str, str] = {}  # repeatable options, collected in order
        self.envvars: dict[str, str] = {}
        tables = {spec.VALUE: self.values, spec.FLAG: self.flags, spec.LIST: self.lists}
        for opt in opts:
            tables[opt.kind].update(dict.fromkeys(opt.names, opt.key))
            if opt.envvar is not None:
                self.envvars[opt.key] = opt.envvar


class FastCommand:
    def __init__(self, words: tuple[str, ...], arguments: tuple[int, int]):
        self.words = words  # the command's name, e.g. ("artifact", "save")
        self.options = Options(spec.COMMANDS[words])
        self.arguments = arguments  # the fewest and most positional arguments


GLOBAL = Options(spec.GLOBAL)
LOG = FastCommand(("log",), (0, 1))
SAVE = FastCommand(("artifact", "save"), (1, 1))
HOOK = FastCommand(("hook", "claude"), (0, 1))
HELP = ("-h", "--help")
GRAPH_REMEMBER = FastCommand(("graph", "remember"), (0, 0))
GRAPH_RECALL = FastCommand(("graph", "recall"), (0, 0))
TRACE = FastCommand(("trace",), (1, 1))
RECALL = FastCommand(("recall",), (1, 1))


def parse_argv(argv: list[str], command: FastCommand) -> dict[str, Any] | None:
    """The parsed call of ``command``, or None when the Typer app must handle it."""
    found: dict[str, Any] = {"global": {}, "command": {}, "arguments": []}
    position = _parse_options(argv, GLOBAL, found["global"], stop_at=command.words[0])
    end = None if position is None else position + len(command.words)
    if end is None or tuple(argv[position:end]) != command.words:
        return None
    if not _parse_rest(argv[end:], command.options, found):
        return None
    fewest, most = command.arguments
    if not fewest <= len(found["arguments"]) <= most:
        return None
    return found if _valid(found) else None


def _parse_rest(rest: list[str], options: Options, found: dict[str, Any]) -> bool:
    """Options and positional arguments after the command's name; False if unknown."""
    index = 0
    while index < len(rest):
        token = rest[index]
        if token == "--":
            found["arguments"].extend(rest[index + 1 :])
            break
        if token.startswith("-") and token != "-":
            parsed = _parse_one(rest, index, options, found["command"])
            if parsed is None:
                return False
            index = parsed
            continue
        found["arguments"].append(token)
        index += 1
    return True


def _parse_options(
    argv: list[str], options: Options, into: dict[str, Any], stop_at: str
) -> int | None:
    index = 0
    while index < len(argv) and argv[index] != stop_at:
        if not argv[index].startswith("-"):
            return None  # another command
        parsed = _parse_one(argv, index, options, into)
        if parsed is None:
            return None
        index = parsed
    return index


def _parse_one(argv: list[str], index: int, options: Options, into: dict[str, Any]) -> int | None:
    """Read the option at ``argv[index]`` into ``into``; the next index, or None."""
    token = argv[index]
    name, equals, inline = token.partition("=") if token.startswith("--") else (token, "", "")
    key = options.values.get(name) or options.lists.get(name)
    if key is not None:
        if equals:
            value, index = inline, index + 1
        elif index + 1 < len(argv):
            value, index = argv[index + 1], index + 2
        else:
            return None
        if name in options.lists:
            into.setdefault(key, []).append(value)
        else:
            into[key] = value
        return index
    if token in options.flags:
        into[options.flags[token]] = True
        return index + 1
    return None


def _valid(found: dict[str, Any]) -> bool:
    for options in (found["global"], found["command"]):
        if "fmt" in options:
            options["fmt"] = options["fmt"].lower()
            if options["fmt"] not in FORMATS:
                return False
    from soloqueue_mem.roles import ROLES

    command = found["command"]
    if "type" in command:  # a Click choice; the memory model is imported only for it
        from soloqueue_mem.memory.model import TYPES

        if command["type"].upper() not in TYPES:
            return False
    for key in INTEGERS:
        if key in command:
            try:
                command[key] = int(command[key])
            except ValueError:
                return False
    return command.get("role", "user") in ROLES


def run_fast(argv: list[str]) -> int | None:
    """Run a plain ``log``, ``artifact save``, ``trace``, ``recall``, ``graph remember``,
    ``graph recall`` or ``hook claude`` call, or a lone ``--version``, without Typer;
    None when it is not one."""
    if argv == ["--version"]:  # what the Typer app's eager --version prints
        from soloqueue_mem import __version__

        sys.stdout.write(f"soloqueue-mem {__version__}\n")
        return 0
    for command, run in (
        (LOG, _run_log),
        (SAVE, _run_save),
        (TRACE, _run_trace),
        (RECALL, _run_recall),
        (GRAPH_REMEMBER, _run_graph_remember),
        (GRAPH_RECALL, _run_graph_recall),
    ):
        parsed = parse_argv(argv, command)
        if parsed is not None and (command is not GRAPH_RECALL or _graph_recall_valid(parsed)):
            from soloqueue_mem.cli.boundary import run_guarded

            return run_guarded(run, parsed)
    if _is_hook_call(argv):
        return _run_hook(argv, parse_argv(argv, HOOK))
    return None


def _is_hook_call(argv: list[str]) -> bool:
    """``hook claude ...`` not asking for help: it never goes to Typer, whose usage
    errors exit 2 (which Claude Code reads as "block")."""
    at = 0
    while at < len(argv) and argv[at].startswith("-"):
        at += 2 if argv[at] in GLOBAL.values else 1
    return argv[at : at + 2] == ["hook", "claude"] and not any(t in HELP for t in argv)


def _app(parsed: dict[str, Any], command: str | None = None) -> Any:
    """The AppContext, with options given after the command winning over global ones;
    NoStore or Unsupported when ``command`` cannot run on its store (see
    :func:`~soloqueue_mem.cli.state.check_command`)."""
    from soloqueue_mem.cli.output import Format, use_fields
    from soloqueue_mem.cli.state import AppContext, check_command, configure_errors
    from soloqueue_mem.clock import now

    top, options = parsed["global"], parsed["command"]
    fmt = options.get("fmt", top.get("fmt", "auto"))
    root = options.get("root", top.get("root"))
    app = AppContext(root, Format(fmt), bool(top.get("quiet")), now())
    configure_errors(app)
    use_fields(top.get("fields"))
    if command is not None:
        check_command(app, command)
    return app


def _run_log(parsed: dict[str, Any]) -> None:
    from soloqueue_mem.cli.log_run import run_log

    options = parsed["command"]
    group, agent = _scope(LOG, options)
    run_log(
        _app(parsed, "log"),
        parsed["arguments"][0] if parsed["arguments"] else None,
        options.get("role", "user"),
        bool(options.get("batch")),
        options.get("event_id"),
        options.get("metadata"),
        bool(options.get("offload")),
        group,
        agent,
        _given(LOG, options, "session"),
        bool(options.get("echo")),
    )


def _run_hook(argv: list[str], parsed: dict[str, Any] | None) -> int:
    from soloqueue_mem.cli.hook_run import run_claude_hook

    usage = None
    if parsed is None:  # fail-open even here: the error is logged, the agent goes on
        usage = f"cannot parse the hook's arguments: {' '.join(argv)}"
        parsed = {"global": {}, "command": {}, "arguments": []}
    return run_claude_hook(
        _app(parsed),
        parsed["arguments"][0] if parsed["arguments"] else None,
        _given(HOOK, parsed["command"], "group"),  # None: the project's group
        _scope(HOOK, parsed["command"])[1],
        usage,
    )


def _run_save(parsed: dict[str, Any]) -> None:
    from soloqueue_mem.cli.artifact_run import run_save

    options = parsed["command"]
    run_save(
        _app(parsed, "artifact save"),
        parsed["arguments"][0],
        options.get("title"),
        options.get("tag", ()),
        _given(SAVE, options, "group"),
        options.get("author"),
        options.get("mime"),
    )


def _given(command: FastCommand, options: dict[str, Any], key: str) -> str | None:
    """An option's value: given, even empty, it wins; then a non-empty value of the
    variable its spec names (Typer's rule); else None (a reading command: every scope)."""
    if key in options:
        return options[key]
    envvar = command.options.envvars.get(key)
    return (os.environ.get(envvar) if envvar else None) or None


def _scope(command: FastCommand, options: dict[str, Any]) -> tuple[str, str]:
    """A writing command's group and agent: given, else from the variables, else
    ``default``."""
    group, agent = (_given(command, options, key) for key in ("group", "agent"))
    return ("default" if group is None else group, "default" if agent is None else agent)


def _run_trace(parsed: dict[str, Any]) -> None:
    from soloqueue_mem.cli.trace_run import run_trace

    options = parsed["command"]
    run_trace(
        _app(parsed, "trace"),
        parsed["arguments"][0],
        _given(TRACE, options, "group"),
        _given(TRACE, options, "agent"),
        _given(TRACE, options, "session"),
        options.get("role"),
        options.get("since"),
        options.get("limit", 10),
    )


def _run_graph_remember(parsed: dict[str, Any]) -> None:
    from soloqueue_mem.cli.graph_run import run_remember

    options = parsed["command"]
    run_remember(
        _app(parsed, "graph remember"),
        _given(GRAPH_REMEMBER, options, "session"),
        bool(options.get("sync")),
        *_scope(GRAPH_REMEMBER, options),
    )


def _graph_recall_valid(parsed: dict[str, Any]) -> bool:
    """Keywords given and whole numbers where Typer wants them (else Typer reports)."""
    options = parsed["command"]
    numbers = [str(options[key]) for key in ("depth", "limit") if key in options]
    return bool(options.get("keywords")) and all(
        n.lstrip("-").isascii() and n.lstrip("-").isdigit() for n in numbers
    )


def _run_recall(parsed: dict[str, Any]) -> None:
    from soloqueue_mem.cli.recall_run import run_recall

    options = parsed["command"]
    run_recall(
        _app(parsed, "recall"),
        parsed["arguments"][0],
        options.get("type"),
        options.get("limit", 10),
        options.get("max_tokens", 700),
        options.get("since"),
        _given(RECALL, options, "group"),
        _given(RECALL, options, "agent"),
        options.get("channels"),
        bool(options.get("traces")),
        bool(options.get("explain")),
        options.get("recent", 0),
        _given(RECALL, options, "session"),
        options.get("persona"),
    )


def _run_graph_recall(parsed: dict[str, Any]) -> None:
    from soloqueue_mem.cli.graph_run import run_recall

    options = parsed["command"]
    run_recall(
        _app(parsed, "graph recall"),
        options["keywords"],
        options.get("relation"),
        int(options["depth"]) if "depth" in options else None,
        int(options["limit"]) if "limit" in options else None,
        *_scope(GRAPH_RECALL, options),
    )
