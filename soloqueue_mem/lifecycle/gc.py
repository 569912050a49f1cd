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
  write to row commit), re-checking each blob's references and age just before unlink.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

from soloqueue_mem import faults
from soloqueue_mem.artifacts import catalog
from soloqueue_mem.artifacts.cas import parse_relpath
from soloqueue_mem.clock import iso, parse_timestamp
from soloqueue_mem.db.connect import write_tx
from soloqueue_mem.errors import StorageError
from soloqueue_mem.home import Home
from soloqueue_mem.lifecycle import lock

MASS_DELETE_MIN = 100


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


class GcRefused(StorageError):
    code = "gc_refused"


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
    blobs: list[BlobFile]  # size and mtime are read only for unreferenced blobs
    strays: list[str]
    empty_dirs: list[str]  # folders already empty (left by an earlier run)
    sizes: dict[str, int]  # entries in each folder, to know which ones deletion empties


def scan_blobs(
    home: Home,
    progress: Callable[[int], None] | None = None,
    referenced: set[str] | None = None,
) -> Scan:
    """Every blob file under ``artifacts/blobs`` (symlinks never followed), stray files,
    and empty folders. Blobs in ``referenced`` are not stat-ed: only an unreferenced
    blob's age and size matter."""
    prefix = len(str(home.root)) + 1  # relative paths by slicing: relpath() is the cost
    blobs: list[BlobFile] = []
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
                if referenced is not None and relpath in referenced:
                    blobs.append(BlobFile(relpath, 0, 0.0))
                else:
                    info = entry.stat(follow_symlinks=False)
                    blobs.append(BlobFile(relpath, info.st_size, info.st_mtime))
                if progress is not None:
                    progress(1)
            else:
                strays.append(relpath)
    return Scan(blobs, strays, empty, sizes)


def temp_files(home: Home) -> list[BlobFile]:
    folder = home.root / "artifacts" / "tmp"
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return []
    found = []
    for entry in entries:
        if entry.is_file(follow_symlinks=False):
            info = entry.stat(follow_symlinks=False)
            found.append(
                BlobFile(os.path.relpath(entry.path, home.root), info.st_size, info.st_mtime)
            )
    return found


def plan(
    scan: Scan, temps: list[BlobFile], referenced: set[str], now: float, grace_seconds: float
) -> GcPlan:
    """Decide what phase 2 deletes: a pure function of what was read."""
    blobs = scan.blobs
    on_disk = {blob.relpath for blob in blobs}
    unreferenced = [blob for blob in blobs if blob.relpath not in referenced]
    return GcPlan(
        total_blobs=len(blobs),
        orphans=[b for b in unreferenced if now - b.mtime >= grace_seconds],
        protected=[b for b in unreferenced if now - b.mtime < grace_seconds],
        stale_temps=[t for t in temps if now - t.mtime >= grace_seconds],
        missing=sorted(referenced - on_disk),
        strays=sorted(scan.strays),
        empty_dirs=scan.empty_dirs,
        folder_sizes=scan.sizes,
    )


