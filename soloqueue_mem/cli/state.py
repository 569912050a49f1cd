"""The composition root's product: one frozen AppContext per invocation.

Only the CLI reads environment variables and config.toml; core functions receive
what they need (home, config, now) as arguments.
"""

from __future__ import annotations

import os
from datetime import datetime
from functools import cached_property

from soloqueue_mem.cli.boundary import use_json_errors
from soloqueue_mem.cli.output import Format, resolve_format, use_delimited, use_text_tables
from soloqueue_mem.config import Config, load_config
from soloqueue_mem.errors import NoStore, NotFound
from soloqueue_mem.home import Home, find_root

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from contextlib import AbstractContextManager
    from typing import Any, Protocol, TypeVar

    import typer

    from soloqueue_mem.api.store import Store
    from soloqueue_mem.redact import Redactor
    from soloqueue_mem.storage.base import Backend

    class _Closable(Protocol):
        def close(self) -> None: ...

    Closable = TypeVar("Closable", bound=_Closable)


class AppContext:
    """Global options, the pinned clock, and the lazily resolved data directory.

    A plain class rather than a dataclass: each dataclass costs ~1.5 ms to create at
    import, and this module is on every command's start-up path.
    """

    def __init__(self, root_option: str | None, format_option: Format, quiet: bool, now: datetime):
        self.root_option = root_option
        self.format_option = format_option
        self.quiet = quiet
        self.now = now

    @cached_property
    def home(self) -> Home:
        env = os.environ.get("SOLOQUEUE_HOME") or None
        return Home(find_root(self.root_option, env, os.getcwd()))

    @cached_property
    def config(self) -> Config:
        return load_config(self.home.config_file)

    @cached_property
    def redactor(self) -> Redactor | None:
        """Secret redaction for what this invocation stores (None: ``redact`` is off)."""
        if not self.config.redact:  # its patterns load only for a store that redacts
            return None
        from soloqueue_mem.redact import redactor

        return redactor(self.config)

    def redacted(self, text: str) -> str:
        """``text`` as it may be stored."""
        return text if self.redactor is None else self.redactor.text(text)

    def store(self) -> Store:
        """The library's Store on this invocation's data directory, config and clock."""
        from soloqueue_mem.api.store import Store

        return Store(self.home.dir, config=self.config, clock=lambda: self.now)

    def backend(self) -> AbstractContextManager[Backend]:
        """The configured storage back end (PostgreSQL when ``database_url`` is set,
        else the data directory's SQLite files), closed after the block."""
        from soloqueue_mem.storage import open_backend

        return _Closing(open_backend(self.home, self.config))

    @property
    def format(self) -> Format:
        return resolve_format(self.format_option)


def app_context(
    ctx: typer.Context, fmt: Format | None = None, root: str | None = None
) -> AppContext:
    """The invocation's context, with ``--format``/``--root`` given after the command
    taking precedence over those given before it."""
    base: AppContext = ctx.find_root().obj
    if fmt is not None or root is not None:
        base = AppContext(
            root if root is not None else base.root_option,
            fmt if fmt is not None else base.format_option,
            base.quiet,
            base.now,
        )
    configure_errors(base)
    check_command(base, command_name(ctx))
    return base


def command_name(ctx: typer.Context) -> str:
    """The command's words without the program's: "memory list"."""
    words = []
    node: Any = ctx  # its parents are Click's contexts, not Typer's
    while node.parent is not None:
        words.append(node.info_name or "")
        node = node.parent
    return " ".join(reversed(words))


# The commands that run where no data directory exists yet: those that capture what an
# agent says and create it (a hook works on a fresh machine; mcp and serve take the same
# writes), init, import (a restore on a new machine), and those that need none (path,
# demo's throw-away store, context build of the messages on stdin).
MAY_CREATE = frozenset(
    {"init", "log", "hook", "remember", "mcp", "serve", "import", "path", "demo", "context build"}
)


def check_command(app: AppContext, command: str) -> None:
    """NoStore when the command needs a data directory that does not exist (a typo in
    ``--root`` is an error, not an empty store; on PostgreSQL the store is the database,
    which a directory need not hold)."""
    from soloqueue_mem.storage.url import database_url

    word = command.partition(" ")[0]
    if command in MAY_CREATE or word in MAY_CREATE or database_url(app.config) is not None:
        return
    if not app.home.exists():
        raise NoStore(
            f"no data directory at {app.home.dir} "
            "(check --root and SOLOQUEUE_HOME; soloqueue-mem init creates one)"
        )


def opened(conn: Closable | None, missing: str) -> AbstractContextManager[Closable]:
    """``conn`` until the block ends (then closed); NotFound(``missing``) when there is
    no database."""
    if conn is None:
        raise NotFound(missing)
    return _Closing(conn)


class _Closing:
    """``contextlib.closing`` without ``contextlib``, which costs ``graph remember``'s
    enqueue path (pinned by tests/e2e/test_import_budget.py) about a millisecond."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def __enter__(self) -> Any:
        return self.conn

    def __exit__(self, *exc: object) -> None:
        self.conn.close()


def configure_errors(app: AppContext) -> None:
    """Errors become JSON objects on stderr when --format json/jsonl was given; tables
    become plain lines under --format text."""
    use_json_errors(app.format_option in (Format.json, Format.jsonl))
    use_text_tables(app.format_option is Format.text)
    use_delimited(app.format_option)
