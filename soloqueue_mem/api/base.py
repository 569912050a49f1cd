"""The part of :class:`soloqueue_mem.Store` that owns things: the data directory, its
config, the clock, the lexicon and the open connections, and the lock that
serialises calls. The methods that use them are in ``store.py`` and
``maintenance.py``.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from soloqueue_mem.config import Config
from soloqueue_mem.errors import NotFound, TempFail, Unsupported
from soloqueue_mem.home import Home, find_root, validate_id

if TYPE_CHECKING:
    from pathlib import Path

    from soloqueue_mem.storage.base import Backend
    from soloqueue_mem.text.lexicon import Lexicon

F = TypeVar("F", bound=Callable[..., Any])
S = TypeVar("S", bound="StoreBase")
NO_STORE = "no data directory or {} yet"
# What runs on PostgreSQL (``database_url``) in this phase; the rest raises Unsupported.
POSTGRES_METHODS = frozenset(
    {
        "log",
        "trace",
        "recall",
        "remember",
        "memory",
        "memories",
        "forget",
        "sessions",
        "session_export",
        "session_end",
        "consolidate",
        "working_add",
        "promote",
        "query",
        "export",
        "import_dump",
        "stats",
        "verify",
        "gc",
        "graph_remember",
        "graph_work",
        "graph_recall",
        "graph_focus",
        "graph_show",
        "graph_export",
        "memory_history",
        "memory_edit",
        "memory_restore",
        "kv_set",
        "kv_get",
        "artifact_save",
        "artifact",
        "artifact_read",
        "artifacts",
        "context_build",
        "context_compress",
    }
)
_UNOPENED: Any = object()


def serialised(method: F) -> F:
    """One call at a time per Store (connections and the lexicon are shared); on the
    PostgreSQL back end, Unsupported for a method it lacks, and TempFail when the call
    lost the connection (the next call reconnects)."""

    @functools.wraps(method)
    def call(self: StoreBase, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            if method.__name__ not in POSTGRES_METHODS and self._postgres() is not None:
                raise Unsupported(
                    f"Store.{method.__name__} is not available on the PostgreSQL back end yet"
                )
            try:
                return method(self, *args, **kwargs)
            except Exception as exc:
                backend = self._backend
                if backend is not _UNOPENED and backend is not None and backend.lost(exc):
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
        self._conns: dict[str, sqlite3.Connection] = {}
        self._lexicon: Lexicon | None = None
        self._lock = threading.RLock()
        self._backend: Backend | None = _UNOPENED

    @property
    def root(self) -> Path:
        return self.home.root

    @property
    def config(self) -> Config:
        if self._config is None:
            from soloqueue_mem.config import load_config

            self._config = load_config(self.home.config_file)
        return self._config

    def now(self) -> datetime:
        return self._clock()

    def close(self) -> None:
        """Close every open connection (the Store may be used again afterwards)."""
        with self._lock:
            for conn in self._conns.values():
                conn.close()
            self._conns.clear()
            if self._backend is not _UNOPENED and self._backend is not None:
                self._backend.close()
            self._backend = _UNOPENED
            if self._lexicon is not None:
                self._lexicon.close()
                self._lexicon = None

    def warm(self) -> None:
        """Open the database (PostgreSQL: connect and migrate) and the lexicon now, so a
        long-lived process pays for them at start and fails there when it cannot."""
        with self._lock:
            backend = self._postgres()
            if backend is not None:
                backend.warm()
            self._lexicon_loader()

    def __enter__(self: S) -> S:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _postgres(self) -> Backend | None:
        """The PostgreSQL back end when ``database_url`` is set (connected on first
        use), else None: memory.db."""
        if self._backend is _UNOPENED:
            from soloqueue_mem.storage.base import open_backend

            self._backend = open_backend(self.home, self.config)
        return self._backend

    def _db(self, name: str, create: bool) -> sqlite3.Connection | None:
        """The open connection to ``name`` (memory, artifacts, state, graph); None when
        it does not exist and ``create`` is False."""
        conn = self._conns.get(name)
        if conn is None:
            from soloqueue_mem.storage.sqlite import stores

            opener = {
                "memory": stores.open_memory,
                "artifacts": stores.open_artifacts,
                "state": stores.open_state,
                "graph": stores.open_graph,
            }[name]
            conn = opener(self.home, self.config, create=create)
            if conn is not None:
                self._conns[name] = conn
        return conn

    def _existing(self, name: str, missing: str) -> sqlite3.Connection:
        conn = self._db(name, create=False)
        if conn is None:
            raise NotFound(missing)
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

    def _artifacts_for_offload(self) -> sqlite3.Connection | None:
        """A connection of the offloader's own (it closes it when done)."""
        from soloqueue_mem.storage.sqlite.stores import open_artifacts

        return open_artifacts(self.home, self.config)
