"""The bigram re-index of a database written before it (schema step 3) runs in batches
committed with their progress: a worker killed with SIGKILL, after a batch or inside
one, is resumed by the next open without skipping or redoing a row; meanwhile other
processes read each row in one form or the other."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from soloqueue_mem.storage.postgres import reindex
from soloqueue_mem.storage.postgres.schema import MIGRATIONS
from tests.conftest import Cli
from tests.pg.conftest import let_go

pytest.importorskip("psycopg")
import psycopg  # noqa: E402

BATCH = 7
TURNS = 30  # 5 batches: 4 full, 1 short
STAMP = "2026-01-01T00:00:00.000Z"
BEFORE = MIGRATIONS.index(next(step for step in MIGRATIONS if callable(step)))
WORKER = f"""
import sys
from soloqueue_mem.storage.postgres import reindex
reindex.BATCH = {BATCH}
from soloqueue_mem.storage.postgres.connect import connect
connect(sys.argv[1]).close()
"""


def text(n: int, old: bool = False) -> str:
    """Turn ``n``'s text (odd turns hold Chinese); ``old``: as the old form indexed it."""
    chinese = "我 们 在 上 海 开 会" if old else "我们在上海开会"
    return f"turn {n} {chinese}" if n % 2 else f"turn {n} plain english"


def old_database(url: str) -> None:
    """A database at the version before the step, its CJK indexed a character a lexeme."""
    with psycopg.connect(url, autocommit=True) as conn:
        for step in MIGRATIONS[:BEFORE]:
            conn.execute(step)  # type: ignore[arg-type] - constant SQL
        conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        conn.execute("INSERT INTO schema_version VALUES (%s)", (BEFORE,))
        for n in range(TURNS):
            conn.execute(
                "INSERT INTO quarantine_logs (group_id, agent_id, session_id, turn_index, role,"
                " content, timestamp, search) VALUES ('default', 'default', 's1', %s, 'user',"
                " %s, %s, to_tsvector('simple', %s))",
                (n, text(n), STAMP, text(n, old=True)),
            )
        conn.execute(
            "INSERT INTO sessions (group_id, agent_id, session_id, started_at, last_turn_at,"
            " turn_count, next_turn_index) VALUES ('default', 'default', 's1', %s, %s, %s, %s)",
            (STAMP, STAMP, TURNS, TURNS),
        )


def run_worker(url: str, fault: str | None) -> subprocess.Popen[bytes]:
    env = {**os.environ, "SOLOQUEUE_TESTING": "1", "SOLOQUEUE_FAULT": fault or ""}
    return subprocess.Popen([sys.executable, "-c", WORKER, url], env=env)


def progress(url: str) -> dict[str, int]:
    with psycopg.connect(url, autocommit=True) as conn:
        return reindex.pending(conn)["quarantine_logs"]


def bigram_form(url: str) -> list[bool]:
    """Per turn in id order: does its tsvector hold the bigram form?"""
    table = reindex.TABLES["quarantine_logs"]
    keys: list[int] = []
    stale: set[int] = set()
    with psycopg.connect(url, autocommit=True) as conn:
        for batch, docs in reindex.batches(conn, table):
            keys += batch
            stale.update(reindex.stale(conn, table, batch, docs))
    return [key not in stale for key in keys]


def test_a_killed_reindex_resumes_without_skipping_or_redoing_a_row(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    old_database(database_url)
    stopped = run_worker(database_url, "reindex.after_batch:stop")
    os.waitpid(stopped.pid, os.WUNTRACED)  # the first batch is committed: it stops there
    stopped.kill()
    assert stopped.wait() == -signal.SIGKILL
    first = progress(database_url)
    assert first["checked"] == BATCH and first["rewritten"] == BATCH // 2
    assert bigram_form(database_url) == [n < BATCH or n % 2 == 0 for n in range(TURNS)]

    killed = run_worker(database_url, "reindex.mid_batch:kill")  # dies inside batch 2
    assert killed.wait() == -signal.SIGKILL
    assert progress(database_url) == first  # the batch in flight rolled back

    monkeypatch.setattr(reindex, "BATCH", BATCH)
    with psycopg.connect(database_url, autocommit=True) as conn:
        done = reindex.resume(conn)
        assert reindex.pending(conn) == {}  # finished: the progress table is gone
        (version,) = conn.execute("SELECT version FROM schema_version").fetchone() or (0,)
    assert done == {
        "quarantine_logs": {"checked": TURNS - BATCH, "rewritten": TURNS // 2 - BATCH // 2}
    }
    assert version == len(MIGRATIONS)
    assert bigram_form(database_url) == [True] * TURNS


def test_readers_go_on_while_another_process_holds_the_job(
    cli: Cli, database_url: str, on_postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader finding the job held by a worker searches at once: a word in every
    row, a CJK word in the rows already re-indexed."""
    old_database(database_url)
    monkeypatch.setattr(reindex, "BATCH", BATCH)
    with psycopg.connect(database_url, autocommit=True) as worker:
        with worker.transaction():
            reindex.schedule(worker)
        reindex._continue(worker, reindex.TABLES["quarantine_logs"], 0, BATCH)  # one batch
        worker.execute("SELECT pg_advisory_lock(%s)", (reindex._LOCK,))
        english = cli.json("trace", "turn", "--limit", "100")
        chinese = cli.json("trace", "上海", "--limit", "100")
        assert reindex.pending(worker)["quarantine_logs"]["checked"] == BATCH  # untouched
        let_go(worker, reindex._LOCK)
    assert len(english) == TURNS
    assert sorted(hit["turn_index"] for hit in chinese) == [1, 3, 5]
    assert len(cli.json("trace", "上海", "--limit", "100")) == TURNS // 2  # the job is done
