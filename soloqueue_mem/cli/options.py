"""Options shared by many commands, defined once."""

import functools
import inspect
import math
from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any

import typer

from soloqueue_mem.cli import spec
from soloqueue_mem.cli.boundary import boundary
from soloqueue_mem.cli.output import Format
from soloqueue_mem.cli.state import app_context
from soloqueue_mem.errors import UsageError
from soloqueue_mem.roles import ROLES


def option(of: spec.Opt | tuple[spec.Opt, ...], key: str | None = None, **settings: Any) -> Any:
    """The Typer option of a :mod:`spec` option (``of``, or the one of the tuple ``of``
    parsed into ``key``): its spellings and variable from the spec, the rest (help,
    defaults shown) from ``settings``."""
    opt = of if isinstance(of, spec.Opt) else spec.find(of, key or "")
    return typer.Option(*opt.names, envvar=opt.envvar, **settings)


FormatOpt = Annotated[
    Format | None,
    option(
        spec.FORMAT,
        help="Output: auto (table on a terminal, JSON in a pipe), table, json, jsonl, "
        "text, csv, tsv.",
        case_sensitive=False,
        show_default=False,
    ),
]
MAX_ROWS = 2**62  # a --limit beyond any store: taken as "all", never an SQLite overflow


RootOpt = Annotated[
    str | None,
    option(spec.ROOT, help="Data directory (overrides SOLOQUEUE_HOME).", show_default=False),
]


class MemoryType(StrEnum):
    """The memory types (``memory.model.TYPES``); a parity test keeps them in step."""

    FACT = "FACT"
    PREFERENCE = "PREFERENCE"
    RULE = "RULE"
    SKILL = "SKILL"
    ERROR = "ERROR"


# A bad choice or an out-of-range number in an option is a usage error (exit 2), as
# every Typer choice is; the library's own checks (exit 65) are for input data.
TypeFilter = Annotated[
    MemoryType | None,
    option(spec.TYPE, help="Only memories of this type.", case_sensitive=False),
]


def finite(value: float | None) -> float | None:
    """The callback of every float option: Click reads ``nan`` and ``inf`` as floats, and
    a NaN passes every range check; no option means either (a usage error, exit 2)."""
    if value is not None and not math.isfinite(value):
        raise typer.BadParameter(f"{value} is not a finite number")
    return value


def list_limit(limit: int) -> int:
    """A list command's ``--limit`` as SQL's LIMIT: 0 means no limit (as in ``llm logs
    -n 0``), a huge one is capped at :data:`MAX_ROWS` (never an overflow, on SQLite or
    PostgreSQL), a negative one is a usage error."""
    if limit < 0:
        raise UsageError("--limit must be 0 (no limit) or more")
    return MAX_ROWS if limit == 0 else min(limit, MAX_ROWS)


def checked_limit(limit: int, most: int) -> None:
    """A ``--limit`` must be 1 to ``most``: a usage error otherwise."""
    if not 1 <= limit <= most:
        raise UsageError(f"--limit must be between 1 and {most}")


Role = StrEnum("Role", [(role, role) for role in ROLES])  # type: ignore[misc]


GroupOpt = Annotated[str, option(spec.GROUP, help="Group id.")]
AgentOpt = Annotated[str, option(spec.AGENT, help="Agent id.")]
SessionOpt = Annotated[str | None, option(spec.SESSION, help="Session id.", show_default=False)]
# Reading commands are scoped like writing ones: a hook that sets SOLOQUEUE_GROUP or
# SOLOQUEUE_AGENT for `log` sees only its own scope; without them, every scope.
GroupFilter = Annotated[
    str | None,
    option(
        spec.GROUP,
        help="Only this group (default: $SOLOQUEUE_GROUP, else all).",
        show_default=False,
    ),
]
SessionFilter = Annotated[
    str | None, typer.Option("--session", "-s", help="Only this session.", show_default=False)
]
TagFilter = Annotated[str | None, typer.Option("--tag", "-t", help="Only with this tag.")]
AgentFilter = Annotated[
    str | None,
    option(
        spec.AGENT,
        help="Only this agent (default: $SOLOQUEUE_AGENT, else all).",
        show_default=False,
    ),
]


def with_app_context(command: Callable[..., None]) -> Callable[..., None]:
    """A command whose first parameter is the invocation's :class:`AppContext` rather
    than ``ctx``, ``--format`` and ``--root``: Typer sees those three (the context
    first, the two options last, as every command lists them) and the command gets
    :func:`app_context` of them before its own body runs."""
    shared = inspect.signature(_shared_parameters).parameters.values()
    own = list(inspect.signature(command, eval_str=True).parameters.values())[1:]
    ctx, *options = shared
    parameters = [ctx, *own, *options]

    @functools.wraps(command)
    def run(
        ctx: typer.Context, *args: Any, fmt: Any = None, root: Any = None, **kwargs: Any
    ) -> None:
        command(app_context(ctx, fmt, root), *args, **kwargs)

    run.__signature__ = inspect.Signature(parameters, return_annotation=None)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": None}
    return run


def command(run: Callable[..., None]) -> Callable[..., None]:
    """A command as every command is made: its errors reported once (:func:`boundary`),
    its body given the invocation's :class:`AppContext` (:func:`with_app_context`)."""
    return boundary(with_app_context(run))


def subcommand(app: typer.Typer, name: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The command ``name`` of the group ``app``, made as :func:`command` makes one."""
    return lambda run: app.command(name)(command(run))


def _shared_parameters(ctx: typer.Context, *, fmt: FormatOpt = None, root: RootOpt = None) -> None:
    """The parameters :func:`with_app_context` declares for a command."""
