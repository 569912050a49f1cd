"""The SQL written once for both back ends (:mod:`soloqueue_mem.db.adapter`): it holds
SQLite's ``?`` marks only, which the adapter translates for PostgreSQL."""

from __future__ import annotations

import ast
import re
import sqlite3
from pathlib import Path

import soloqueue_mem
from soloqueue_mem.db.adapter import Db, postgres_sql

PACKAGE = Path(soloqueue_mem.__file__).parent
# psycopg's marks (%s, %(name)s, %b, %t) and asyncpg's ($1)
DRIVER_MARK = re.compile(r"%[sbt]\b|%\([a-z_]+\)[sbt]|\$[1-9]")
# The domain modules both back ends run (each once had a PostgreSQL twin).
WRITTEN_ONCE = {
    "state/values.py",
    "state/session.py",
    "lifecycle/queue.py",
    "graph/queue.py",
    "memory/working.py",
    "memory/scratchpad.py",
    "context/cache.py",
    "memory/store.py",
    "memory/episodes.py",
    "memory/attachments.py",
    "memory/attach.py",
    "sessions/turns.py",
    "lifecycle/digest.py",
    "lifecycle/on_log.py",
    "context/compress.py",
    "graph/store.py",
}


def _strings(tree: ast.AST) -> list[str]:
    """The string constants of ``tree`` (f-strings' literal parts included)."""
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def _uses_the_adapter(tree: ast.AST) -> bool:
    return any(
        isinstance(node, ast.ImportFrom) and node.module == "soloqueue_mem.db.adapter"
        for node in ast.walk(tree)
    )


def test_sql_written_for_both_back_ends_holds_no_driver_mark() -> None:
    offenders = []
    folded = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "adapter.py" or "postgres" in path.parts:
            continue  # PostgreSQL's own SQL, not written for both
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if not _uses_the_adapter(tree):
            continue
        folded.add(path.relative_to(PACKAGE).as_posix())
        offenders += [
            f"{path.relative_to(PACKAGE)}: {text!r}"
            for text in _strings(tree)
            if DRIVER_MARK.search(text)
        ]
    assert WRITTEN_ONCE <= folded, "the domain modules written once import the adapter"
    assert offenders == []


def test_postgres_marks_and_literal_percent_signs() -> None:
    sql = "SELECT key FROM t WHERE key LIKE 'notice:%' AND encoding = ? LIMIT ?"
    assert postgres_sql(sql) == (
        "SELECT key FROM t WHERE key LIKE 'notice:%%' AND encoding = %s LIMIT %s"
    )


def test_a_sqlite_connection_runs_the_sql_as_written(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    db = Db(conn)
    db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
    with db.write():
        first = db.insert("INSERT INTO t (name) VALUES (?)", ("a%",))
        db.lock("ignored on SQLite: the write transaction is the lock")
    assert (first, db.postgres, db.read_only()) == (1, False, False)
    assert db.fetchall("SELECT id, name FROM t WHERE name LIKE 'a%'") == [(1, "a%")]
    assert db.bytewise("name") == "name"
