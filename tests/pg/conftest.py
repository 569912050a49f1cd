"""The PostgreSQL back end's own checks run on the embedded server of tests/conftest.py
(``pg_server``, ``database_url``); without the ``postgres`` extra they skip, and
pytest's summary prints why."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def on_postgres(database_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """This test's commands use the PostgreSQL back end."""
    monkeypatch.setenv("SOLOQUEUE_DATABASE_URL", database_url)
    return database_url


def let_go(conn: Any, key: int) -> None:
    """Unlock the session advisory lock ``key`` that another host's connection holds,
    as a run that ends does, before the connection closes: a closed connection's locks
    go only when its server process exits, a moment after ``close()`` returns, and a
    test that took the lock for free right after a bare close failed on a loaded
    machine (exit 75)."""
    (unlocked,) = conn.execute("SELECT pg_advisory_unlock(%s)", (key,)).fetchone()
    assert unlocked
