"""Which back end a data directory uses: the PostgreSQL URL, if any. A module of its own
(no ``typing``, no Backend interface) so that a command on SQLite — ``log`` on every
agent turn — learns it has no URL cheaply."""

from __future__ import annotations

import os

from soloqueue_mem.errors import BadInput

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from soloqueue_mem.config import Config

DATABASE_URL_ENV = "SOLOQUEUE_DATABASE_URL"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


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
