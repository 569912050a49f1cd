"""Attachment operations across the two databases they touch.

An attachment is an artifact (its bytes in the CAS, tagged ``user:persistent`` so GC
keeps them) plus a row in memory.db's ``attachments``. Written blob first, artifact
row second, attachment row last; removed in the reverse order of what matters: the
artifact row goes first, then the attachment row, so a crash in between leaves an
attachment whose removal simply runs again (never a persistent artifact nobody
references). The blob itself goes in GC phase 2 once no row references it.
"""

from __future__ import annotations

import mimetypes
import sqlite3
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import BinaryIO, NamedTuple

from soloqueue_mem.artifacts import catalog
from soloqueue_mem.artifacts.store import NewArtifact, save
from soloqueue_mem.clock import iso
from soloqueue_mem.db.connect import write_tx
from soloqueue_mem.errors import BadInput
from soloqueue_mem.home import Home
from soloqueue_mem.memory import attachments
from soloqueue_mem.memory.attachment_text import MAX_BYTES, extract_text
from soloqueue_mem.memory.attachments import DIRECTIONS, Attachment

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
    memory: sqlite3.Connection,
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
        with write_tx(memory):
            attachments.insert(memory, row)
    except BaseException:
        with write_tx(artifacts):  # nothing references the new row: undo it
            catalog.delete(artifacts, saved.id)
        raise
    return row


def remove(
    memory: sqlite3.Connection, artifacts: sqlite3.Connection | None, ref: str
) -> Attachment:
    """Delete an attachment: its artifact row, then its own row."""
    found = attachments.get(memory, ref)
    _forget(memory, artifacts, [found])
    return found


def expire(memory: sqlite3.Connection, artifacts: sqlite3.Connection | None, now: datetime) -> int:
    """Delete every attachment whose ``expires_at`` has passed; how many went."""
    deleted = 0
    while batch := attachments.expired(memory, iso(now), EXPIRE_BATCH):
        _forget(memory, artifacts, batch)
        deleted += len(batch)
    return deleted


def _forget(
    memory: sqlite3.Connection, artifacts: sqlite3.Connection | None, rows: list[Attachment]
) -> None:
    if artifacts is not None:
        with write_tx(artifacts):
            for row in rows:
                if row.artifact_id is not None:
                    catalog.delete(artifacts, row.artifact_id)
    with write_tx(memory):
        for row in rows:
            attachments.delete(memory, row.id)
