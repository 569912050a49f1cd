"""Artifact operations: save, read, tag and remove, in the order that keeps the store
consistent. Blob first, row second (a row never points at a missing blob); removal in
the reverse order (the row goes now, an unreferenced blob later, in GC phase 2).
Saves stage the content in ``artifacts/tmp`` first (a slow producer holds no lock),
then hold ``.gc.lock`` shared from publishing the blob to the row commit, so GC, which
deletes only under the exclusive lock, can never take a blob a save is about to use.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import nullcontext
from datetime import datetime
from typing import BinaryIO, NamedTuple

from soloqueue_mem import faults, lock
from soloqueue_mem.artifacts import cas, catalog
from soloqueue_mem.artifacts.catalog import Artifact
from soloqueue_mem.clock import iso
from soloqueue_mem.db.connect import write_tx
from soloqueue_mem.errors import BadInput, NotFound
from soloqueue_mem.home import Home


class NewArtifact(NamedTuple):
    """What the caller says about content it saves."""

    title: str | None = None
    tags: tuple[str, ...] = ()
    group: str | None = None
    author: str | None = None
    mime: str | None = None


class Saved(NamedTuple):
    artifact: Artifact
    new_blob: bool  # False when the content was already stored (deduplicated)


def save(
    home: Home,
    conn: sqlite3.Connection,
    source: BinaryIO,
    meta: NewArtifact,
    now: datetime,
) -> Saved:
    """Store ``source``'s bytes and catalog them; return the new row."""
    for tag in meta.tags:
        catalog.validate_tag(tag)
    # Staged before the lock: a slow producer (`artifact save -` on a pipe) must not
    # hold gc off while it waits for input. gc removes temporary files only once older
    # than its grace period, and the staging file's mtime moves with every write.
    staged = cas.stage(home, source)
    guard = nullcontext() if faults.is_active("artifact.skip_lock") else lock.shared(home.gc_lock)
    with guard:
        try:
            relpath, new_blob = _place(home, conn, staged, now)
        except BaseException:
            cas.discard(staged)
            raise
        with write_tx(conn):
            artifact_id = catalog.insert(
                conn,
                content_hash=staged.sha256,
                path=relpath,
                size=staged.size,
                created_at=iso(now),
                tags=meta.tags,
                group=meta.group,
                title=meta.title,
                author=meta.author,
                mime=meta.mime,
            )
        faults.fault("artifact.after_row_commit")
    return Saved(catalog.get(conn, str(artifact_id)), new_blob)


def _place(
    home: Home, conn: sqlite3.Connection, staged: cas.Staged, now: datetime
) -> tuple[str, bool]:
    """Where the staged content lives from now on, publishing it if needed.

    A dedup hit is checked (size and hash) rather than trusted: a damaged or missing
    blob is replaced by the good copy just staged.
    """
    known = catalog.blob_of(conn, staged.sha256)
    if known is None or cas.parse_relpath(known[0]) != staged.sha256:
        relpath = cas.blob_relpath(staged.sha256, now.date())
        if cas.check(home, relpath, staged.size, staged.sha256, rehash=True) == "ok":
            cas.discard(staged)  # an orphan of the same content, kept alive by this save
            cas.freshen(home, relpath)
            return relpath, False
        cas.publish(home, staged, relpath)
        return relpath, True
    relpath, size = known
    # always re-hashed: a damaged blob of the right size must not be trusted (the save
    # would succeed with a row whose read fails)
    if size == staged.size and cas.check(home, relpath, size, staged.sha256, True) == "ok":
        cas.discard(staged)
        cas.freshen(home, relpath)
        return relpath, False
    cas.publish(home, staged, relpath)  # repairs the damaged or missing blob
    return relpath, True


def read(home: Home, conn: sqlite3.Connection, ref: str) -> tuple[Artifact, Iterator[bytes]]:
    """The artifact and its verified bytes (nothing is yielded from a damaged blob)."""
    artifact = catalog.get(conn, ref)
    return artifact, cas.read_verified(home, artifact.path, artifact.content_hash)


def tag(conn: sqlite3.Connection, ref: str, add: Iterable[str], remove: Iterable[str]) -> Artifact:
    add, remove = [catalog.validate_tag(t) for t in add], [catalog.validate_tag(t) for t in remove]
    artifact = catalog.get(conn, ref)
    with write_tx(conn):
        catalog.set_tags(conn, artifact.id, add, remove)
    return catalog.get(conn, str(artifact.id))


def remove(conn: sqlite3.Connection, ref: str) -> Artifact:
    """Delete the row; the blob goes in GC phase 2 once nothing references it."""
    artifact = catalog.get(conn, ref)
    with write_tx(conn):
        catalog.delete(conn, artifact.id)
    return artifact


def put_back(home: Home, conn: sqlite3.Connection, artifact: Artifact, data: bytes | None) -> str:
    """Put back an exported artifact row under its id, its blob at its own path.

    ``data`` is the blob's content when the dump carried it; without it the blob must
    already be in this store (a row never points at a missing blob). Returns
    ``added``, ``existing``, ``conflict`` (another row holds the id) or
    ``missing-blob``. Raises BadInput for a path or hash that does not agree.
    """
    import io

    for tag in artifact.tags:
        catalog.validate_tag(tag)
    if cas.parse_relpath(artifact.path) != artifact.content_hash:
        raise BadInput(f"artifact {artifact.id}: path {artifact.path!r} is not its blob's")
    with lock.shared(home.gc_lock):
        if data is not None:
            staged = cas.stage(home, io.BytesIO(data))
            if staged.sha256 != artifact.content_hash or staged.size != artifact.size:
                cas.discard(staged)
                raise BadInput(f"artifact {artifact.id}: the blob does not match its sha256")
            # re-hashed whatever its size, like a save's dedup hit (issue 15 item 13)
            state = cas.check(home, artifact.path, artifact.size, artifact.content_hash, True)
            if state == "ok":
                cas.discard(staged)
            else:
                cas.publish(home, staged, artifact.path)
        elif cas.check(home, artifact.path, artifact.size, artifact.content_hash, False) != "ok":
            return "missing-blob"
        cas.freshen(home, artifact.path)
        with write_tx(conn):
            try:
                found = catalog.get(conn, str(artifact.id))
            except NotFound:
                found = None
            if found is not None:
                return "existing" if found == artifact else "conflict"
            catalog.insert(
                conn,
                content_hash=artifact.content_hash,
                path=artifact.path,
                size=artifact.size,
                created_at=artifact.created_at,
                tags=artifact.tags,
                group=artifact.group,
                title=artifact.title,
                author=artifact.author,
                mime=artifact.mime,
                artifact_id=artifact.id,
            )
    return "added"
