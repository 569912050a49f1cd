"""All SQL for ``token_cache``: cached token counts by key and encoding, and the
warnings a store has shown (key ``notice:<text>``, encoding ``notice``).

:class:`TokenCache` is what ``context build`` uses: :class:`SqliteTokenCache` here,
on memory.db, or the PostgreSQL back end's (:mod:`soloqueue_mem.storage.postgres.token_cache`).
"""

from __future__ import annotations

import hashlib
import sqlite3
from typing import Protocol

from soloqueue_mem.db.connect import is_read_only, write_tx
from soloqueue_mem.sessions.events import SessionKey


def turn_key(key: SessionKey, turn_index: int) -> str:
    return f"turn:{key.group}/{key.agent}/{key.session}#{turn_index}"


def text_key(text: str) -> str:
    return "text:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def cached(conn: sqlite3.Connection, keys: list[str], encoding: str) -> dict[str, int]:
    """The cached counts of ``keys`` (those present)."""
    found: dict[str, int] = {}
    for start in range(0, len(keys), 500):
        chunk = keys[start : start + 500]
        rows = conn.execute(
            f"SELECT key, tokens FROM token_cache WHERE encoding = ?"  # noqa: S608 - placeholders
            f" AND key IN ({', '.join('?' * len(chunk))})",
            (encoding, *chunk),
        )
        found.update(rows)
    return found


def store(conn: sqlite3.Connection, counts: dict[str, int], encoding: str) -> None:
    if not counts or is_read_only(conn):  # a read-only store: counted again next time
        return
    with write_tx(conn):
        conn.executemany(
            "INSERT OR REPLACE INTO token_cache (key, encoding, tokens) VALUES (?, ?, ?)",
            [(key, encoding, tokens) for key, tokens in counts.items()],
        )


def unseen(conn: sqlite3.Connection, notes: list[str]) -> list[str]:
    """The notes this store has not shown before, recorded now as shown."""
    if not notes:
        return []
    if is_read_only(conn):  # nothing can be recorded: every note is shown
        return notes
    with write_tx(conn):
        return [
            note
            for note in notes
            if conn.execute(
                "INSERT OR IGNORE INTO token_cache (key, encoding, tokens) VALUES (?, 'notice', 0)",
                ("notice:" + note,),
            ).rowcount
        ]


class TokenCache(Protocol):
    def cached(self, keys: list[str], encoding: str) -> dict[str, int]: ...

    def store(self, counts: dict[str, int], encoding: str) -> None: ...

    def unseen(self, notes: list[str]) -> list[str]: ...


class SqliteTokenCache:
    """:class:`TokenCache` on memory.db."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def cached(self, keys: list[str], encoding: str) -> dict[str, int]:
        return cached(self.conn, keys, encoding)

    def store(self, counts: dict[str, int], encoding: str) -> None:
        store(self.conn, counts, encoding)

    def unseen(self, notes: list[str]) -> list[str]:
        return unseen(self.conn, notes)
