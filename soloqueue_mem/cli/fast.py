"""A parser for plain ``log`` calls that does not import Typer.

``import typer`` costs more than three times a bare Python process that inserts a row
in SQLite, and hooks run ``log`` once per agent turn. This parser accepts exactly the
options of ``log`` (and the global ones before it) with valid values; anything else —
help, an unknown or repeated-oddly option, a bad choice, a missing value — returns
None and the call goes to the Typer app, which gives the usual help or error. A test
keeps this table in step with the Typer command's parameters.
"""

import os
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
LOG_FLAGS = {"--batch": "batch", "--offload": "offload"}
ROLES = ("user", "assistant", "system", "tool", "thought")
FORMATS = ("auto", "table", "json", "jsonl", "text")
ENV = {"group": "SOLOQUEUE_GROUP", "agent": "SOLOQUEUE_AGENT", "session": "SOLOQUEUE_SESSION"}


def parse_log_argv(argv: list[str]) -> dict[str, Any] | None:
    """The parsed call, or None when the Typer app must handle it."""
    found: dict[str, Any] = {"global": {}, "log": {}, "text": None}
    position = _parse_options(argv, 0, GLOBAL_VALUES, GLOBAL_FLAGS, found["global"], stop_at="log")
    if position is None or position >= len(argv) or argv[position] != "log":
        return None
    rest = argv[position + 1 :]
    texts: list[str] = []
    index = 0
    while index < len(rest):
        token = rest[index]
        if token == "--":
            texts.extend(rest[index + 1 :])
            break
        if token.startswith("-") and token != "-":
            index = _parse_one(rest, index, LOG_VALUES, LOG_FLAGS, found["log"])
            if index is None:
                return None
            continue
        texts.append(token)
        index += 1
    if len(texts) > 1:
        return None
    found["text"] = texts[0] if texts else None
    return found if _valid(found) else None


def _parse_options(
    argv: list[str],
    index: int,
    values: dict[str, str],
    flags: dict[str, str],
    into: dict[str, Any],
    stop_at: str,
) -> int | None:
    while index < len(argv) and argv[index] != stop_at:
        if not argv[index].startswith("-"):
            return None  # another command
        parsed = _parse_one(argv, index, values, flags, into)
        if parsed is None:
            return None
        index = parsed
    return index


def _parse_one(
    argv: list[str], index: int, values: dict[str, str], flags: dict[str, str], into: dict[str, Any]
) -> int | None:
    token = argv[index]
    name, equals, inline = token.partition("=")
    if name in values:
        if equals:
            into[values[name]] = inline
            return index + 1
        if index + 1 >= len(argv):
            return None
        into[values[name]] = argv[index + 1]
        return index + 2
    if token in flags:
        into[flags[token]] = True
        return index + 1
    return None


def _valid(found: dict[str, Any]) -> bool:
    for options in (found["global"], found["log"]):
        if "fmt" in options:
            options["fmt"] = options["fmt"].lower()
            if options["fmt"] not in FORMATS:
                return False
    return found["log"].get("role", "user") in ROLES


def run_fast_log(argv: list[str]) -> int | None:
    """Run a plain ``log`` call without Typer; None when it is not one."""
    parsed = parse_log_argv(argv)
    if parsed is None:
        return None
    from soloqueue_mem.cli.boundary import run_guarded

    return run_guarded(_run, parsed)


def _run(parsed: dict[str, Any]) -> None:
    from soloqueue_mem.cli.log_run import run_log
    from soloqueue_mem.cli.output import Format
    from soloqueue_mem.cli.state import AppContext, configure_errors
    from soloqueue_mem.clock import now

    top, options = parsed["global"], parsed["log"]
    fmt = options.get("fmt", top.get("fmt", "auto"))
    root = options.get("root", top.get("root"))
    app = AppContext(root, Format(fmt), bool(top.get("quiet")), now())
    configure_errors(app)
    # An option given, even empty, wins; then a non-empty variable (Typer's rule).
    ids = {key: options[key] if key in options else os.environ.get(ENV[key]) or None for key in ENV}
    run_log(
        app,
        parsed["text"],
        options.get("role", "user"),
        bool(options.get("batch")),
        options.get("event_id"),
        options.get("metadata"),
        bool(options.get("offload")),
        "default" if ids["group"] is None else ids["group"],
        "default" if ids["agent"] is None else ids["agent"],
        ids["session"],
    )