def check_mass_delete(gc_plan: GcPlan, force: bool) -> None:
    limit = max(MASS_DELETE_MIN, gc_plan.total_blobs // 2)
    if len(gc_plan.orphans) > limit and not force:
        raise GcRefused(
            f"gc would delete {len(gc_plan.orphans)} of {gc_plan.total_blobs} blobs, more than "
            f"max({MASS_DELETE_MIN}, half); nothing was deleted. Check with "
            "`soloqueue-mem verify`, then run `soloqueue-mem gc --deep --force` if that is right"
        )


# --- phase 2: apply ------------------------------------------------------------------


def apply_plan(
    home: Home, conn: sqlite3.Connection, gc_plan: GcPlan, grace_seconds: float, now: float
) -> dict[str, int]:
    """Delete under the exclusive lock, re-checking each blob just before unlinking."""
    freed = temps = 0
    deleted_paths: list[str] = []
    root = str(home.root)
    with lock.exclusive(home.gc_lock, "gc", wait=True, timeout=30):
        for blob in gc_plan.orphans:
            path = f"{root}/{blob.relpath}"
            try:
                info = os.lstat(path)
            except FileNotFoundError:
                continue
            if now - info.st_mtime < grace_seconds or catalog.is_referenced(conn, blob.relpath):
                continue  # freshened by a save, or referenced since the plan was made
            os.unlink(path)  # read-only blobs need no chmod: unlink needs the folder's mode
            deleted_paths.append(blob.relpath)
            freed += info.st_size
            if len(deleted_paths) == 1:
                faults.fault("gc.after_k_unlinks")
        for temp in gc_plan.stale_temps:
            try:
                os.unlink(home.root / temp.relpath)
                temps += 1
            except FileNotFoundError:
                pass
        empty = remove_empty_dirs(home, gc_plan, deleted_paths)
    return {
        "deleted_blobs": len(deleted_paths),
        "freed_bytes": freed,
        "temp_files": temps,
        "empty_dirs": empty,
    }


def remove_empty_dirs(home: Home, gc_plan: GcPlan, deleted: list[str]) -> int:
    """Remove the folders this run emptied (and those it found empty), bottom-up,
    never ``artifacts/blobs`` itself. Entry counts from the scan say which folders are
    empty now, so no ``rmdir`` is tried on a folder that still holds something."""
    top = os.path.relpath(home.blobs_dir, home.root)
    left = dict(gc_plan.folder_sizes)
    for relpath in deleted:
        parent = os.path.dirname(relpath)
        left[parent] = left.get(parent, 1) - 1
    candidates = {os.path.dirname(p) for p in deleted} | set(gc_plan.empty_dirs)
    removed = 0
    for folder in sorted(candidates, key=len, reverse=True):
        while folder != top and left.get(folder, 1) <= 0:
            try:
                os.rmdir(home.root / folder)
            except OSError:
                break  # something new arrived: keep it
            removed += 1
            folder = os.path.dirname(folder)
            left[folder] = left.get(folder, 1) - 1
    return removed


# --- the run -----------------------------------------------------------------------


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
    with lock.exclusive(state_path, "gc", wait=options.wait, note_holder=False):
        state = read_state(state_path)
        conn = open_catalog()
        report: dict[str, Any] = {"dry_run": options.dry_run}
        try:
            expired = (
                expire_rows(conn, now, options.ephemeral_days, options.dry_run) if conn else []
            )
            report["phase1"] = {
                "expired_rows": len(expired),
                "artifact_ids": [str(i) for i in expired],
            }
            deep = options.deep or _deep_due(state, now, options.deep_every_seconds)
            report["phase2"] = (
                _phase2(home, conn, now, options, progress) if deep else {"ran": False}
            )
        finally:
            if conn is not None:
                conn.close()
        if not options.dry_run:
            state["phase1_at"] = iso(now)
            if report["phase2"]["ran"]:
                state["phase2_at"] = iso(now)
            write_state(state_path, state)
    report["seconds"] = round(time.monotonic() - started, 3)
    return report


def _phase2(
    home: Home,
    conn: sqlite3.Connection | None,
    now: datetime,
    options: GcOptions,
    progress: Callable[[int], None] | None,
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
            referenced = catalog.referenced_paths(conn)
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
    return {**result, **apply_plan(home, conn, gc_plan, options.grace_seconds, now.timestamp())}


def _deep_due(state: dict[str, Any], now: datetime, every_seconds: float) -> bool:
    last = state.get("phase2_at")
    if not last:
        return True
    try:
        return (now - parse_timestamp(last)).total_seconds() >= every_seconds
    except Exception:  # noqa: BLE001 - an unreadable state file means "never ran"
        return True


def read_state(path: Path) -> dict[str, Any]:
    """``.gc_state``: the last phase 1 and phase 2 times (JSON)."""
    try:
        data = json.loads(path.read_bytes() or b"{}")
    except (OSError, ValueError):
        return {}
    return (
        {k: v for k, v in data.items() if k in ("phase1_at", "phase2_at")}
        if isinstance(data, dict)
        else {}
    )


def write_state(path: Path, state: dict[str, Any]) -> None:
    """Rewrite the state in place; its flock is held by this run, so no rename."""
    fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(state).encode(), 0)
    finally:
        os.close(fd)
