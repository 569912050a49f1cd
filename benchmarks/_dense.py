"""Embedding a benchmark store through the library, with vectors kept between runs.

Each benchmark builds its stores afresh in a temporary folder, and embedding them
costs minutes (about 14 texts/s on two cores). ``VECTORS`` keeps every vector a run
computed, keyed like the store's own ``embedding_cache`` by (model, content hash of
exactly what the model reads): before the library's embedding pass
(:func:`soloqueue_mem.semantic.embed.embed_store`) the store's cache is filled with
the vectors already known for its texts, so only new texts go through the model, and
afterwards the new vectors are kept for the next run.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path

import _common as c

VECTORS = c.CACHE / "vectors.db"


def available() -> str | None:
    """Why the dense channel cannot be measured here; None when it can."""
    from soloqueue_mem.semantic.model import unavailable

    return unavailable()


def remember_queries() -> None:
    """Embed each distinct query once in this process, by every installed model: a
    benchmark asks the same question at several limits and weights, and recall's answer
    does not depend on how the query vector was obtained (its time does: do not time
    recall after this)."""
    from functools import lru_cache

    from soloqueue_mem.semantic.model import load, usable

    for key in usable():
        model = load(key)
        model.query = lru_cache(maxsize=4096)(model.query)  # type: ignore[method-assign]


def _open_vectors(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE IF NOT EXISTS vectors (model TEXT, content_hash TEXT, dim INTEGER,"
        " vector BLOB, PRIMARY KEY (model, content_hash)) WITHOUT ROWID"
    )
    return conn


def embed(conn: sqlite3.Connection, now: datetime, *, turns: bool = True) -> dict:
    """Give the store's memories, episodes (and turns) vectors by every installed model;
    returns the library's report of e5, with each other model's under its key
    (``embedded`` counts only the texts no earlier run had seen)."""
    from soloqueue_mem.semantic.model import usable

    report: dict = {}
    for key in usable():
        found = _embed_by(conn, now, key, turns)
        if key == "e5":
            report.update(found)
        else:
            report[key] = found
    return report


def _embed_by(conn: sqlite3.Connection, now: datetime, key: str, turns: bool) -> dict:
    from soloqueue_mem.semantic import embed as library
    from soloqueue_mem.semantic.index import content_hash
    from soloqueue_mem.semantic.model import load

    model = load(key)
    items = library.memory_items(conn, now) + (list(library.turn_items(conn)) if turns else [])
    wanted = sorted({content_hash(item.text) for item in items})
    kept = _open_vectors(VECTORS)
    try:
        rows = []
        for start in range(0, len(wanted), 900):
            part = wanted[start : start + 900]
            rows += kept.execute(
                "SELECT content_hash, dim, vector FROM vectors"  # noqa: S608 - placeholders
                f" WHERE model = ? AND content_hash IN ({','.join('?' * len(part))})",
                (model.name, *part),
            ).fetchall()
        with conn:
            conn.executemany(
                "INSERT INTO embedding_cache (model, content_hash, dim, vector, created_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (model, content_hash) DO NOTHING",
                [(model.name, digest, dim, blob, now.isoformat()) for digest, dim, blob in rows],
            )
        memories, turn_items = library.memory_items(conn, now), library.turn_items(conn)
        report = library.embed_store(conn, model, now, memories, turn_items if turns else None)
        new = conn.execute(
            "SELECT content_hash, dim, vector FROM embedding_cache WHERE model = ?", (model.name,)
        ).fetchall()
        with kept:
            kept.executemany(
                "INSERT OR IGNORE INTO vectors VALUES (?, ?, ?, ?)",
                [(model.name, digest, dim, blob) for digest, dim, blob in new],
            )
    finally:
        kept.close()
    return report


def add_options(parser) -> None:
    """The hybrid benchmarks' options (bench_locomo, bench_zh)."""
    parser.add_argument("--no-dense", action="store_true", help="skip recall (hybrid)")
    parser.add_argument(
        "--dense-weights",
        type=lambda text: [float(w) for w in text.split(",")],
        default=[None],
        help="comma-separated fusion weights of the dense channel to compare "
        "(default: its registered weight)",
    )


def random_vectors(root: Path, seed: int = 7) -> dict[str, int]:
    """Give every active memory of the store at ``root`` a random unit vector by every
    installed model, linked as ``embed_store`` links them, and build the memory-mapped
    copies: for timing searches at scale, where embedding 100k texts for real would
    take hours (a search's cost does not depend on the vectors' values). Returns the
    vectors added per model name."""
    import numpy as np

    from soloqueue_mem.config import Config
    from soloqueue_mem.db.connect import write_tx
    from soloqueue_mem.home import Home
    from soloqueue_mem.semantic import mapped
    from soloqueue_mem.semantic.index import content_hash
    from soloqueue_mem.semantic.model import load, usable
    from soloqueue_mem.storage.sqlite.stores import open_memory

    conn = open_memory(Home(root), Config())
    assert conn is not None
    rng = np.random.default_rng(seed)
    added = {}
    try:
        rows = conn.execute(
            "SELECT id, group_id, agent_id, content FROM memories WHERE superseded_by IS NULL"
        ).fetchall()
        for key in usable():
            model = load(key)
            vectors = rng.standard_normal((len(rows), model.dim), dtype=np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            hashes = [content_hash(content) for *_, content in rows]
            with write_tx(conn):
                conn.executemany(
                    "INSERT INTO embedding_cache (model, content_hash, dim, vector, created_at)"
                    " VALUES (?, ?, ?, ?, '2026-11-01T00:00:00.000Z') ON CONFLICT DO NOTHING",
                    (
                        (model.name, h, model.dim, v.tobytes())
                        for h, v in zip(hashes, vectors, strict=True)
                    ),
                )
                conn.executemany(
                    "INSERT OR REPLACE INTO embedded_items VALUES (?, 'memory', ?, ?, ?, ?)",
                    (
                        (model.name, i, g, a, h)
                        for (i, g, a, _), h in zip(rows, hashes, strict=True)
                    ),
                )
            mapped.refresh(conn, model.name)
            added[model.name] = len(rows)
    finally:
        conn.close()
    return added
