"""One way to open a database: WAL, busy timeout, safe PRAGMAs, migrations on open.

Connections run in driver-level autocommit (``isolation_level=None``) so that our code
issues every ``BEGIN`` itself; writes go through :func:`write_tx`, which starts with
``BEGIN IMMEDIATE`` so the busy timeout applies up front instead of a late
``SQLITE_BUSY`` when a read transaction tries to upgrade (RELIABILITY rule 4).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Sequence

from soloqueue_mem.db.migrate import check_current, not_newer, schema_version
from soloqueue_mem.errors import StorageError, TempFail

Migration = Callable[[sqlite3.Connection], None]
TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    StrPath = str | os.PathLike[str]


class Deferred:
    """A database's migrations, imported only for a file that is not at ``head``.

    Trigger: every open of an up-to-date file (all but the first). Why: importing the
    schema modules was a measurable part of a ``log`` call. Outcome: a file at ``head``
    is used as it is; any other version loads the list and is handled as always.
    ``head`` must be ``len(load())`` (a test checks it): one left behind by a new
    migration would leave files at the old head unmigrated.
    """

    def __init__(self, head: int, load: Callable[[], Sequence[Migration]]) -> None:
        self.head = head
        self.load = load


def open_db(
    path: StrPath,
    migrations: Sequence[Migration] | Deferred,
    *,
    durability: str = "normal",
    busy_timeout_ms: int = 10_000,
    create: bool = True,
) -> sqlite3.Connection | None:
    """Open (and migrate) the database at ``path``.

    With ``create=False`` a missing file returns None and nothing is created: commands
    that only read must leave a fresh machine untouched.

    Raises:
        StorageError: the file cannot be opened or WAL cannot be enabled.
        SchemaTooNew: the file was written by a newer soloqueue-mem.
        TempFail: another process kept the database busy past the timeout.
    """
    path = os.fspath(path)
    name = os.path.basename(path)
    if not os.path.exists(path) or (not create and os.stat(path).st_size == 0):
        # Trigger: a 0-byte file (truncated, or created and never written). Why: migrating
        # it would invent an empty catalog, and GC would take every blob for an orphan.
        # Outcome: commands that only read treat it as missing.
        if not create:
            return None
        _create_private(path)
    elif os.path.islink(path):
        raise StorageError(f"{path} is a symlink; refusing to open it")
    if not create and not writable(path):
        if isinstance(migrations, Deferred):
            migrations = migrations.load()
        return open_read_only(path, migrations, busy_timeout_ms)
    try:
        conn = sqlite3.connect(
            path, isolation_level=None, timeout=busy_timeout_ms / 1000, check_same_thread=False
        )
    except sqlite3.Error as exc:
        raise StorageError(f"cannot open {path}: {exc}") from None
    try:
        _configure(conn, path, durability, busy_timeout_ms)
        _migrate(conn, migrations, name)
    except BaseException:
        conn.close()
        raise
    return conn


def _migrate(
    conn: sqlite3.Connection,
    migrations: Sequence[Migration] | Deferred,
    name: str,
) -> None:
    """Bring ``conn`` to ``len(migrations)``; raise SchemaTooNew for newer files.

    Every migration runs with its version bump in one ``BEGIN IMMEDIATE`` transaction,
    and the version is re-read inside it, so two processes opening an old database at
    once migrate it exactly once.
    """
    if isinstance(migrations, Deferred):
        if schema_version(conn) == migrations.head:
            return
        migrations = migrations.load()
    head = len(migrations)
    version = not_newer(conn, head, name)
    while version < head:
        with write_tx(conn):
            version = schema_version(conn)  # another process may have migrated meanwhile
            if version >= head:
                break
            migrations[version](conn)
            conn.execute(f"PRAGMA user_version = {version + 1}")
        version = schema_version(conn)


def writable(path: StrPath) -> bool:
    """Can this process write the database (its file and, for the ``-wal``/``-shm``
    files, its folder)?"""
    return os.access(path, os.W_OK) and os.access(os.path.dirname(os.fspath(path)), os.W_OK)


def read_only_uri(path: StrPath) -> str:
    """How to open a database this process cannot write: ``mode=ro`` when a ``-wal``
    file exists (its commits must be read), else ``immutable=1``, which needs no
    ``-shm`` file (one could not be created in a read-only folder)."""
    from urllib.parse import quote

    path = os.fspath(path)
    wal = os.path.exists(path + "-wal")
    return f"file:{quote(path)}?" + ("mode=ro" if wal else "immutable=1")


def open_read_only(
    path: StrPath, migrations: Sequence[Migration], busy_timeout_ms: int = 10_000
) -> sqlite3.Connection:
    """A query-only connection to a database of a read-only store (a backup, a mount):
    readers never need write access. Nothing is migrated, so the file must be at this
    program's schema (older: StorageError naming the fix; newer: SchemaTooNew).
    :func:`is_read_only` tells callers to skip their optional writes."""
    try:
        conn = sqlite3.connect(
            read_only_uri(path),
            uri=True,
            isolation_level=None,
            timeout=busy_timeout_ms / 1000,
            check_same_thread=False,
        )
        conn.execute("PRAGMA query_only = ON")
        conn.execute("PRAGMA trusted_schema = OFF")
        check_current(conn, migrations, os.path.basename(path))
    except sqlite3.Error as exc:
        raise_for(exc, path)
        raise  # unreachable: raise_for always raises
    return conn


def is_read_only(conn: sqlite3.Connection) -> bool:
    """Whether ``conn`` came from :func:`open_read_only`."""
    return bool(conn.execute("PRAGMA query_only").fetchone()[0])


def _create_private(path: str) -> None:
    """Create the empty database file 0600; SQLite gives ``-wal``/``-shm`` the same mode."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        os.close(os.open(path, flags, 0o600))
    except OSError as exc:
        raise StorageError(f"cannot create {path}: {exc.strerror}") from None


