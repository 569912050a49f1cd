"""``stats``: what the store holds, read-only (a missing store creates nothing)."""

from __future__ import annotations

import os
import sqlite3
from typing import TYPE_CHECKING, Any

from soloqueue_mem.db.migrate import schema_version
from soloqueue_mem.home import Home
from soloqueue_mem.integrations.hook_errors import count_errors
from soloqueue_mem.lifecycle.consolidate import read_state as consolidate_state
from soloqueue_mem.lifecycle.gc import read_state

if TYPE_CHECKING:
    from collections.abc import Callable

    from soloqueue_mem.home import StrPath


def _size(path: StrPath) -> int:
    total = 0
    for suffix in ("", "-wal", "-shm"):
        try:
            total += os.stat(f"{path}{suffix}").st_size
        except FileNotFoundError:
            pass
    return total


def _tree_size(folder: StrPath, suffix: str) -> tuple[int, int]:
    count = size = 0
    for dirpath, _, files in os.walk(folder):
        for name in files:
            if name.endswith(suffix):
                try:
                    size += os.stat(os.path.join(dirpath, name)).st_size
                except FileNotFoundError:
                    continue  # a gc deleted it since the listing (stats takes no lock)
                count += 1
    return count, size


def store_stats(
    home: Home,
    memory: sqlite3.Connection | None,
    artifacts: sqlite3.Connection | None,
    open_queue: Callable[[], sqlite3.Connection | None],
) -> dict[str, Any]:
    """Counts, sizes and schema versions of everything present; ``open_queue`` opens
    state.db read-only (None: no file), closed here."""
    databases: dict[str, Any] = {}
    for path in (home.memory_db, home.state_db, home.artifacts_db, home.graph_db):
        if os.path.exists(path):
            databases[os.path.basename(path)] = {"bytes": _size(path)}
    counts: dict[str, int] = {
        "turns": 0, "sessions": 0, "memories": 0, "artifacts": 0, "attachments": 0
    }  # fmt: skip
    if memory is not None:
        databases["memory.db"]["schema_version"] = schema_version(memory)
        counts["turns"] = memory.execute("SELECT COUNT(*) FROM conversation_turns").fetchone()[0]
        counts["sessions"] = memory.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
        counts["memories"] = memory.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
        counts["attachments"] = memory.execute("SELECT COUNT(*) FROM attachments").fetchone()[0]
    if artifacts is not None:
        databases["artifacts.db"]["schema_version"] = schema_version(artifacts)
        counts["artifacts"] = artifacts.execute("SELECT COUNT(*) FROM artifacts").fetchone()[0]
    logs, log_bytes = _tree_size(home.path("groups"), ".jsonl")
    blobs, blob_bytes = _tree_size(home.blobs_dir, "")
    return {
        "root": home.dir,
        "exists": home.exists(),
        "counts": counts,
        "databases": databases,
        "session_logs": {"files": logs, "bytes": log_bytes},
        "blobs": {"files": blobs, "bytes": blob_bytes},
        "gc": read_state(home.gc_state),
        "consolidate": consolidate_state(home),
        "extraction_queue": _queue_depth(open_queue),
        "hook_errors": count_errors(home),
    }


def _queue_depth(open_queue: Callable[[], sqlite3.Connection | None]) -> dict[str, int]:
    """Items per status in state.db's extraction queue (none: no file)."""
    from soloqueue_mem.lifecycle.queue import depth

    conn = open_queue()
    if conn is None:
        return {}
    try:
        return depth(conn)
    except sqlite3.OperationalError:  # an empty or foreign file: nothing queued here
        return {}
    finally:
        conn.close()
