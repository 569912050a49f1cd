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
A test keeps these tables in step with the Typer commands' parameters.
"""

import os
import sys
from typing import Any

GLOBAL_VALUES = {"--root": "root", "--format": "fmt", "-f": "fmt"}
GLOBAL_FLAGS = {"--quiet": "quiet", "-q": "quiet"}
LOG_VALUES = {
    "--role": "role",
    "-r": "role",
    "--event-id": "event_id",
    "--metadata": "metadata",
    "--group": "group",
    "-g": "group",
    "--agent": "agent",
    "-a": "agent",
    "--session": "session",
    "-s": "session",
    "--format": "fmt",
    "-f": "fmt",
    "--root": "root",
}
LOG_FLAGS = {"--batch": "batch", "--offload": "offload", "--echo": "echo"}
SAVE_VALUES = {
    "--title": "title",
    "--group": "group",
    "-g": "group",
    "--author": "author",
    "--mime": "mime",
    "--format": "fmt",
    "-f": "fmt",
    "--root": "root",
}
SAVE_LISTS = {"--tag": "tag", "-t": "tag"}
GRAPH_REMEMBER_VALUES = {
    "--session": "session",
    "-s": "session",
    "--group": "group",
    "-g": "group",
    "--agent": "agent",
    "-a": "agent",
    "--format": "fmt",
    "-f": "fmt",
    "--root": "root",
}
GRAPH_REMEMBER_FLAGS = {"--sync": "sync"}
GRAPH_RECALL_VALUES = {
    "--depth": "depth",
    "--limit": "limit",
    "-n": "limit",
    "--group": "group",
    "-g": "group",
    "--agent": "agent",
    "-a": "agent",
    "--format": "fmt",
    "-f": "fmt",
    "--root": "root",
}
GRAPH_RECALL_LISTS = {
    "--keywords": "keywords",
    "--relation": "relation",
}
HOOK_VALUES = {
    "--group": "group",
    "-g": "group",
    "--agent": "agent",
    "-a": "agent",
    "--root": "root",
}
_FILTERS = {"--group": "group", "-g": "group", "--agent": "agent", "-a": "agent"}
_WHERE = {"--format": "fmt", "-f": "fmt", "--root": "root"}
TRACE_VALUES = {
    **_FILTERS,
    "--session": "session",
    "-s": "session",
    "--role": "role",
    "-r": "role",
    "--since": "since",
    "--limit": "limit",
    "-n": "limit",
    **_WHERE,
}
RECALL_VALUES = {
    "--type": "type",
    "--limit": "limit",
    "-n": "limit",
    "--max-tokens": "max_tokens",
    "--since": "since",
    **_FILTERS,
    "--channels": "channels",
    **_WHERE,
}
RECALL_FLAGS = {"--traces": "traces", "--explain": "explain"}
INTEGERS = ("limit", "max_tokens")  # converted as Click does (int()), else Typer reports
FORMATS = ("auto", "table", "json", "jsonl", "text")
ENV = {"group": "SOLOQUEUE_GROUP", "agent": "SOLOQUEUE_AGENT", "session": "SOLOQUEUE_SESSION"}


class Options:
    """How a command's options are spelled: each maps an option to its key. (Plain
    classes here: a NamedTuple costs ~0.1 ms to create, on every call.)"""

    def __init__(
        self,
        values: dict[str, str],
        flags: dict[str, str] | None = None,
        lists: dict[str, str] | None = None,  # repeatable options, collected in order
    ) -> None:
        self.values = values
        self.flags = flags or {}
        self.lists = lists or {}


class FastCommand:
    def __init__(self, words: tuple[str, ...], options: Options, arguments: tuple[int, int]):
        self.words = words  # the command's name, e.g. ("artifact", "save")
        self.options = options
        self.arguments = arguments  # the fewest and most positional arguments


GLOBAL = Options(GLOBAL_VALUES, GLOBAL_FLAGS)
LOG = FastCommand(("log",), Options(LOG_VALUES, LOG_FLAGS), (0, 1))
SAVE = FastCommand(("artifact", "save"), Options(SAVE_VALUES, lists=SAVE_LISTS), (1, 1))
HOOK = FastCommand(("hook", "claude"), Options(HOOK_VALUES), (0, 1))
HELP = ("-h", "--help")
GRAPH_REMEMBER = FastCommand(
    ("graph", "remember"), Options(GRAPH_REMEMBER_VALUES, GRAPH_REMEMBER_FLAGS), (0, 0)
)
GRAPH_RECALL = FastCommand(
    ("graph", "recall"), Options(GRAPH_RECALL_VALUES, lists=GRAPH_RECALL_LISTS), (0, 0)
)
TRACE = FastCommand(("trace",), Options(TRACE_VALUES), (1, 1))
RECALL = FastCommand(("recall",), Options(RECALL_VALUES, RECALL_FLAGS), (1, 1))


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
        at += 2 if argv[at] in GLOBAL_VALUES else 1
    return argv[at : at + 2] == ["hook", "claude"] and not any(t in HELP for t in argv)


def _app(parsed: dict[str, Any], command: str | None = None) -> Any:
    """The AppContext, with options given after the command winning over global ones;
    Unsupported when ``command`` cannot run on the configured storage back end."""
    from soloqueue_mem.cli.output import Format
    from soloqueue_mem.cli.state import AppContext, check_command, configure_errors
    from soloqueue_mem.clock import now

    top, options = parsed["global"], parsed["command"]
    fmt = options.get("fmt", top.get("fmt", "auto"))
    root = options.get("root", top.get("root"))
    app = AppContext(root, Format(fmt), bool(top.get("quiet")), now())
    configure_errors(app)
    if command is not None:
        check_command(app, command)
    return app


def _run_log(parsed: dict[str, Any]) -> None:
    from soloqueue_mem.cli.log_run import run_log

    options = parsed["command"]
    # An option given, even empty, wins; then a non-empty variable (Typer's rule).
    ids = {key: options[key] if key in options else os.environ.get(ENV[key]) or None for key in ENV}
    run_log(
        _app(parsed, "log"),
        parsed["arguments"][0] if parsed["arguments"] else None,
        options.get("role", "user"),
        bool(options.get("batch")),
        options.get("event_id"),
        options.get("metadata"),
        bool(options.get("offload")),
        "default" if ids["group"] is None else ids["group"],
        "default" if ids["agent"] is None else ids["agent"],
        ids["session"],
        bool(options.get("echo")),
    )


def _run_hook(argv: list[str], parsed: dict[str, Any] | None) -> int:
    from soloqueue_mem.cli.hook_run import run_claude_hook

    usage = None
    if parsed is None:  # fail-open even here: the error is logged, the agent goes on
        usage = f"cannot parse the hook's arguments: {' '.join(argv)}"
        parsed = {"global": {}, "command": {}, "arguments": []}
    options = parsed["command"]
    ids = {key: options[key] if key in options else os.environ.get(ENV[key]) or None for key in ENV}
    return run_claude_hook(
        _app(parsed),
        parsed["arguments"][0] if parsed["arguments"] else None,
        "default" if ids["group"] is None else ids["group"],
        "default" if ids["agent"] is None else ids["agent"],
        usage,
    )


def _run_save(parsed: dict[str, Any]) -> None:
    from soloqueue_mem.cli.artifact_run import run_save

    options = parsed["command"]
    # An option given, even empty, wins; then a non-empty variable (Typer's rule).
    group = options["group"] if "group" in options else os.environ.get(ENV["group"]) or None
    run_save(
        _app(parsed, "artifact save"),
        parsed["arguments"][0],
        options.get("title"),
        options.get("tag", ()),
        group,
        options.get("author"),
        options.get("mime"),
    )


def _filter(options: dict[str, Any], key: str) -> str | None:
    """A reading command's scope: the option given, even empty, wins; then a non-empty
    variable (Typer's rule); else every scope."""
    return options[key] if key in options else os.environ.get(ENV[key]) or None


def _run_trace(parsed: dict[str, Any]) -> None:
    from soloqueue_mem.cli.trace_run import run_trace

    options = parsed["command"]
    run_trace(
        _app(parsed),
        parsed["arguments"][0],
        _filter(options, "group"),
        _filter(options, "agent"),
        options.get("session"),
        options.get("role"),
        options.get("since"),
        options.get("limit", 10),
    )


def _run_graph_remember(parsed: dict[str, Any]) -> None:
    from soloqueue_mem.cli.graph_run import run_remember

    options = parsed["command"]
    ids = {key: _filter(options, key) for key in ENV}
    run_remember(
        _app(parsed),
        options.get("session"),
        bool(options.get("sync")),
        "default" if ids["group"] is None else ids["group"],
        "default" if ids["agent"] is None else ids["agent"],
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
        _app(parsed),
        parsed["arguments"][0],
        options.get("type"),
        options.get("limit", 10),
        options.get("max_tokens", 700),
        options.get("since"),
        _filter(options, "group"),
        _filter(options, "agent"),
        options.get("channels"),
        bool(options.get("traces")),
        bool(options.get("explain")),
    )


def _run_graph_recall(parsed: dict[str, Any]) -> None:
    from soloqueue_mem.cli.graph_run import run_recall

    options = parsed["command"]
    ids = {key: _filter(options, key) for key in ENV}
    run_recall(
        _app(parsed),
        options["keywords"],
        options.get("relation"),
        int(options["depth"]) if "depth" in options else None,
        int(options["limit"]) if "limit" in options else None,
        "default" if ids["group"] is None else ids["group"],
        "default" if ids["agent"] is None else ids["agent"],
    )
