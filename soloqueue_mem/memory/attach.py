"""Attachment operations across the two databases they touch.

An attachment is an artifact (its bytes in the CAS, tagged ``user:persistent`` so GC
keeps them) plus a row in memory.db's ``attachments``. Written blob first, artifact
row second, attachment row last; removed in the reverse order of what matters: the
artifact row goes first, then the attachment row, so a crash in between leaves an
attachment whose removal simply runs again (never a persistent artifact nobody
references). The blob itself goes in GC phase 2 once no row references it.

The attachment rows (:class:`Rows`) live in memory.db or, with ``database_url`` set,
in PostgreSQL, shared by every host; the artifact row and the blob stay in the catalog
and CAS of the host that attached the file, so removing an attachment deletes an
artifact row only when this host's catalog holds that very blob under that id.
"""

from __future__ import annotations

import mimetypes
import sqlite3
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, BinaryIO, NamedTuple

from soloqueue_mem.artifacts import catalog
from soloqueue_mem.artifacts.store import NewArtifact, save
from soloqueue_mem.clock import iso
from soloqueue_mem.db.adapter import Db
from soloqueue_mem.db.connect import write_tx
from soloqueue_mem.errors import BadInput, NotFound
from soloqueue_mem.home import Home
from soloqueue_mem.memory import attachments
from soloqueue_mem.memory.attachment_text import MAX_BYTES, extract_text
from soloqueue_mem.memory.attachments import DIRECTIONS, Attachment, Filters

if TYPE_CHECKING:
    from soloqueue_mem.db.adapter import Connection

PERSISTENT = "user:persistent"
MAX_TAG_CHARS = 64
EXPIRE_BATCH = 500


class NewAttachment(NamedTuple):
    """What the caller says about a file it attaches."""

    filename: str
    group: str
    agent: str
    direction: str = "inbound"
    description: str = ""
    transcription: str = ""
    tags: tuple[str, ...] = ()
    session: str = ""
    mime_type: str | None = None  # None: guessed from the file name
    url: str = ""
    expires_at: datetime | None = None


class Rows:
    """The attachment rows in a back end's database (:class:`soloqueue_mem.db.adapter.Db`),
    with its full-text index; each write its own transaction."""

    def __init__(self, conn: Connection, index: attachments.FullText = attachments.FTS5) -> None:
        self.conn = conn
        self.index = index

    def insert(self, row: Attachment) -> None:
        with Db(self.conn).write():
            attachments.insert(self.conn, row, self.index)

    def get(self, ref: str) -> Attachment:
        return attachments.get(self.conn, ref)

    def listed(self, filters: Filters, now: str, limit: int) -> list[Attachment]:
        return attachments.list_attachments(self.conn, filters, now, limit, self.index)

    def expired(self, now: str, limit: int) -> list[Attachment]:
        return attachments.expired(self.conn, now, limit, self.index)

    def delete(self, rows: list[Attachment]) -> None:
        with Db(self.conn).write():
            for row in rows:
                attachments.delete(self.conn, row.id, self.index)


class _Head:
    """A read-through stream that keeps the first ``limit`` bytes it passes on, so the
    blob is written and its text extracted in one pass over the source."""

    def __init__(self, source: BinaryIO, limit: int) -> None:
        self.source = source
        self.limit = limit
        self.kept = bytearray()

    def read(self, size: int = -1) -> bytes:
        chunk = self.source.read(size)
        if len(self.kept) < self.limit:
            self.kept += chunk[: self.limit - len(self.kept)]
        return chunk


def check(new: NewAttachment) -> None:
    """BadInput for a direction, file name or tag that cannot be stored."""
    if new.direction not in DIRECTIONS:
        raise BadInput(f"--direction must be inbound or outbound, not {new.direction!r}")
    if not new.filename.strip() or "/" in new.filename or "\x00" in new.filename:
        raise BadInput(f"not a file name: {new.filename!r}")
    for tag in new.tags:
        if not tag.strip() or len(tag) > MAX_TAG_CHARS or not tag.isprintable():
            raise BadInput(f"invalid tag {tag!r}: 1-{MAX_TAG_CHARS} printable characters")


def attach(
    home: Home,
    rows: Rows,
    artifacts: sqlite3.Connection,
    source: BinaryIO,
    new: NewAttachment,
    now: datetime,
    redact: Callable[[str], str] = str,
) -> Attachment:
    """Store ``source`` as a persistent artifact and record it as an attachment.

    ``redact`` is applied to every text stored in the row (the caller redacts the
    bytes themselves before they reach ``source``).
    """
    check(new)
    mime = new.mime_type or mimetypes.guess_type(new.filename)[0] or "application/octet-stream"
    head = _Head(source, MAX_BYTES)
    meta = NewArtifact(title=new.filename, tags=(PERSISTENT,), group=new.group, mime=mime)
    saved = save(home, artifacts, head, meta, now).artifact  # type: ignore[arg-type]
    row = Attachment(
        id=uuid.uuid4().hex,
        group=new.group,
        agent=new.agent,
        session=new.session,
        episode_id="",
        filename=new.filename,
        original_filename=new.filename,
        mime_type=mime,
        file_size=saved.size,
        local_path=saved.path,
        url=redact(new.url),
        direction=new.direction,
        description=redact(new.description),
        transcription=redact(new.transcription),
        extracted_text=redact(extract_text(bytes(head.kept), new.filename, mime)),
        tags=[redact(tag) for tag in new.tags],
        linked_memory_ids=[],
        created_at=iso(now),
        expires_at=iso(new.expires_at) if new.expires_at else None,
        artifact_id=saved.id,
        content_hash=saved.content_hash,
    )
    try:
        rows.insert(row)
    except BaseException:
        with write_tx(artifacts):  # nothing references the new row: undo it
            catalog.delete(artifacts, saved.id)
        raise
    return row


def remove(rows: Rows, artifacts: sqlite3.Connection | None, ref: str) -> Attachment:
    """Delete an attachment: its artifact row, then its own row."""
    found = rows.get(ref)
    _forget(rows, artifacts, [found])
    return found


def expire(rows: Rows, artifacts: sqlite3.Connection | None, now: datetime) -> int:
    """Delete every attachment whose ``expires_at`` has passed; how many went."""
    deleted = 0
    while batch := rows.expired(iso(now), EXPIRE_BATCH):
        _forget(rows, artifacts, batch)
        deleted += len(batch)
    return deleted


def _forget(rows: Rows, artifacts: sqlite3.Connection | None, found: list[Attachment]) -> None:
    if artifacts is not None:
        with write_tx(artifacts):
            for row in found:
                if _holds(artifacts, row):
                    catalog.delete(artifacts, row.artifact_id)  # type: ignore[arg-type]
    rows.delete(found)


def _holds(artifacts: sqlite3.Connection, row: Attachment) -> bool:
    """Whether this host's catalog keeps the attachment's blob under its artifact id
    (another host's attachment names an id of that host's catalog)."""
    if row.artifact_id is None:
        return False
    try:
        return catalog.get(artifacts, str(row.artifact_id)).content_hash == row.content_hash
    except NotFound:
        return False
