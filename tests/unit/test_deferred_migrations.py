"""memory.db's and graph.db's migrations are imported only for a file that is not at
the known head (``log`` and ``graph remember`` open an up-to-date file on every call);
any other version is migrated as before."""

from __future__ import annotations

import sqlite3

import pytest

from soloqueue_mem.config import Config
from soloqueue_mem.db.connect import Deferred, open_db
from soloqueue_mem.errors import SchemaTooNew
from soloqueue_mem.home import Home
from soloqueue_mem.storage.sqlite import schema_graph, stores
from soloqueue_mem.storage.sqlite.schema_memory import MIGRATIONS


def test_the_known_head_is_the_number_of_migrations():
    assert stores.MEMORY_HEAD == len(MIGRATIONS)
    assert stores.GRAPH_HEAD == len(schema_graph.MIGRATIONS)


def version(path) -> int:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA user_version").fetchone()[0]
    finally:
        conn.close()


def counting(migrations):
    loads = []

    def load():
        loads.append(1)
        return migrations

    return loads, load


def test_an_up_to_date_file_loads_no_migration_and_an_old_one_does(tmp_path):
    path = tmp_path / "memory.db"
    loads, load = counting(MIGRATIONS)
    open_db(path, Deferred(len(MIGRATIONS), load)).close()  # a new file: version 0
    assert loads == [1] and version(path) == len(MIGRATIONS)
    open_db(path, Deferred(len(MIGRATIONS), load)).close()
    assert loads == [1]


@pytest.mark.parametrize("stale", [0, 3, len(MIGRATIONS) - 1, len(MIGRATIONS) + 1])
def test_a_file_at_another_version_than_the_head_loads_them(tmp_path, stale):
    path = tmp_path / "memory.db"
    open_db(path, MIGRATIONS[:5]).close()
    loads, load = counting(MIGRATIONS)
    open_db(path, Deferred(stale, load)).close()
    assert version(path) == len(MIGRATIONS)
    assert loads == [1]


def test_a_newer_file_is_still_refused(tmp_path):
    path = tmp_path / "memory.db"
    open_db(path, MIGRATIONS).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    conn.close()
    with pytest.raises(SchemaTooNew):
        open_db(path, Deferred(len(MIGRATIONS), lambda: MIGRATIONS))


def test_open_memory_migrates_a_new_store(tmp_path):
    conn = stores.open_memory(Home(tmp_path / "store"), Config())
    assert conn is not None
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    conn.close()
