"""The content-addressed blob store under ``artifacts/blobs/YYYY/MM/DD/ab/cd/<sha256>``.

The date is the day the content was first stored; the catalog row keeps the relative
path, and "does this content exist?" is answered by the catalog's ``content_hash``
index, so the same content saved on any day is one blob. Writes are atomic and
durable: the content is streamed into a temporary file under ``artifacts/tmp/``,
fsynced and hashed (read back while the fsync runs; the final folder depends on the
hash), made read-only, renamed into its folder (atomic within one file system) and the
folder fsynced. An existing blob is never overwritten unless it fails its check.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import BinaryIO

from soloqueue_mem import faults
from soloqueue_mem.errors import StorageError
from soloqueue_mem.fsio import write_all
from soloqueue_mem.home import Home, ensure_private_dir

SHA256 = re.compile(r"[0-9a-f]{64}")
_RELPATH = re.compile(
    r"artifacts/blobs/(\d{4})/(\d{2})/(\d{2})/([0-9a-f]{2})/([0-9a-f]{2})/([0-9a-f]{64})"
)
CHUNK = 1 << 20


class Staged:
    """Content written to a temporary file and fsynced, not yet published."""

    __slots__ = ("path", "sha256", "size", "fd")

    def __init__(self, path: Path, sha256: str, size: int, fd: int) -> None:
        self.path = path
        self.sha256 = sha256
        self.size = size
        self.fd = fd  # open, with a shared flock, until published or discarded: gc leaves it

    def close(self) -> None:
        """Close the staging file once: a failed save discards what a publish may have
        closed already, and closing a descriptor twice could close another file that
        was given the same number in between."""
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)


def blob_relpath(sha256: str, day: date) -> str:
    if not SHA256.fullmatch(sha256):
        raise ValueError(f"not a sha256: {sha256!r}")
    return f"artifacts/blobs/{day:%Y/%m/%d}/{sha256[:2]}/{sha256[2:4]}/{sha256}"


def parse_relpath(relpath: str) -> str | None:
    """The hash a well-formed blob path names (its shard folders must agree), or None."""
    match = _RELPATH.fullmatch(relpath)
    if match is None:
        return None
    digest = match.group(6)
    if match.group(4) != digest[:2] or match.group(5) != digest[2:4]:
        return None
    return digest


def stage(home: Home, source: BinaryIO) -> Staged:
    """Stream ``source`` into a temporary file, fsync it and hash what it holds. Never
    partial: on any error the temporary file is removed. The file stays open and
    flocked until :func:`publish` or :func:`discard`, so gc, whatever its grace period,
    never removes a save's staging file (see ``lifecycle.gc.unlink_unless_in_use``)."""
    folder = home.root / "artifacts" / "tmp"
    ensure_private_dir(home.root, folder)
    path = folder / f"{os.urandom(8).hex()}.tmp"  # not `secrets`: ~5 ms to import
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            size = copy_stream(source, fd)
            faults.fault("artifact.after_tmp_write")
            sha256 = hash_while_syncing(fd, size)
            faults.fault("artifact.after_fsync")
        except BaseException:
            os.close(fd)
            raise
    except OSError as exc:
        path.unlink(missing_ok=True)
        raise StorageError(f"cannot store the content: {exc.strerror or exc}") from None
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return Staged(path, sha256, size, fd)


def copy_stream(source: BinaryIO, fd: int) -> int:
    """Write all of ``source`` to ``fd``, a chunk at a time; the bytes written."""
    size = 0
    while chunk := source.read(CHUNK):
        write_all(fd, chunk)
        size += len(chunk)
    return size


