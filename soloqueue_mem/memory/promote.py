"""Seed 004's ``Promote``: text split into chunks (:mod:`.splitter`) that become
long-term memories of the group (FACT, PERMANENT, source ``promote``, tag
``promoted``), found by FTS at once and by the dense channel after the next
``consolidate``/``index --embed``. All chunks go in one write transaction; a chunk
whose content hash an active memory of the scope already has is skipped, so promoting
the same text twice changes nothing."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import NamedTuple

from soloqueue_mem.db.connect import write_tx
from soloqueue_mem.memory import store
from soloqueue_mem.memory.model import content_key
from soloqueue_mem.memory.splitter import split_text
from soloqueue_mem.memory.store import Draft

SOURCE = "promote"
TAG = "promoted"


class Promoted(NamedTuple):
    chunks: int  # chunks the text was split into
    stored: list[str]  # ids of the new memories
    existing: int  # chunks already stored (same content hash)


def promote(conn: sqlite3.Connection, group: str, agent: str, text: str, now: datetime) -> Promoted:
    chunks = list(dict.fromkeys(split_text(text)))  # a chunk repeated in the text: once
    stored: list[str] = []
    with write_tx(conn):
        known = store.active_keys(conn, group, agent, [content_key(c) for c in chunks], now)
        for chunk in chunks:
            if content_key(chunk) in known:
                continue
            draft = Draft(chunk, "FACT", duration="permanent", tags=(TAG,), source=SOURCE)
            result = store.remember(conn, draft, group, agent, now)
            known.add(content_key(chunk))
            stored.append(result.memory.id)
    return Promoted(len(chunks), stored, len(chunks) - len(stored))
