"""Options shared by many commands, defined once."""

from enum import StrEnum
from typing import Annotated

import typer

from soloqueue_mem.cli.output import Format

FormatOpt = Annotated[
    Format | None,
    typer.Option(
        "--format",
        "-f",
        help="Output: auto (table on a terminal, JSON in a pipe), table, json, jsonl, text.",
        case_sensitive=False,
        show_default=False,
    ),
]
MAX_ROWS = 2**62  # a --limit beyond any store: taken as "all", never an SQLite overflow


def row_limit(limit: int) -> int:
    """A listing's --limit as SQL takes it: at least 1, at most :data:`MAX_ROWS`."""
    return min(max(1, limit), MAX_ROWS)


RootOpt = Annotated[
    str | None,
    typer.Option("--root", help="Data directory (overrides SOLOQUEUE_HOME).", show_default=False),
]


class Role(StrEnum):
    user = "user"
    assistant = "assistant"
    system = "system"
    tool = "tool"
    thought = "thought"


GroupOpt = Annotated[str, typer.Option("--group", "-g", envvar="SOLOQUEUE_GROUP", help="Group id.")]
AgentOpt = Annotated[str, typer.Option("--agent", "-a", envvar="SOLOQUEUE_AGENT", help="Agent id.")]
SessionOpt = Annotated[
    str | None,
    typer.Option(
        "--session", "-s", envvar="SOLOQUEUE_SESSION", help="Session id.", show_default=False
    ),
]
# Reading commands are scoped like writing ones: a hook that sets SOLOQUEUE_GROUP or
# SOLOQUEUE_AGENT for `log` sees only its own scope; without them, every scope.
GroupFilter = Annotated[
    str | None,
    typer.Option(
        "--group",
        "-g",
        envvar="SOLOQUEUE_GROUP",
        help="Only this group (default: $SOLOQUEUE_GROUP, else all).",
        show_default=False,
    ),
]
AgentFilter = Annotated[
    str | None,
    typer.Option(
        "--agent",
        "-a",
        envvar="SOLOQUEUE_AGENT",
        help="Only this agent (default: $SOLOQUEUE_AGENT, else all).",
        show_default=False,
    ),
]