def hash_while_syncing(fd: int, size: int) -> str:
    """The SHA-256 of the file's bytes, read back while a thread fsyncs it.

    Hashing what the file holds (not what was sent to it) names the blob by its real
    content; the fsync waits on the disk while hashing works the CPU, and both release
    the GIL, so they overlap. Returns once the bytes are durable; the fsync's error, if
    any, is raised here, and so is a file that no longer holds the ``size`` bytes
    written.
    """
    import _thread  # not `threading`, which costs ~1.5 ms to import on every save

    failures: list[OSError] = []
    synced = _thread.allocate_lock()
    synced.acquire()

    def sync() -> None:
        try:
            os.fsync(fd)  # the blob's bytes are durable before any row points at them
        except OSError as exc:
            failures.append(exc)
        finally:
            synced.release()

    _thread.start_new_thread(sync, ())
    digest = hashlib.sha256()
    hashed = 0
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        while data := os.read(fd, CHUNK):
            digest.update(data)
            hashed += len(data)
    finally:
        synced.acquire()  # the fsync has returned, whatever happened here
    if failures:
        raise failures[0]
    if hashed != size:
        raise StorageError(f"the staged file changed: it holds {hashed} of {size} bytes")
    return digest.hexdigest()


def publish(home: Home, staged: Staged, relpath: str) -> None:
    """Move a staged file to ``relpath`` (replacing a damaged blob there), read-only,
    and fsync the folder so the rename itself survives a power loss."""
    target = home.root / relpath
    ensure_private_dir(home.root, target.parent)
    try:
        os.fchmod(staged.fd, 0o400)
        os.replace(staged.path, target)
    except OSError as exc:
        staged.path.unlink(missing_ok=True)
        raise StorageError(f"cannot store blob {relpath}: {exc.strerror}") from None
    finally:
        staged.close()
    faults.fault("artifact.after_rename")
    try:
        fsync_dir(target.parent)
    except OSError as exc:
        raise StorageError(f"cannot store blob {relpath}: {exc.strerror}") from None


def discard(staged: Staged) -> None:
    staged.path.unlink(missing_ok=True)
    staged.close()


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def check(home: Home, relpath: str, size: int, sha256: str, rehash: bool) -> str:
    """``ok``, ``bad-path``, ``missing``, ``size-mismatch`` or ``hash-mismatch`` for a
    stored blob. ``bad-path``: the row's path is not the blob path of its hash (``../x``,
    absolute, another blob's), so nothing outside the store is ever looked at."""
    if parse_relpath(relpath) != sha256:
        return "bad-path"
    path = home.root / relpath
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return "missing"
    if not os.path.isfile(path) or os.path.islink(path):
        return "missing"
    if info.st_size != size:
        return "size-mismatch"
    if rehash and hash_file(path) != sha256:
        return "hash-mismatch"
    return "ok"


def freshen(home: Home, relpath: str) -> None:
    """Touch a blob a new save relies on, so a concurrent GC's grace period covers it
    (git's ``check_and_freshen``)."""
    os.utime(home.root / relpath)


def hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def read_verified(
    home: Home, relpath: str, sha256: str, max_memory: int = 64 << 20
) -> Iterator[bytes]:
    """The blob's bytes, only after they hashed to ``sha256``.

    Small blobs are read once into memory and checked; large ones are hashed in a first
    pass and streamed in a second, so nothing is ever emitted from a damaged blob.
    Raises StorageError (hash mismatch, missing, or a path that is not the blob path of
    ``sha256``: nothing outside the store is ever opened).
    """
    if parse_relpath(relpath) != sha256:
        raise StorageError(
            f"the artifact row names an invalid blob path {relpath[:80]!r}; "
            "run: soloqueue-mem verify"
        )
    path = home.root / relpath
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise StorageError(f"blob {relpath} cannot be read: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        size = os.fstat(fd).st_size
        if size <= max_memory:
            data = handle.read()
            _expect(hashlib.sha256(data).hexdigest(), sha256, relpath)
            yield data
            return
        digest = hashlib.sha256()
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
        _expect(digest.hexdigest(), sha256, relpath)
        handle.seek(0)
        while chunk := handle.read(CHUNK):
            yield chunk


def _expect(actual: str, expected: str, relpath: str) -> None:
    if actual != expected:
        raise StorageError(
            f"blob {relpath} is damaged (its content no longer hashes to its name); "
            "run: soloqueue-mem verify"
        )