def _configure(conn: sqlite3.Connection, path: str, durability: str, busy_ms: int) -> None:
    try:
        # Wait for other writers instead of failing at once (SPEC §5 concurrency).
        conn.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
        # Many readers alongside one writer; required, so a refusal is an error.
        mode = _ensure_wal(conn, busy_ms)
        # NORMAL in WAL survives any process crash; FULL also survives power loss.
        sync = "FULL" if durability == "full" else "NORMAL"
        conn.execute(f"PRAGMA synchronous = {sync}")
        # Schema-level references are enforced, not advisory.
        conn.execute("PRAGMA foreign_keys = ON")
        # A crafted file cannot run functions from its views or triggers.
        conn.execute("PRAGMA trusted_schema = OFF")
    except sqlite3.OperationalError as exc:
        raise_for(exc, path)
    if mode.lower() != "wal":
        raise StorageError(f"{path}: cannot enable WAL mode (got {mode!r}); use a local disk")


def _ensure_wal(conn: sqlite3.Connection, busy_ms: int) -> str:
    """Switch to WAL unless already there.

    Trigger: a database that is already WAL (every open but the first). Why: asking
    for WAL again can fail with "database is locked" at once, without the busy
    handler, while another process holds its write or checkpoint lock (seen with 16
    concurrent writers). Outcome: read the mode first; retry the switch on a new file,
    where many processes may race to set it.
    """
    mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0])
    deadline = time.monotonic() + busy_ms / 1000
    delay = 0.005
    while mode.lower() != "wal":
        try:
            mode = str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)
            continue
        if mode.lower() != "wal":
            break
    return mode


def raise_for(exc: sqlite3.Error, path: StrPath) -> None:
    """Turn a sqlite3 error into ours: busy/locked is temporary, the rest is storage."""
    message = str(exc)
    name = os.path.basename(path)
    if "locked" in message or "busy" in message:
        raise TempFail(f"{name} is busy (another process is writing); try again")
    raise StorageError(f"{name}: {message}")


def write_tx(conn: sqlite3.Connection) -> WriteTransaction:
    """A write transaction: ``BEGIN IMMEDIATE`` outside, a SAVEPOINT when nested.

    Rolls back on any exception (including KeyboardInterrupt) and re-raises it.
    """
    return WriteTransaction(conn)


class WriteTransaction:
    """:func:`write_tx`'s context manager: a class, as ``contextlib`` is not on ``log``'s
    start-up path."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.nested = False

    def __enter__(self) -> sqlite3.Connection:
        conn = self.conn
        if conn.in_transaction:
            conn.execute("SAVEPOINT nested")
            self.nested = True
            return conn
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise_for(exc, _db_name(conn))
        return conn

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        conn = self.conn
        if self.nested:
            if kind is not None:
                conn.execute("ROLLBACK TO nested")
            conn.execute("RELEASE nested")
            return
        if kind is not None:
            _rollback(conn)
            return
        try:
            conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            _rollback(conn)
            raise_for(exc, _db_name(conn))


def _rollback(conn: sqlite3.Connection) -> None:
    """Roll back unless SQLite already did: after SQLITE_FULL or an I/O error it ends the
    transaction itself, and a second ROLLBACK ("cannot rollback - no transaction is
    active") would hide the error that matters."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def _db_name(conn: sqlite3.Connection) -> str:
    row = conn.execute("PRAGMA database_list").fetchone()
    return row[2] if row else "database"
