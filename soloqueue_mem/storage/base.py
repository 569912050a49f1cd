"""The storage interface, and which back end a data directory uses."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from soloqueue_mem.errors import BadInput, Unsupported

if TYPE_CHECKING:
    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.memory.model import Memory
    from soloqueue_mem.memory.recall import Request
    from soloqueue_mem.memory.recall import Result as RecallResult
    from soloqueue_mem.memory.store import Draft, Filters, Remembered
    from soloqueue_mem.sessions.trace import Scope, TraceHit
    from soloqueue_mem.sessions.turns import Turn
    from soloqueue_mem.sessions.writer import Item, LoggedTurn, Offload, Rejected
    from soloqueue_mem.text.lexicon import Lexicon

DATABASE_URL_ENV = "SOLOQUEUE_DATABASE_URL"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")
# The commands that run on PostgreSQL in this phase (issue 14); any other one exits
# with Unsupported (69) there rather than use the local SQLite files.
POSTGRES_COMMANDS = frozenset(
    {
        "log",
        "trace",
        "remember",
        "recall",
        "memory list",
        "memory show",
        "memory forget",
        "memory history",
        "migrate",
        "export",
        "import",
        "path",
        "completion",
    }
)


class Backend(Protocol):
    """Turns and their search, memories and their history, the working-memory window."""

    name: str

    def log(
        self,
        items: Iterable[Item],
        default: tuple[str, str, str | None],
        now: datetime,
        offload: Offload | None,
    ) -> Iterator[LoggedTurn | Rejected]: ...

    def trace(
        self, query: str, scope: Scope, limit: int, lexicon: Callable[[], Lexicon]
    ) -> list[TraceHit]: ...

    def newest_turns(self, scope: Scope, limit: int) -> list[Turn]: ...

    def recall(
        self, request: Request, now: datetime, lexicon: Callable[[], Lexicon]
    ) -> RecallResult: ...

    def remember(
        self, draft: Draft, group: str, agent: str, now: datetime, event_id: str | None = None
    ) -> Remembered: ...

    def memory(self, ref: str) -> Memory: ...

    def memories(self, filters: Filters, now: datetime, limit: int) -> list[Memory]: ...

    def history(self, ref: str) -> list[Memory]: ...

    def forget(self, refs: Iterable[str]) -> list[str]: ...

    def close(self) -> None: ...


def database_url(config: Config) -> str | None:
    """The PostgreSQL URL this data directory uses (``SOLOQUEUE_DATABASE_URL`` over
    ``database_url`` in config.toml), or None for SQLite."""
    url = os.environ.get(DATABASE_URL_ENV) or config.database_url
    return check_url(url, "database_url") if url else None


def check_url(url: str, what: str) -> str:
    """``url`` when it names a PostgreSQL database, else BadInput naming ``what``."""
    if not url.startswith(POSTGRES_SCHEMES):
        raise BadInput(f"{what} must start with {' or '.join(POSTGRES_SCHEMES)}")
    return url


def shown_url(url: str) -> str:
    """``url`` with its password, if any, replaced by ``***`` (for printing)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    user, _, host = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=f"{user.partition(':')[0]}:***@{host}"))


def open_backend(home: Home, config: Config) -> Backend | None:
    """The PostgreSQL back end when one is configured, else None (use SQLite)."""
    url = database_url(config)
    if url is None:
        return None
    from soloqueue_mem.pg.backend import PostgresBackend

    return PostgresBackend(home, config, url)


def check_command(config: Config, command: str) -> None:
    """Unsupported when ``command`` ("memory list") cannot run on the configured back end."""
    if database_url(config) is not None and command not in POSTGRES_COMMANDS:
        raise Unsupported(
            f"{command} is not available on the PostgreSQL back end yet "
            f"(database_url is set; available: {', '.join(sorted(POSTGRES_COMMANDS))})"
        )
