"""``attachments`` on PostgreSQL: its full-text index (the ``search`` column) for the
SQL written once in :mod:`soloqueue_mem.memory.attachments`, and the search that uses it.

The row and its extracted text are shared by every host; the blob is in the CAS of the
host that attached it (``local_path``, ``artifact_id`` name its place there). ``search``
holds the bigram lexemes (:mod:`soloqueue_mem.storage.postgres.text`) of the description,
transcription, extracted text, file name and tags, so recall's ``attachments`` channel
finds a row as the SQLite index does.
"""

from __future__ import annotations

from typing import Any

from soloqueue_mem.db.adapter import Db
from soloqueue_mem.memory.attachments import COLUMNS, Attachment, Filters, where
from soloqueue_mem.memory.attachments import _attachment as attachment_from_row
from soloqueue_mem.storage.postgres.text import UNLESS_TAKEN, any_query, document, insert_indexed


def search_text(a: Attachment) -> str:
    """What the lexical index holds: the texts the SQLite index holds."""
    return document(
        " ".join([a.description, a.transcription, a.extracted_text, a.filename, *a.tags])
    )


class TsVector:
    """:class:`soloqueue_mem.memory.attachments.FullText` on PostgreSQL: the ``search``
    column, written with the row (a deleted row takes it along)."""

    order = "seq"

    def insert(self, db: Db, values: list[Any], attachment: Attachment) -> bool:
        indexed = search_text(attachment)
        cursor = insert_indexed(db, "attachments", COLUMNS, values, indexed, UNLESS_TAKEN)
        return bool(cursor.rowcount == 1)

    def forget(self, db: Db, attachment_id: str) -> None:
        pass

    def search(
        self, db: Db, terms: list[str], filters: Filters, now: str, limit: int
    ) -> list[tuple[Attachment, float]]:
        """Best ``ts_rank`` first."""
        match = any_query(terms)
        if match is None:
            return []
        condition, params = where(db, filters)
        rows = db.fetchall(
            f"SELECT {COLUMNS}, ts_rank(search, q) AS score"  # noqa: S608 - fixed fragments
            " FROM attachments, to_tsquery('simple', :match) AS q WHERE search @@ q"
            f" AND {condition} ORDER BY score DESC, created_at DESC LIMIT :limit",
            {**params, "match": match, "now": now, "limit": limit},
        )
        return [(attachment_from_row(row[:-1]), float(row[-1])) for row in rows]


TSVECTOR = TsVector()
