"""All SQL for ``token_cache`` on PostgreSQL: :class:`soloqueue_mem.context.cache.
TokenCache` shared by every host (a logged turn's count is the same wherever it is
counted; a warning is said once per database, as once per memory.db on SQLite)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import psycopg


class PostgresTokenCache:
    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn

    def cached(self, keys: list[str], encoding: str) -> dict[str, int]:
        """The cached counts of ``keys`` (those present)."""
        rows = self.conn.execute(
            "SELECT key, tokens FROM token_cache WHERE encoding = %s AND key = ANY(%s)",
            (encoding, keys),
        ).fetchall()
        return dict(rows)

    def store(self, counts: dict[str, int], encoding: str) -> None:
        if not counts:
            return
        with self.conn.transaction(), self.conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO token_cache (key, encoding, tokens) VALUES (%s, %s, %s)"
                " ON CONFLICT (key, encoding) DO UPDATE SET tokens = EXCLUDED.tokens",
                [(key, encoding, tokens) for key, tokens in counts.items()],
            )

    def unseen(self, notes: list[str]) -> list[str]:
        """The notes this database has not shown before, recorded now as shown."""
        if not notes:
            return []
        rows = self.conn.execute(
            "INSERT INTO token_cache (key, encoding, tokens)"
            " SELECT 'notice:' || note, 'notice', 0 FROM unnest(%s::text[]) AS note"
            " ON CONFLICT DO NOTHING RETURNING key",
            (notes,),
        ).fetchall()
        shown = {row[0] for row in rows}
        return [note for note in notes if "notice:" + note in shown]
