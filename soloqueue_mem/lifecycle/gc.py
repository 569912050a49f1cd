"""Two-phase garbage collection of the artifact store (seed 000 §4, RELIABILITY I2-I4).

Phase 1 (every run) deletes the rows of expired ``sys:ephemeral`` artifacts. Phase 2
(weekly, or ``--deep``) deletes blob files no row references, aged temporary files and
empty shard folders, and reports rows whose blob is missing. Safety, in order:

- one GC at a time: an exclusive ``flock`` on ``.gc_state`` (a second run exits 75);
- fail closed: if the references cannot all be read, nothing is deleted;
- grace: files younger than the grace period are never deleted (a save in progress);
- a mass-delete guard: a plan to delete more than max(100, half) of the blobs stops
  unless ``force``;
- deletion happens under the exclusive ``.gc.lock`` (saves hold it shared from blob
  write to row commit), re-checking each blob's references (read again under the lock)
  and age just before unlink. Many deletions run on a few worker threads, all of them
  finished before the lock is released.
"""

from __future__ import annotations

import fcntl
import functools
import os
import sqlite3
import time
from collections.abc import Callable, Generator
from contextlib import closing
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from soloqueue_mem import faults, lock
from soloqueue_mem.artifacts import catalog
from soloqueue_mem.artifacts.cas import parse_relpath
from soloqueue_mem.clock import iso, parse_timestamp
from soloqueue_mem.db.connect import write_tx
from soloqueue_mem.errors import StorageError, UsageError
from soloqueue_mem.home import Home, refuse_symlinks

if TYPE_CHECKING:
    from soloqueue_mem.home import StrPath

MASS_DELETE_MIN = 100
PARALLEL_MIN = 256  # fewer deletions than this run one by one, in this thread
WORKERS = 4  # threads for many deletions: the calls wait on the file system, not the CPU
T = TypeVar("T")


class GcOptions(NamedTuple):
    ephemeral_days: float = 3
    grace_seconds: float = 3600
    deep_every_seconds: float = 7 * 86400
    deep: bool = False
    dry_run: bool = False
    force: bool = False
    wait: bool = False


class BlobFile(NamedTuple):
    relpath: str
    size: int
    mtime: float


class GcPlan(NamedTuple):
    """What phase 2 found; pure data, printed by --dry-run."""

    total_blobs: int
    orphans: list[BlobFile]  # unreferenced and older than the grace period
    protected: list[BlobFile]  # unreferenced but younger: a save may be using them
    stale_temps: list[BlobFile]
    missing: list[str]  # paths rows reference that do not exist
    strays: list[str]  # files under blobs/ that are not blobs (reported, never deleted)
    empty_dirs: list[str]  # folders found empty
    folder_sizes: dict[str, int]  # entries per folder when scanned


class GcRefused(StorageError, code="gc_refused"):
    """gc will not run on this data directory as it is."""


