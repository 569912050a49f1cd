"""The PostgreSQL back end's own checks run on the embedded server of tests/conftest.py
(``pg_server``, ``database_url``); without the ``postgres`` extra they skip, and
pytest's summary prints why."""

from __future__ import annotations

import pytest


@pytest.fixture
def on_postgres(database_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """This test's commands use the PostgreSQL back end."""
    monkeypatch.setenv("SOLOQUEUE_DATABASE_URL", database_url)
    return database_url
