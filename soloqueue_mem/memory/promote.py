"""Seed 004's ``Promote``: text split into chunks (:mod:`.splitter`) that become
long-term memories of the group (FACT, PERMANENT, source ``promote``, tag
``promoted``), found by FTS at once and, embedded by the caller
(:mod:`soloqueue_mem.semantic.fresh`), by the dense channels too. All chunks go in
one write transaction; a chunk whose content hash an active memory of the scope
already has is skipped, so promoting the same text twice changes nothing."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime
from typing import NamedTuple

from soloqueue_mem.db.connect import write_tx
from soloqueue_mem.memory import store
from soloqueue_mem.memory.model import content_key
from soloqueue_mem.memory.splitter import split_text
from soloqueue_mem.memory.store import Draft, Remembered

SOURCE = "promote"
TAG = "promoted"


class Promoted(NamedTuple):
    chunks: int  # chunks the text was split into
    stored: list[str]  # ids of the new memories
    existing: int  # chunks already stored (same content hash)


def promote(conn: sqlite3.Connection, group: str, agent: str, text: str, now: datetime) -> Promoted:
    with write_tx(conn):
        return promoted(
            text,
            lambda keys: store.active_keys(conn, group, agent, keys, now),
            lambda draft: store.remember(conn, draft, group, agent, now),
        )


def promoted(
    text: str,
    active_keys: Callable[[list[str]], set[str]],
    remember: Callable[[Draft], Remembered],
) -> Promoted:
    """The chunks of ``text`` no active memory holds yet, stored through ``remember``
    (a back end's, inside the caller's transaction)."""
    chunks = list(dict.fromkeys(split_text(text)))  # a chunk repeated in the text: once
    stored: list[str] = []
    known = active_keys([content_key(c) for c in chunks])
    for chunk in chunks:
        if content_key(chunk) in known:
            continue
        draft = Draft(chunk, "FACT", duration="permanent", tags=(TAG,), source=SOURCE)
        stored.append(remember(draft).memory.id)
        known.add(content_key(chunk))
    return Promoted(len(chunks), stored, len(chunks) - len(stored))