class MassDeleteRefused(UsageError, code="gc_mass_delete"):
    """The mass-delete guard stopped phase 2 (``--force`` is the answer, so a usage
    error); ``report`` says what the run did before (phase 1 is done by then)."""

    def __init__(self, message: str, report: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.report = report or {}


# --- phase 1: expired rows -------------------------------------------------------


def expire_rows(conn: sqlite3.Connection, now: datetime, days: float, dry_run: bool) -> list[int]:
    """Delete the rows of ephemeral artifacts older than ``days``; return their ids."""
    expired = catalog.expired_ephemeral(conn, iso(now - timedelta(days=days)))
    if dry_run:
        return expired
    for start in range(0, len(expired), 500):  # short transactions: writers keep going
        with write_tx(conn):
            for artifact_id in expired[start : start + 500]:
                catalog.delete(conn, artifact_id)
    faults.fault("gc.after_phase1_commit")
    return expired


# --- phase 2: plan -----------------------------------------------------------------


class Scan(NamedTuple):
    blobs: list[BlobFile]  # with size and mtime; only the unreferenced ones if told
    found_referenced: set[str]  # blobs found that are in the reference set (not stat-ed)
    strays: list[str]
    empty_dirs: list[str]  # folders already empty (left by an earlier run)
    sizes: dict[str, int]  # entries in each folder, to know which ones deletion empties


def scan_blobs(
    home: Home,
    progress: Callable[[int], None] | None = None,
    referenced: set[str] | None = None,
) -> Scan:
    """Every blob file under ``artifacts/blobs`` (symlinks never followed), stray files,
    and empty folders. Blobs in ``referenced`` are only noted: an unreferenced blob's
    age and size matter, a referenced one's do not. Raises StorageError if
    ``artifacts`` or ``artifacts/blobs`` is a symlink: nothing outside is ever read."""
    refuse_symlinks(home.root, home.blobs_dir)
    prefix = len(str(home.root)) + 1  # relative paths by slicing: relpath() is the cost
    referenced = referenced or set()
    blobs: list[BlobFile] = []
    found: set[str] = set()
    strays: list[str] = []
    empty: list[str] = []
    sizes: dict[str, int] = {}
    stack = [str(home.blobs_dir)]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except FileNotFoundError:
            continue
        sizes[folder[prefix:]] = len(entries)
        if not entries:
            empty.append(folder[prefix:])
        for entry in entries:
            relpath = entry.path[prefix:]
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            elif entry.is_file(follow_symlinks=False) and parse_relpath(relpath) is not None:
                if relpath in referenced:
                    found.add(relpath)
                else:
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except FileNotFoundError:
                        continue  # a gc deleted it since (verify scans without the gc lock)
                    blobs.append(BlobFile(relpath, info.st_size, info.st_mtime))
                if progress is not None:
                    progress(1)
            else:
                strays.append(relpath)
    return Scan(blobs, found, strays, empty, sizes)


def temp_files(home: Home) -> list[BlobFile]:
    folder = home.root / "artifacts" / "tmp"
    refuse_symlinks(home.root, folder)
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return []
    found = []
    for entry in entries:
        if entry.is_file(follow_symlinks=False):
            try:
                info = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # a save (which stages without the gc lock) moved it since
            found.append(
                BlobFile(os.path.relpath(entry.path, home.root), info.st_size, info.st_mtime)
            )
    return found


def plan(
    scan: Scan, temps: list[BlobFile], referenced: set[str], now: float, grace_seconds: float
) -> GcPlan:
    """Decide what phase 2 deletes: a pure function of what was read."""
    unreferenced = [blob for blob in scan.blobs if blob.relpath not in referenced]
    return GcPlan(
        total_blobs=len(scan.blobs) + len(scan.found_referenced),
        orphans=[b for b in unreferenced if now - b.mtime >= grace_seconds],
        protected=[b for b in unreferenced if now - b.mtime < grace_seconds],
        stale_temps=[t for t in temps if now - t.mtime >= grace_seconds],
        missing=sorted(referenced - scan.found_referenced),
        strays=sorted(scan.strays),
        empty_dirs=scan.empty_dirs,
        folder_sizes=scan.sizes,
    )


def check_mass_delete(gc_plan: GcPlan, force: bool) -> None:
    limit = max(MASS_DELETE_MIN, gc_plan.total_blobs // 2)
    if len(gc_plan.orphans) > limit and not force:
        raise MassDeleteRefused(
            f"gc would delete {len(gc_plan.orphans)} of {gc_plan.total_blobs} blobs, more than "
            f"max({MASS_DELETE_MIN}, half); phase 2 deleted nothing"
        )


# --- phase 2: apply ------------------------------------------------------------------


def apply_plan(
    home: Home,
    conn: sqlite3.Connection,
    gc_plan: GcPlan,
    grace_seconds: float,
    now: float,
    wait: bool = False,
) -> dict[str, int]:
    """Delete under the exclusive lock, re-checking each blob just before unlinking: its
    references, read again once the lock is held (no save can add one while GC holds
    it), and its age (a save may have freshened it). Saves hold the lock shared only
    briefly; it is awaited 30 s, or as long as it takes with ``wait``."""
    temps = 0
    with lock.exclusive(home.gc_lock, "gc", wait=True, timeout=None if wait else 30):
        orphans = [blob.relpath for blob in gc_plan.orphans]
        still_referenced = catalog.referenced_among(conn, orphans)
        unreferenced = [relpath for relpath in orphans if relpath not in still_referenced]
        deleted, freed = delete_blobs(str(home.root), unreferenced, now - grace_seconds)
        for temp in gc_plan.stale_temps:
            temps += unlink_unless_in_use(home.root / temp.relpath)
        empty = remove_empty_dirs(home, gc_plan, deleted)
    return {
        "deleted_blobs": len(deleted),
        "freed_bytes": freed,
        "temp_files": temps,
        "empty_dirs": empty,
    }


def delete_blobs(root: str, relpaths: list[str], cutoff: float) -> tuple[list[str], int]:
    """Unlink the blobs not modified after ``cutoff``; the paths deleted, bytes freed."""
    deleted: list[str] = []
    freed = 0
    delete = functools.partial(_unlink_if_old, root, cutoff)
    # closing(): the workers are done before the caller moves on, even after an error
    with closing(in_parallel(delete, relpaths)) as sizes:
        for relpath, size in zip(relpaths, sizes, strict=True):
            if size is None:
                continue  # gone, or freshened by a save since the plan was made
            deleted.append(relpath)
            freed += size
            if len(deleted) == 1:
                faults.fault("gc.after_k_unlinks")
    return deleted, freed


def unlink_unless_in_use(path: StrPath) -> bool:
    """Unlink a temporary file unless a save is still writing or publishing it (it holds
    the file's flock: see ``artifacts.cas.stage``); whether it was unlinked."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return False
    try:
        os.unlink(path)
    finally:
        os.close(fd)
    return True


def _unlink_if_old(root: str, cutoff: float, relpath: str) -> int | None:
    """Unlink the blob unless it is gone or modified after ``cutoff``; its size if
    unlinked."""
    path = f"{root}/{relpath}"
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if info.st_mtime > cutoff:
        return None
    os.unlink(path)  # read-only blobs need no chmod: unlink needs the folder's mode
    return info.st_size


def remove_empty_dirs(home: Home, gc_plan: GcPlan, deleted: list[str]) -> int:
    """Remove the folders this run emptied (and those it found empty), deepest first,
    never ``artifacts/blobs`` itself. Entry counts from the scan say which folders are
    empty now, so no ``rmdir`` is tried on a folder that still holds something; a
    folder is tried only once every folder below it is gone, a level at a time."""
    top = os.path.relpath(home.blobs_dir, home.root)
    left = dict(gc_plan.folder_sizes)
    for relpath in deleted:
        parent = os.path.dirname(relpath)
        left[parent] = left.get(parent, 1) - 1
    level = {os.path.dirname(p) for p in deleted} | set(gc_plan.empty_dirs)
    remove = functools.partial(_rmdir_if_empty, str(home.root))
    removed = 0
    while level:
        empty = sorted(f for f in level if f != top and left.get(f, 1) <= 0)
        gone = [f for f, ok in zip(empty, in_parallel(remove, empty), strict=True) if ok]
        removed += len(gone)
        level = set()
        for folder in gone:
            parent = os.path.dirname(folder)
            left[parent] = left.get(parent, 1) - 1
            level.add(parent)
    return removed


def _rmdir_if_empty(root: str, relpath: str) -> bool:
    try:
        os.rmdir(f"{root}/{relpath}")
    except OSError:
        return False  # something new arrived: keep it
    return True


def in_parallel(fn: Callable[[str], T], items: list[str]) -> Generator[T, None, None]:
    """``fn`` over ``items``, results in order. Many items are split into contiguous
    slices run by worker threads: the file system calls release the GIL, and unlinks
    and rmdirs in different folders proceed together. A few run here, one by one."""
    if len(items) < PARALLEL_MIN:
        yield from map(fn, items)
        return
    from concurrent.futures import ThreadPoolExecutor

    size = -(-len(items) // WORKERS)
    slices = [items[start : start + size] for start in range(0, len(items), size)]
    with ThreadPoolExecutor(WORKERS, thread_name_prefix="soloqueue-gc") as pool:
        for results in pool.map(lambda part: [fn(item) for item in part], slices):
            yield from results


# --- the run -----------------------------------------------------------------------


def nothing_done(dry_run: bool) -> dict[str, Any]:
    """The report of a run with no data directory to collect."""
    return {
        "dry_run": dry_run,
        "phase1": {"expired_rows": 0, "artifact_ids": []},
        "phase2": {"ran": False},
        "seconds": 0.0,
    }


def run_gc(
    home: Home,
    open_catalog: Callable[[], sqlite3.Connection | None],
    now: datetime,
    options: GcOptions,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """One GC run under the run lock; returns the report (see the README)."""
    started = time.monotonic()
    state_path = home.gc_state
    for folder in (home.blobs_dir, home.root / "artifacts" / "tmp"):
        try:
            refuse_symlinks(home.root, folder)  # before phase 1: a refused run does nothing
        except StorageError as exc:
            raise GcRefused(f"gc aborted: {exc}; nothing was deleted") from None
    with lock.exclusive(state_path, "gc", wait=options.wait, note_holder=False):
        state = read_state(state_path)
        conn = open_catalog()
        report: dict[str, Any] = {"dry_run": options.dry_run}
        refused: MassDeleteRefused | None = None
        try:
            expired = (
                expire_rows(conn, now, options.ephemeral_days, options.dry_run) if conn else []
            )
            report["phase1"] = {
                "expired_rows": len(expired),
                "artifact_ids": [str(i) for i in expired],
            }
            deep = options.deep or _deep_due(state, now, options.deep_every_seconds)
            try:
                report["phase2"] = (
                    _phase2(home, conn, now, options, progress, expired) if deep else {"ran": False}
                )
            except MassDeleteRefused as exc:
                refused = _refusal(exc, report, options)
        finally:
            if conn is not None:
                conn.close()
        if not options.dry_run:
            state["phase1_at"] = iso(now)
            if report["phase2"]["ran"] and refused is None:
                state["phase2_at"] = iso(now)
            lock.write_state(state_path, state)
    report["seconds"] = round(time.monotonic() - started, 3)
    if refused is not None:
        raise refused
    return report


def _refusal(
    exc: MassDeleteRefused, report: dict[str, Any], options: GcOptions
) -> MassDeleteRefused:
    """The guard's error, saying exactly what each phase did, with the run's report."""
    expired = report["phase1"]["expired_rows"]
    done = "would delete" if options.dry_run else "deleted"
    message = (
        f"{exc}; phase 1 {done} {expired} expired row(s). Check with `soloqueue-mem verify`, "
        "then run `soloqueue-mem gc --deep --force` if that is right"
    )
    report["phase2"] = {"ran": True, "refused": message, "deleted_blobs": 0}
    return MassDeleteRefused(message, report)


def _phase2(
    home: Home,
    conn: sqlite3.Connection | None,
    now: datetime,
    options: GcOptions,
    progress: Callable[[int], None] | None,
    expired: list[int],
) -> dict[str, Any]:
    if conn is None:
        referenced: set[str] = set()
        scan = scan_blobs(home, progress)
        if scan.blobs:
            raise GcRefused(
                "gc aborted: blobs exist but artifacts.db is missing; nothing was deleted"
            )
    else:
        try:
            # a dry run's phase 1 deleted nothing: leave out the rows it would delete,
            # so the plan (and the guard) is the one a real run would make
            referenced = catalog.referenced_paths(conn, expired if options.dry_run else ())
        except sqlite3.Error as exc:
            raise GcRefused(
                f"gc aborted: cannot read the artifact catalog ({exc}); nothing was deleted"
            ) from None
        scan = scan_blobs(home, progress, referenced)
    gc_plan = plan(scan, temp_files(home), referenced, now.timestamp(), options.grace_seconds)
    check_mass_delete(gc_plan, options.force)
    result: dict[str, Any] = {
        "ran": True,
        "blobs": gc_plan.total_blobs,
        "orphans": len(gc_plan.orphans),
        "protected_recent": len(gc_plan.protected),
        "missing_blobs": gc_plan.missing,
        "strays": gc_plan.strays,
    }
    if options.dry_run:
        result["would_delete"] = [b.relpath for b in gc_plan.orphans]
        result["would_delete_temp_files"] = [t.relpath for t in gc_plan.stale_temps]
        return result
    assert conn is not None or not gc_plan.orphans
    if conn is None:
        return {**result, "deleted_blobs": 0, "freed_bytes": 0, "temp_files": 0, "empty_dirs": 0}
    applied = apply_plan(
        home, conn, gc_plan, options.grace_seconds, now.timestamp(), wait=options.wait
    )
    return {**result, **applied}


def _deep_due(state: dict[str, Any], now: datetime, every_seconds: float) -> bool:
    last = state.get("phase2_at")
    if not last:
        return True
    try:
        return (now - parse_timestamp(last)).total_seconds() >= every_seconds
    except Exception:  # noqa: BLE001 - an unreadable state file means "never ran"
        return True


def read_state(path: StrPath) -> dict[str, Any]:
    """``.gc_state``: the last phase 1 and phase 2 times."""
    state = lock.read_state(path)
    return {k: v for k, v in state.items() if k in ("phase1_at", "phase2_at")}
