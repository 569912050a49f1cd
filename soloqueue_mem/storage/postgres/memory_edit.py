"""``memory edit`` and ``memory restore`` on PostgreSQL, with the rules of
:func:`soloqueue_mem.memory.store.edit` and :func:`~soloqueue_mem.memory.store.restore`.

An edit corrects a memory in place (no new version: its history chain is unchanged);
the row is locked while it is read and rewritten, so two hosts editing the same memory
apply one change after the other, each to the other's result.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from soloqueue_mem.clock import iso
from soloqueue_mem.memory.store import Changes, edited, edited_values
from soloqueue_mem.storage.postgres.memories import _search_text, get

if TYPE_CHECKING:
    import psycopg

    from soloqueue_mem.memory.model import Memory


def edit(conn: psycopg.Connection, ref: str, changes: Changes, now: datetime) -> Memory:
    """Change a memory in place (a correction, not a new version)."""
    with conn.transaction():
        memory_id = get(conn, ref).id
        conn.execute("SELECT 1 FROM memories WHERE id = %s FOR UPDATE", (memory_id,))
        new = edited(get(conn, memory_id), changes, now)  # read again under the lock
        conn.execute(
            "UPDATE memories SET content = %s, type = %s, subject = %s, predicate = %s,"
            " importance_score = %s, confidence = %s, tags = %s, priority = %s,"
            " expires_at = %s, fixed_expiry = %s, updated_at = %s, content_key = %s,"
            " search = to_tsvector('simple', %s) WHERE id = %s",
            (*edited_values(new), _search_text(new), memory_id),
        )
    return new


def restore(conn: psycopg.Connection, ref: str, now: datetime) -> Memory:
    """Bring an archived memory back (its decay starts again from now)."""
    with conn.transaction():
        memory_id = get(conn, ref).id
        conn.execute(
            "UPDATE memories SET archived_at = NULL, last_accessed_at = %s WHERE id = %s",
            (iso(now), memory_id),
        )
    return get(conn, memory_id)
