"""The part of :class:`soloqueue_mem.Store` that owns things: the data directory, its
config, the clock, the lexicon and the open connections, and the lock that
serialises calls. The methods that use them are in ``store.py`` and
``maintenance.py``.
"""

from __future__ import annotations

import functools
import os
import sqlite3
from _thread import RLock  # threading's RLock, without importing threading
from collections.abc import Callable
from datetime import datetime

from soloqueue_mem.config import Config
from soloqueue_mem.errors import NotFound, TempFail
from soloqueue_mem.home import Home, find_root, validate_id

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, TypeVar

    from soloqueue_mem.storage.base import Backend
    from soloqueue_mem.text.lexicon import Lexicon

    F = TypeVar("F", bound=Callable[..., Any])
    S = TypeVar("S", bound="StoreBase")

NO_STORE = "no data directory or {} yet"


def serialised(method: F) -> F:
    """One call at a time per Store (connections and the lexicon are shared); TempFail
    when the call lost the back end's connection (the next call reconnects)."""

    @functools.wraps(method)
    def call(self: StoreBase, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            try:
                return method(self, *args, **kwargs)
            except Exception as exc:
                backend = self._backend
                if backend is not None and backend.lost(exc):
                    reason = str(exc).strip().partition("\n")[0] or type(exc).__name__
                    raise TempFail(
                        f"lost the connection to the database ({reason}); retry: the next "
                        "call reconnects"
                    ) from exc
                raise

    return call  # type: ignore[return-value]


def check_ids(**scope: str | None) -> None:
    for kind, value in scope.items():
        if value is not None:
            validate_id(kind, value)


class StoreBase:
    """The data directory, config, clock, lexicon and connections of a Store (see
    :class:`soloqueue_mem.Store` for the arguments)."""

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        *,
        config: Config | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        from soloqueue_mem.clock import now

        env = os.environ.get("SOLOQUEUE_HOME") or None
        explicit = os.fspath(root) if root is not None else None
        self.home = Home(find_root(explicit, env, os.getcwd()))
        self._config = config
        self._clock = clock or now
        self._catalog: sqlite3.Connection | None = None
        self._lexicon: Lexicon | None = None
        self._lock = RLock()
        self._backend: Backend | None = None

    @property
    def root(self) -> Path:
        """The data directory."""
        return self.home.root

    @property
    def config(self) -> Config:
        """The configuration given, else the data directory's ``config.toml``."""
        if self._config is None:
            from soloqueue_mem.config import load_config

            self._config = load_config(self.home.config_file)
        return self._config

    def now(self) -> datetime:
        """The current UTC time by the Store's clock."""
        return self._clock()

    def close(self) -> None:
        """Close every open connection (the Store may be used again afterwards)."""
        with self._lock:
            if self._catalog is not None:
                self._catalog.close()
                self._catalog = None
            if self._backend is not None:
                self._backend.close()
            if self._lexicon is not None:
                self._lexicon.close()
                self._lexicon = None

    def init(self) -> None:
        """Create or migrate the store (``init``): the database first, so that one it
        cannot reach leaves no data directory behind, then the directory (its session
        logs and blobs live there beside a database)."""
        with self._lock:
            self._storage().init()
            self.home.ensure()

    def warm(self) -> None:
        """Open the database (PostgreSQL: connect and migrate) and the lexicon now, so a
        long-lived process pays for them at start and fails there when it cannot."""
        with self._lock:
            self._storage().warm()
            self._lexicon_loader()

    def __enter__(self: S) -> S:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _storage(self) -> Backend:
        """The back end ``database_url`` chooses: PostgreSQL, else the data directory's
        SQLite files (each connects on first use)."""
        if self._backend is None:
            from soloqueue_mem.storage import open_backend

            self._backend = open_backend(self.home, self.config)
        return self._backend

    def _artifacts(self, create: bool) -> sqlite3.Connection | None:
        """This host's artifact catalog (kept open; on either back end the blobs and
        their catalog are local); None when it does not exist and ``create`` is False."""
        if self._catalog is None:
            from soloqueue_mem.storage.catalog import open_catalog

            self._catalog = open_catalog(self.home, self.config, create=create)
        return self._catalog

    def _existing_artifacts(self) -> sqlite3.Connection:
        conn = self._artifacts(create=False)
        if conn is None:
            raise NotFound(NO_STORE.format("artifacts"))
        return conn

    def _lexicon_loader(self) -> Lexicon:
        if self._lexicon is None:
            from soloqueue_mem.text.lexicon import open_lexicon

            self._lexicon = open_lexicon(self.home.cache_dir if self.home.exists() else None)
        return self._lexicon

    def _redactor(self) -> Any:
        from soloqueue_mem.redact import redactor

        return redactor(self.config)

    def _since(self, since: str | datetime | None) -> datetime | None:
        if since is None or isinstance(since, datetime):
            return since
        from soloqueue_mem.clock import parse_since

        return parse_since(since, self.now())

    @staticmethod
    def _key(group: str, agent: str, session: str) -> Any:
        from soloqueue_mem.sessions.events import SessionKey

        check_ids(group=group, agent=agent, session=session)
        return SessionKey(group, agent, session)
