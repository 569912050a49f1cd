"""All SQL for ``token_cache``: cached token counts by key and encoding, and the
warnings a store has shown (key ``notice:<text>``, encoding ``notice``).

:class:`TokenCache` is what ``context build`` uses: :class:`SqlTokenCache` on either
back end's connection (memory.db, or the PostgreSQL database that every host shares:
a logged turn's count is the same wherever it is counted, and a warning is said once
per database).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Protocol

from soloqueue_mem.db.adapter import Db
from soloqueue_mem.sessions.events import SessionKey

if TYPE_CHECKING:
    from soloqueue_mem.db.adapter import Connection


def turn_key(key: SessionKey, turn_index: int) -> str:
    return f"turn:{key.group}/{key.agent}/{key.session}#{turn_index}"


def text_key(text: str) -> str:
    return "text:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def cached(conn: Connection, keys: list[str], encoding: str) -> dict[str, int]:
    """The cached counts of ``keys`` (those present)."""
    db = Db(conn)
    found: dict[str, int] = {}
    for start in range(0, len(keys), 500):
        chunk = keys[start : start + 500]
        rows = db.fetchall(
            f"SELECT key, tokens FROM token_cache WHERE encoding = ?"  # noqa: S608 - placeholders
            f" AND key IN ({', '.join('?' * len(chunk))})",
            (encoding, *chunk),
        )
        found.update(rows)
    return found


def store(conn: Connection, counts: dict[str, int], encoding: str) -> None:
    db = Db(conn)
    if not counts or db.read_only():  # a read-only store: counted again next time
        return
    with db.write():
        db.executemany(
            "INSERT INTO token_cache (key, encoding, tokens) VALUES (?, ?, ?)"
            " ON CONFLICT (key, encoding) DO UPDATE SET tokens = excluded.tokens",
            [(key, encoding, tokens) for key, tokens in counts.items()],
        )


def unseen(conn: Connection, notes: list[str]) -> list[str]:
    """The notes this store has not shown before, recorded now as shown."""
    db = Db(conn)
    if not notes:
        return []
    if db.read_only():  # nothing can be recorded: every note is shown
        return notes
    with db.write():
        return [
            note
            for note in notes
            if db.execute(
                "INSERT INTO token_cache (key, encoding, tokens) VALUES (?, 'notice', 0)"
                " ON CONFLICT DO NOTHING",
                ("notice:" + note,),
            ).rowcount
        ]


class TokenCache(Protocol):
    def cached(self, keys: list[str], encoding: str) -> dict[str, int]: ...

    def store(self, counts: dict[str, int], encoding: str) -> None: ...

    def unseen(self, notes: list[str]) -> list[str]: ...


class SqlTokenCache:
    """:class:`TokenCache` on a back end's connection."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def cached(self, keys: list[str], encoding: str) -> dict[str, int]:
        return cached(self.conn, keys, encoding)

    def store(self, counts: dict[str, int], encoding: str) -> None:
        store(self.conn, counts, encoding)

    def unseen(self, notes: list[str]) -> list[str]:
        return unseen(self.conn, notes)
