#!/usr/bin/env python3
"""Benchmark the artifact store: ``artifact save``, ``gc --deep`` and ``verify --full``.

1. ``soloqueue-mem artifact save FILE`` of 1 KB and 10 MB payloads, whole process, new
   content every run (no dedup), median/p90 of >= 10 runs, against the floor: a bare
   ``python -c`` that copies the same bytes into a temporary file, fsyncs it, renames
   it into a folder and fsyncs the folder. Goal: 10 MB median <= 1.5x the floor. The
   same comparison in-process (``artifacts.store.save`` against the floor's code as a
   function) separates interpreter start-up from the write path; a phase table shows
   where a library save spends its time.
2. ``soloqueue-mem gc --deep --force --format json`` over a store of 100,000 blobs
   (--quick: 10,000) of which 10% are unreferenced and aged past the grace period,
   against the floor: a ``python -c`` that walks the same tree with ``os.scandir``
   (recursively) and runs ``SELECT DISTINCT path FROM artifacts`` on artifacts.db.
   The store is built once (blob files written directly at valid paths, rows inserted
   through ``catalog.insert`` in one transaction), cached, and copied afresh for every
   timed round since gc deletes. Goal: median <= 2x the floor.
3. ``soloqueue-mem verify --full`` throughput (MB/s of blob bytes) over blobs totalling
   ~500 MB (--quick: ~100 MB), against ``sha256sum`` of the same file list through
   ``xargs`` in the same run. Goal: >= 70% of sha256sum's MB/s.

Goals are reported, not enforced; exit status 1 only if a correctness check fails
(wrong row/blob counts, gc deleting the wrong number of blobs, verify not sound).
Run with the interpreter of a non-editable install (so .pyc files exist), e.g.
``/tmp/bench-venv/bin/python benchmarks/bench_artifacts.py [--quick]``.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import _common as c

c.import_project()

KB = 1024
MB = 1024 * 1024
GC_DAYS = 90  # blobs spread over this many YYYY/MM/DD folders
GC_ORPHAN_EVERY = 10  # every 10th blob is unreferenced (10%)
GC_ORPHAN_AGE = 2 * 86400  # orphans' mtime: two days ago (grace is 1 h)

# --- floors --------------------------------------------------------------------------

# Part 1 floor: the same bytes, streamed in 1 MB chunks like the product, into a
# temporary file; fsync; rename into a folder; fsync the folder. With "hash" it also
# computes the SHA-256 while copying (reference only: what content addressing adds).
FLOOR_SAVE = r"""
import hashlib, os, sys
src, tmp_dir, dst_dir, mode = sys.argv[1:5]
name = os.path.basename(src)
tmp = os.path.join(tmp_dir, name + ".tmp")
digest = hashlib.sha256() if mode == "hash" else None
fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
with open(src, "rb") as f:
    while chunk := f.read(1 << 20):
        if digest is not None:
            digest.update(chunk)
        view = memoryview(chunk)
        while view:
            view = view[os.write(fd, view):]
os.fsync(fd)
os.close(fd)
os.replace(tmp, os.path.join(dst_dir, name))
dfd = os.open(dst_dir, os.O_RDONLY | os.O_DIRECTORY)
os.fsync(dfd)
os.close(dfd)
"""

# Part 1 reference: the library's save in a bare process, without the CLI (Typer).
LIBRARY_SAVE = r"""
import sys
from datetime import UTC, datetime
from pathlib import Path
from soloqueue_mem.artifacts.store import NewArtifact, save
from soloqueue_mem.config import Config
from soloqueue_mem.storage.sqlite.stores import open_artifacts
from soloqueue_mem.home import Home
home = Home(Path(sys.argv[1]))
conn = open_artifacts(home, Config())
with open(sys.argv[2], "rb") as stream:
    save(home, conn, stream, NewArtifact(), datetime.now(UTC))
conn.close()
"""

# Part 2 floor: walk artifacts/blobs with os.scandir, one query for the referenced
# paths, the set difference. With "stat" it also lstat()s every file (reference only:
# gc needs each blob's mtime for the grace period).
FLOOR_GC = r"""
import os, sqlite3, sys
root, mode = sys.argv[1], sys.argv[2]
cut = len(root) + 1
files = []
stack = [os.path.join(root, "artifacts", "blobs")]
while stack:
    with os.scandir(stack.pop()) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            else:
                if mode == "stat":
                    entry.stat(follow_symlinks=False)
                files.append(entry.path[cut:])
conn = sqlite3.connect(os.path.join(root, "artifacts.db"))
referenced = {row[0] for row in conn.execute("SELECT DISTINCT path FROM artifacts")}
conn.close()
print(len(files), len(set(files) - referenced))
"""

# Part 3 reference: Python's hashlib (OpenSSL) over the same file list, 1 MB chunks.
HASHLIB_LIST = r"""
import hashlib, sys
for name in open(sys.argv[1], "rb").read().split(b"\0"):
    if name:
        digest = hashlib.sha256()
        with open(name, "rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
        digest.hexdigest()
"""


def floor_save_inprocess(src: Path, tmp_dir: Path, dst_dir: Path, hash_it: bool) -> None:
    """FLOOR_SAVE as a function, for the in-process comparison."""
    name = src.name
    tmp = tmp_dir / (name + ".tmp")
    digest = hashlib.sha256() if hash_it else None
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with open(src, "rb") as f:
        while chunk := f.read(1 << 20):
            if digest is not None:
                digest.update(chunk)
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view) :]
    os.fsync(fd)
    os.close(fd)
    os.replace(tmp, dst_dir / name)
    dfd = os.open(dst_dir, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(dfd)
    os.close(dfd)


# --- helpers ---------------------------------------------------------------------------


def size_label(size: int) -> str:
    return f"{size // MB} MB" if size >= MB else f"{size // KB} KB"


def mb(n_bytes: float) -> float:
    return n_bytes / MB


def private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def copy_tree(src: Path, dst: Path) -> float:
    """``cp -a`` (keeps modes and mtimes), then sync so writeback does not hit the
    timed processes; returns the seconds taken."""
    start = time.perf_counter()
    subprocess.run(["cp", "-a", str(src), str(dst)], check=True)
    os.sync()
    return time.perf_counter() - start


def remove_tree(path: Path) -> None:
    subprocess.run(["rm", "-rf", str(path)], check=True)


class PhaseTimer:
    """Inclusive wall time (and calls) per call path of patched functions, per run.

    Patching module attributes works because the product calls ``module.func`` or a
    module-global name at call time; everything is restored by :meth:`restore`.
    """

    def __init__(self) -> None:
        self.stack: list[str] = []
        self.order: dict[str, None] = {}
        self.runs: list[tuple[dict[str, float], dict[str, int]]] = []
        self.times: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self._patches: list[tuple[Any, str, Any]] = []

    def _enter(self, label: str) -> str:
        self.stack.append(label)
        key = " > ".join(self.stack)
        self.order.setdefault(key, None)
        return key

    def _leave(self, key: str, start: float) -> None:
        self.times[key] = self.times.get(key, 0.0) + time.perf_counter() - start
        self.calls[key] = self.calls.get(key, 0) + 1
        self.stack.pop()

    def patch(self, owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name)
        timer = self

        @functools.wraps(original)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            key = timer._enter(label)
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                timer._leave(key, start)

        setattr(owner, name, wrapper)
        self._patches.append((owner, name, original))

    def patch_cm(self, owner: Any, name: str, label: str) -> None:
        """A context-manager factory: time the whole ``with`` block."""
        original = getattr(owner, name)
        timer = self

        @contextmanager
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            key = timer._enter(label)
            start = time.perf_counter()
            try:
                with original(*args, **kwargs) as value:
                    yield value
            finally:
                timer._leave(key, start)

        setattr(owner, name, wrapper)
        self._patches.append((owner, name, original))

    def restore(self) -> None:
        for owner, name, original in reversed(self._patches):
            setattr(owner, name, original)
        self._patches.clear()

    def start_run(self) -> None:
        self.times, self.calls = {}, {}

    def end_run(self, total: float) -> None:
        self.times["total"] = total
        self.runs.append((self.times, self.calls))

    def rows(self, total_label: str) -> list[list[str]]:
        totals = [t["total"] for t, _ in self.runs]
        total = c.median(totals)
        rows = [[total_label, c.ms(total), "", "100.0"]]
        for key in self.order:
            values = [t.get(key, 0.0) for t, _ in self.runs]
            calls = [n.get(key, 0) for _, n in self.runs]
            depth = key.count(" > ")
            label = "\u2003" * (depth + 1) + key.rsplit(" > ", 1)[-1]
            rows.append(
                [
                    label,
                    c.ms(c.median(values)),
                    f"{c.median(calls):g}",
                    c.pct(c.median(values) / total),
                ]
            )
        return rows


# --- part 1: artifact save ---------------------------------------------------------------


def make_payloads(
    folder: Path, size: int, labels: list[str], count: int, seed: int
) -> dict[str, list[Path]]:
    """``count`` files of ``size`` bytes per label, each with unique content: a seeded
    random body whose first 32 bytes are replaced by a unique tag."""
    rng = random.Random(seed + size)
    body = bytearray(rng.randbytes(size))
    files: dict[str, list[Path]] = {}
    for label in labels:
        files[label] = []
        for k in range(count):
            tag = hashlib.sha256(f"{seed}/{size}/{label}/{k}".encode()).digest()
            body[:32] = tag[: min(32, size)]
            path = folder / f"{label}-{size}-{k:03d}.bin"
            path.write_bytes(body)
            files[label].append(path)
    return files


def bench_save(python: str, work: Path, runs: int, seed: int) -> tuple[str, bool, bool]:
    from soloqueue_mem.artifacts import cas, catalog, store
    from soloqueue_mem.artifacts.store import NewArtifact
    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.storage.sqlite.stores import open_artifacts

    env = c.timing_env()
    cli = c.cli_argv(python)
    warmup = 2
    sizes = [KB, 10 * MB]
    src = private_dir(work / "save-src")
    product_store = work / "save-store"
    floor_dir = private_dir(work / "save-floor")
    floor_tmp, floor_dst = private_dir(floor_dir / "tmp"), private_dir(floor_dir / "blobs")
    library_store = work / "save-store-library"
    labels = ["product", "floor", "floor+sha256", "library"]
    inproc_labels = ["in-product", "in-floor", "in-floor+sha256", "in-profile"]
    payloads: dict[int, dict[str, list[Path]]] = {}
    for size in sizes:
        c.note(
            f"(1) writing {len(labels) + len(inproc_labels)} x {warmup + runs} payload files of "
            f"{size_label(size)}"
        )
        payloads[size] = make_payloads(src, size, labels + inproc_labels, warmup + runs, seed)
    os.sync()  # the source files' dirty pages must not be written back during the timing

    # An existing store: created by a first save (not timed).
    first = src / "first.bin"
    first.write_bytes(b"first artifact\n")
    c.run_timed([*cli, "--root", str(product_store), "artifact", "save", str(first)], env)
    c.run_timed([python, "-c", LIBRARY_SAVE, str(library_store), str(first)], env)

    commands = {
        "soloqueue-mem artifact save FILE": lambda f: [
            *cli,
            "--root",
            str(product_store),
            "artifact",
            "save",
            str(f),
        ],
        "floor: python -c write+fsync+rename+fsync dir": lambda f: [
            python,
            "-c",
            FLOOR_SAVE,
            str(f),
            str(floor_tmp),
            str(floor_dst),
            "plain",
        ],
        "reference: floor + sha256 while copying": lambda f: [
            python,
            "-c",
            FLOOR_SAVE,
            str(f),
            str(floor_tmp),
            str(floor_dst),
            "hash",
        ],
        "reference: python -c library save (store.save, no CLI)": lambda f: [
            python,
            "-c",
            LIBRARY_SAVE,
            str(library_store),
            str(f),
        ],
    }
    start_ref = {
        'reference: python -c "import typer"': [python, "-c", "import typer"],
        "reference: python -c pass": [python, "-c", "pass"],
    }
    whole: dict[int, dict[str, list[float]]] = {}
    for size in sizes:
        c.note(
            f"(1) whole process, {size_label(size)}: {len(commands) + len(start_ref)} commands "
            f"x {runs} runs (+{warmup} warm-up), interleaved"
        )
        times: dict[str, list[float]] = {label: [] for label in [*commands, *start_ref]}
        for k in range(warmup + runs):
            for (label, argv_of), key in zip(commands.items(), labels, strict=True):
                elapsed, _ = c.run_timed(argv_of(payloads[size][key][k]), env)
                if k >= warmup:
                    times[label].append(elapsed)
            for label, argv in start_ref.items():
                elapsed, _ = c.run_timed(argv, env)
                if k >= warmup:
                    times[label].append(elapsed)
        whole[size] = times

    # Correctness: every save made a new row and a new blob of the right size.
    conn = sqlite3.connect(product_store / "artifacts.db")
    stored = dict(
        conn.execute("SELECT size, COUNT(DISTINCT content_hash) FROM artifacts GROUP BY size")
    )
    conn.close()
    saves_ok = all(stored.get(size) == warmup + runs for size in sizes)

    # In-process: the library's save against the floor's code, same interpreter.
    home = Home(work / "save-store-inproc")
    conn_ip = open_artifacts(home, Config())
    assert conn_ip is not None
    ip_floor_dir = private_dir(work / "save-floor-inproc")
    ip_tmp, ip_dst = private_dir(ip_floor_dir / "tmp"), private_dir(ip_floor_dir / "blobs")

    def product_call(path: Path) -> None:
        with open(path, "rb") as stream:
            store.save(home, conn_ip, stream, NewArtifact(), datetime.now(UTC))

    inproc_fns = {
        "artifacts.store.save": ("in-product", product_call),
        "floor: write+fsync+rename+fsync dir": (
            "in-floor",
            lambda p: floor_save_inprocess(p, ip_tmp, ip_dst, False),
        ),
        "reference: floor + sha256 while copying": (
            "in-floor+sha256",
            lambda p: floor_save_inprocess(p, ip_tmp, ip_dst, True),
        ),
    }
    inproc: dict[int, dict[str, list[float]]] = {}
    for size in sizes:
        c.note(
            f"(1) in-process, {size_label(size)}: {len(inproc_fns)} functions x {runs} runs, "
            "interleaved"
        )
        times = {label: [] for label in inproc_fns}
        for k in range(warmup + runs):
            for label, (key, fn) in inproc_fns.items():
                start = time.perf_counter()
                fn(payloads[size][key][k])
                elapsed = time.perf_counter() - start
                if k >= warmup:
                    times[label].append(elapsed)
        inproc[size] = times

    # Phase timing of the library save (separate runs: the wrappers cost a little).
    phases: dict[int, PhaseTimer] = {}
    for size in sizes:
        timer = PhaseTimer()
        timer.patch(cas, "stage", "cas.stage (write, fsync and hash in artifacts/tmp)")
        timer.patch(cas, "ensure_private_dir", "ensure_private_dir (mkdir -p, symlink checks)")
        timer.patch(cas, "copy_stream", "cas.copy_stream (read the source, write)")
        timer.patch(cas, "hash_while_syncing", "cas.hash_while_syncing (read back + sha256)")
        timer.patch(catalog, "blob_of", "catalog.blob_of (dedup lookup)")
        timer.patch(cas, "check", "cas.check (is the new path taken?)")
        timer.patch(cas, "publish", "cas.publish (chmod, rename)")
        timer.patch(cas, "fsync_dir", "cas.fsync_dir")
        timer.patch_cm(store, "write_tx", "write_tx: BEGIN IMMEDIATE, catalog.insert, COMMIT")
        timer.patch(catalog, "get", "catalog.get (read the row back)")
        try:
            for k in range(warmup + runs):
                timer.start_run()
                start = time.perf_counter()
                product_call(payloads[size]["in-profile"][k])
                total = time.perf_counter() - start
                if k >= warmup:
                    timer.end_run(total)
        finally:
            timer.restore()
        phases[size] = timer
    conn_ip.close()

    # Report.
    text = [
        f"### (1) `artifact save`, whole process ({runs} runs each, new content every run, "
        "interleaved)",
        "",
    ]
    rows = []
    for size in sizes:
        times = whole[size]
        floor = c.median(times["floor: python -c write+fsync+rename+fsync dir"])
        for label, values in times.items():
            rows.append(
                [
                    size_label(size),
                    label,
                    c.ms(c.median(values)),
                    c.ms(c.p90(values)),
                    f"{c.median(values) / floor:.2f}x",
                ]
            )
    text += [c.table(["payload", "command", "median ms", "p90 ms", "vs floor (median)"], rows), ""]
    big = 10 * MB
    product_big = c.median(whole[big]["soloqueue-mem artifact save FILE"])
    floor_big = c.median(whole[big]["floor: python -c write+fsync+rename+fsync dir"])
    ratio = product_big / floor_big
    goal_ok = ratio <= 1.5
    text += [
        f"Goal: `artifact save` of 10 MB, median <= 1.5x the floor: {c.ms(product_big)} ms = "
        f"{ratio:.2f}x floor ({c.ms(floor_big)} ms) -> {c.verdict(goal_ok)}",
        "",
        "Check: the store holds "
        f"{', '.join(f'{stored.get(s, 0)} distinct {size_label(s)} blobs' for s in sizes)}, "
        f"expected {warmup + runs} each (warm-up included): "
        f"{'ok' if saves_ok else '**MISMATCH**'}.",
        "",
        f"#### In-process: `artifacts.store.save` vs the floor's code ({runs} runs each, "
        "interleaved, this interpreter)",
        "",
    ]
    rows = []
    for size in sizes:
        times = inproc[size]
        floor = c.median(times["floor: write+fsync+rename+fsync dir"])
        for label, values in times.items():
            rows.append(
                [
                    size_label(size),
                    label,
                    c.ms(c.median(values)),
                    c.ms(c.p90(values)),
                    f"{c.median(values) / floor:.2f}x",
                ]
            )
    text += [
        c.table(["payload", "in-process", "median ms", "p90 ms", "vs floor (median)"], rows),
        "",
    ]
    rows = []
    for size in sizes:
        w, i = whole[size], inproc[size]
        rows.append(
            [
                size_label(size),
                c.ms(c.median(w["soloqueue-mem artifact save FILE"])),
                c.ms(c.median(i["artifacts.store.save"])),
                c.ms(
                    c.median(w["soloqueue-mem artifact save FILE"])
                    - c.median(i["artifacts.store.save"])
                ),
                c.ms(c.median(w["floor: python -c write+fsync+rename+fsync dir"])),
                c.ms(c.median(i["floor: write+fsync+rename+fsync dir"])),
                c.ms(
                    c.median(w["floor: python -c write+fsync+rename+fsync dir"])
                    - c.median(i["floor: write+fsync+rename+fsync dir"])
                ),
            ]
        )
    text += [
        "Start-up versus write path (medians, ms): whole process minus in-process is the cost "
        "of starting the interpreter, importing and parsing the command.",
        "",
        c.table(
            [
                "payload",
                "save: whole",
                "save: in-process",
                "save: start-up etc.",
                "floor: whole",
                "floor: in-process",
                "floor: start-up",
            ],
            rows,
        ),
        "",
    ]
    for size in sizes:
        text += [
            f"Phases of one library save, {size_label(size)} (median of {runs} runs; inclusive "
            "times, "
            "nested steps indented; the wrappers add ~1 us per call):",
            "",
            c.table(
                ["step", "median ms", "calls", "% of save"],
                phases[size].rows("artifacts.store.save"),
            ),
            "",
        ]
    return "\n".join(text).rstrip(), goal_ok, saves_ok


# --- part 2: gc --deep ---------------------------------------------------------------------


def build_gc_store(n: int, seed: int) -> tuple[Path, dict]:
    """The cached template store of ``n`` blobs (built once, reused when present)."""
    from soloqueue_mem.artifacts import cas, catalog
    from soloqueue_mem.clock import iso
    from soloqueue_mem.config import Config
    from soloqueue_mem.db.connect import write_tx
    from soloqueue_mem.home import Home
    from soloqueue_mem.storage.sqlite.schema_artifacts import MIGRATIONS
    from soloqueue_mem.storage.sqlite.stores import open_artifacts

    final = c.CACHE / f"artifacts-gc-{n}-seed{seed}"
    info_file = final / "bench-build.json"
    if info_file.exists():
        info = json.loads(info_file.read_text())
        if info.get("schema_version") == len(MIGRATIONS):
            c.note(f"(2) reusing the {n:,}-blob store in {final}")
            return final / "store", info
        c.note(
            f"(2) cached store has schema {info.get('schema_version')}, expected "
            f"{len(MIGRATIONS)}: rebuilding"
        )
        remove_tree(final)
    tmp = c.CACHE / f".building-artifacts-gc-{n}-seed{seed}"
    remove_tree(tmp)
    root = tmp / "store"
    home = Home(root)
    c.note(
        f"(2) building a {n:,}-blob store in {tmp} ({GC_DAYS} day folders, every "
        f"{GC_ORPHAN_EVERY}th blob unreferenced)"
    )
    start = time.perf_counter()
    old_umask = os.umask(0o077)  # folders 0700 like the product's
    conn = open_artifacts(home, Config())
    assert conn is not None
    rng = random.Random(seed)
    first_day = date(2025, 1, 1)
    made: set[str] = set()
    orphan_time = time.time() - GC_ORPHAN_AGE
    orphans = 0
    with write_tx(conn):
        for i in range(n):
            content = f"soloqueue-mem gc benchmark blob {seed}/{i}\n".encode() * rng.randint(1, 40)
            sha = hashlib.sha256(content).hexdigest()
            day = first_day + timedelta(days=rng.randrange(GC_DAYS))
            relpath = cas.blob_relpath(sha, day)
            path = root / relpath
            folder = str(path.parent)
            if folder not in made:
                os.makedirs(folder, mode=0o700, exist_ok=True)
                made.add(folder)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
            os.write(fd, content)
            os.close(fd)
            if i % GC_ORPHAN_EVERY == 0:
                os.utime(path, (orphan_time, orphan_time))
                orphans += 1
            else:
                created = datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(
                    seconds=rng.randrange(86400)
                )
                catalog.insert(
                    conn,
                    content_hash=sha,
                    path=relpath,
                    size=len(content),
                    created_at=iso(created),
                    tags=(),
                    title=f"blob {i}",
                    mime="text/plain",
                )
    conn.close()
    os.umask(old_umask)
    os.sync()
    elapsed = time.perf_counter() - start
    dirs = sum(1 for _ in os.walk(root / "artifacts" / "blobs"))
    info = {
        "blobs": n,
        "orphans": orphans,
        "rows": n - orphans,
        "folders": dirs,
        "days": GC_DAYS,
        "build_seconds": round(elapsed, 1),
        "schema_version": len(MIGRATIONS),
        "seed": seed,
    }
    (tmp / "bench-build.json").write_text(json.dumps(info))
    tmp.rename(final)
    return final / "store", info


def bench_gc(python: str, work: Path, n: int, runs: int, seed: int) -> tuple[str, bool, bool]:
    from soloqueue_mem.artifacts import catalog
    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.lifecycle import gc as gc_mod
    from soloqueue_mem.storage.sqlite.stores import open_artifacts

    env = c.timing_env()
    cli = c.cli_argv(python)
    template, info = build_gc_store(n, seed)
    commands = {
        "soloqueue-mem gc --deep --force --format json": lambda root: [
            *cli,
            "--root",
            str(root),
            "gc",
            "--deep",
            "--force",
            "--format",
            "json",
        ],
        "floor: python -c scandir walk + SELECT DISTINCT path": lambda root: [
            python,
            "-c",
            FLOOR_GC,
            str(root),
            "walk",
        ],
        "reference: floor + lstat of every file": lambda root: [
            python,
            "-c",
            FLOOR_GC,
            str(root),
            "stat",
        ],
    }
    product = "soloqueue-mem gc --deep --force --format json"
    times: dict[str, list[float]] = {label: [] for label in commands}
    copies: list[float] = []
    reports: list[dict] = []
    floor_counts: set[str] = set()
    c.note(f"(2) {runs} rounds: copy the store, time the floors, then gc on the copy")
    for k in range(runs):
        root = work / f"gc-{k}"
        copies.append(copy_tree(template, root))
        # The floors first (they only read), then gc (it deletes), on the same copy.
        for label, argv_of in commands.items():
            if label == product:
                continue
            elapsed, out = c.run_timed(argv_of(root), env, capture=True)
            times[label].append(elapsed)
            floor_counts.add(out.decode().strip())
        elapsed, out = c.run_timed(commands[product](root), env, capture=True)
        times[product].append(elapsed)
        reports.append(json.loads(out))
        c.note(f"    round {k + 1}: copy {copies[-1]:.1f} s, gc {elapsed:.2f} s")
        remove_tree(root)

    phase2 = [r["phase2"] for r in reports]
    gc_ok = all(
        p["blobs"] == info["blobs"]
        and p["orphans"] == info["orphans"]
        and p["deleted_blobs"] == info["orphans"]
        and not p["missing_blobs"]
        and not p["strays"]
        for p in phase2
    )
    floor_ok = floor_counts == {f"{info['blobs']} {info['orphans']}"}

    # Phase timing of the library gc, in-process, on one more fresh copy.
    c.note("(2) in-process phase timing of run_gc on a fresh copy")
    root = work / "gc-profile"
    copy_tree(template, root)
    home = Home(root)
    timer = PhaseTimer()

    def open_catalog() -> sqlite3.Connection | None:
        return open_artifacts(home, Config(), create=False)

    timer.patch(gc_mod, "expire_rows", "phase 1: expire_rows")
    timer.patch(gc_mod, "scan_blobs", "scan_blobs (scandir walk, parse_relpath, lstat)")
    timer.patch(catalog, "referenced_paths", "catalog.referenced_paths (SELECT path)")
    timer.patch(gc_mod, "temp_files", "temp_files")
    timer.patch(gc_mod, "plan", "plan (set arithmetic)")
    timer.patch(gc_mod, "apply_plan", "apply_plan (under the exclusive lock)")
    timer.patch(catalog, "referenced_among", "catalog.referenced_among (re-check, 500 a query)")
    timer.patch(gc_mod, "delete_blobs", "delete_blobs (lstat + unlink on worker threads)")
    timer.patch(gc_mod, "remove_empty_dirs", "remove_empty_dirs (rmdir on worker threads)")
    try:
        timer.start_run()
        start = time.perf_counter()
        report = gc_mod.run_gc(
            home, open_catalog, datetime.now(UTC), gc_mod.GcOptions(deep=True, force=True)
        )
        timer.end_run(time.perf_counter() - start)
    finally:
        timer.restore()
    remove_tree(root)
    gc_ok &= report["phase2"]["deleted_blobs"] == info["orphans"]

    floor = c.median(times["floor: python -c scandir walk + SELECT DISTINCT path"])
    rows = [
        [
            label,
            f"{c.median(v):.3f}",
            f"{c.p90(v):.3f}",
            f"{min(v):.3f}",
            f"{max(v):.3f}",
            f"{c.median(v) / floor:.2f}x",
        ]
        for label, v in times.items()
    ]
    inner = [r["seconds"] for r in reports]
    product_median = c.median(times[product])
    ratio = product_median / floor
    goal_ok = ratio <= 2
    p0 = phase2[0]
    text = [
        f"### (2) `gc --deep` over {info['blobs']:,} blobs, whole process ({runs} rounds)",
        "",
        f"Store: {info['blobs']:,} blob files (41 B to 1.7 KB) in {info['folders']:,} folders "
        f"(YYYY/MM/DD/ab/cd over {info['days']} days), {info['rows']:,} catalog rows, "
        f"{info['orphans']:,} unreferenced blobs aged 2 days (grace 1 h); built once in "
        f"{info['build_seconds']} s and cached under {c.CACHE}. Every round copies it (`cp -a` "
        "+ sync, "
        f"median {c.median(copies):.1f} s, not timed), runs the floors on the copy, then gc.",
        "",
        c.table(["process", "median s", "p90 s", "min s", "max s", "vs floor (median)"], rows),
        "",
        f"gc's own `seconds` (in-process run_gc): median {c.median(inner):.3f} s, so start-up and "
        f"output take ~{product_median - c.median(inner):.3f} s of the whole process.",
        "",
        f"Check: every gc scanned {p0['blobs']:,} blobs, found {p0['orphans']:,} orphans and "
        "deleted "
        f"{p0['deleted_blobs']:,} (freed {p0['freed_bytes']:,} bytes, removed "
        f"{p0['empty_dirs']:,} empty folders), "
        f"expected {info['orphans']:,}: {'ok' if gc_ok else '**MISMATCH**'}; the floors counted "
        f"{', '.join(sorted(floor_counts))} (files, unreferenced): "
        f"{'ok' if floor_ok else '**MISMATCH**'}.",
        "",
        f"Goal: median <= 2x the floor: {product_median:.3f} s = {ratio:.2f}x floor "
        f"({floor:.3f} s) "
        f"-> {c.verdict(goal_ok)}",
        "",
        "Phases of one in-process `run_gc` (deep, force) on a fresh copy (inclusive times, nested "
        "steps indented; the wrappers add ~1 us per call):",
        "",
        c.table(["step", "ms", "calls", "% of run_gc"], timer.rows("lifecycle.gc.run_gc")),
    ]
    return "\n".join(text), goal_ok, gc_ok and floor_ok


# --- part 3: verify --full -------------------------------------------------------------------


def build_verify_store(total_mb: int, seed: int) -> tuple[Path, dict]:
    """The cached store of seeded random blobs totalling ~``total_mb`` MB, sizes
    log-uniform from 4 KB to 16 MB, every blob referenced by one row."""
    import math

    from soloqueue_mem.artifacts import cas, catalog
    from soloqueue_mem.clock import iso
    from soloqueue_mem.config import Config
    from soloqueue_mem.db.connect import write_tx
    from soloqueue_mem.home import Home
    from soloqueue_mem.storage.sqlite.schema_artifacts import MIGRATIONS
    from soloqueue_mem.storage.sqlite.stores import open_artifacts

    final = c.CACHE / f"artifacts-verify-{total_mb}MB-seed{seed}"
    info_file = final / "bench-build.json"
    if info_file.exists():
        info = json.loads(info_file.read_text())
        if info.get("schema_version") == len(MIGRATIONS):
            c.note(f"(3) reusing the {total_mb} MB store in {final}")
            return final / "store", info
        remove_tree(final)
    tmp = c.CACHE / f".building-artifacts-verify-{total_mb}MB-seed{seed}"
    remove_tree(tmp)
    root = tmp / "store"
    home = Home(root)
    c.note(f"(3) building a ~{total_mb} MB blob store in {tmp}")
    start = time.perf_counter()
    old_umask = os.umask(0o077)
    conn = open_artifacts(home, Config())
    assert conn is not None
    rng = random.Random(seed)
    target = total_mb * MB
    total = count = 0
    day = date(2025, 3, 1)
    with write_tx(conn):
        while total < target:
            size = int(math.exp(rng.uniform(math.log(4 * KB), math.log(16 * MB))))
            content = rng.randbytes(size)
            sha = hashlib.sha256(content).hexdigest()
            relpath = cas.blob_relpath(sha, day + timedelta(days=count % 30))
            path = root / relpath
            os.makedirs(path.parent, mode=0o700, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
            view = memoryview(content)
            while view:
                view = view[os.write(fd, view) :]
            os.close(fd)
            catalog.insert(
                conn,
                content_hash=sha,
                path=relpath,
                size=size,
                created_at=iso(datetime(2025, 3, 1, tzinfo=UTC) + timedelta(minutes=count)),
                tags=("bench",),
                title=f"blob {count}",
            )
            total += size
            count += 1
    conn.close()
    os.umask(old_umask)
    os.sync()
    info = {
        "blobs": count,
        "bytes": total,
        "build_seconds": round(time.perf_counter() - start, 1),
        "schema_version": len(MIGRATIONS),
        "seed": seed,
    }
    (tmp / "bench-build.json").write_text(json.dumps(info))
    tmp.rename(final)
    return final / "store", info


def bench_verify(
    python: str, work: Path, total_mb: int, runs: int, seed: int
) -> tuple[str, bool, bool]:
    from soloqueue_mem.artifacts import cas
    from soloqueue_mem.home import Home
    from soloqueue_mem.ops import verify as verify_mod
    from soloqueue_mem.storage.sqlite.stores import open_query_only

    env = c.timing_env()
    cli = c.cli_argv(python)
    root, info = build_verify_store(total_mb, seed)
    conn = sqlite3.connect(f"file:{root / 'artifacts.db'}?mode=ro", uri=True)
    rows = conn.execute("SELECT path, content_hash, size FROM artifacts ORDER BY id").fetchall()
    conn.close()
    listing = work / "verify-files.list"
    listing.write_bytes(b"".join(str(root / path).encode() + b"\0" for path, _, _ in rows))
    total = sum(size for _, _, size in rows)

    # sha256sum must agree with the catalog (checked once, untimed).
    out = (
        subprocess.run(
            ["xargs", "-0", "-a", str(listing), "sha256sum"], check=True, capture_output=True
        )
        .stdout.decode()
        .splitlines()
    )
    expected = {str(root / path): sha for path, sha, _ in rows}
    sums_ok = len(out) == len(rows) and all(expected.get(line[66:]) == line[:64] for line in out)

    commands = {
        "soloqueue-mem verify --full": [
            *cli,
            "--root",
            str(root),
            "verify",
            "--full",
            "--format",
            "json",
        ],
        "floor: xargs -0 sha256sum (same files)": ["xargs", "-0", "-a", str(listing), "sha256sum"],
        "reference: python -c hashlib, same files": [python, "-c", HASHLIB_LIST, str(listing)],
        "reference: soloqueue-mem verify --quick (no re-hash)": [
            *cli,
            "--root",
            str(root),
            "verify",
            "--quick",
            "--format",
            "json",
        ],
    }
    c.note(
        f"(3) {len(commands)} commands x {runs} runs (+1 warm-up), interleaved, over "
        f"{mb(total):.0f} MB"
    )
    times = c.interleaved(
        {label: {"argv": argv, "env": env} for label, argv in commands.items()}, runs, warmup=1
    )
    _, raw = c.run_timed(commands["soloqueue-mem verify --full"], env, capture=True)
    report = json.loads(raw)
    verify_ok = (
        report["exit_code"] == 0
        and report["counts"].get("artifacts") == info["blobs"]
        and report["counts"].get("blobs") == info["blobs"]
    )

    # Phase timing of the library verify, in-process.
    c.note("(3) in-process phase timing of verify_store(full=True)")
    timer = PhaseTimer()
    timer.patch(verify_mod, "_open_ro", "_open_ro (PRAGMA integrity_check)")
    timer.patch(verify_mod, "_check_artifacts", "_check_artifacts")
    timer.patch(cas, "check", "cas.check")
    timer.patch(cas, "hash_file", "cas.hash_file (read + sha256)")
    timer.patch(verify_mod, "scan_blobs", "scan_blobs")
    timer.patch(verify_mod, "_check_sessions", "_check_sessions")
    try:
        for _ in range(3):
            timer.start_run()
            start = time.perf_counter()
            verify_mod.verify_store(
                Home(root), verify_mod.VerifyOptions(full=True), time.time(), open_query_only
            )
            timer.end_run(time.perf_counter() - start)
    finally:
        timer.restore()

    floor = c.median(times["floor: xargs -0 sha256sum (same files)"])
    floor_rate = mb(total) / floor
    table_rows = []
    for label, values in times.items():
        rate = mb(total) / c.median(values)
        table_rows.append(
            [
                label,
                c.ms(c.median(values)),
                c.ms(c.p90(values)),
                f"{rate:,.0f}",
                f"{100 * rate / floor_rate:.0f}%",
            ]
        )
    product_rate = mb(total) / c.median(times["soloqueue-mem verify --full"])
    share = product_rate / floor_rate
    goal_ok = share >= 0.7
    text = [
        f"### (3) `verify --full` over {info['blobs']} blobs, {mb(total):.0f} MB, whole process "
        f"({runs} runs, interleaved)",
        "",
        f"Blobs: seeded random bytes, sizes log-uniform 4 KB - 16 MB, one row each; built once in "
        f"{info['build_seconds']} s and cached under {c.CACHE}; all files in the page cache "
        "(warm-up run). "
        "MB/s = blob bytes / wall time of the whole process (MB = 2^20 bytes).",
        "",
        c.table(["process", "median ms", "p90 ms", "MB/s (median)", "vs sha256sum"], table_rows),
        "",
        f"Check: verify reported exit 0 with {report['counts'].get('artifacts')} artifacts and "
        f"{report['counts'].get('blobs')} blobs (expected {info['blobs']}): "
        f"{'ok' if verify_ok else '**MISMATCH**'}; "
        f"sha256sum agrees with the catalog on every file: {'ok' if sums_ok else '**MISMATCH**'}.",
        "",
        f"Goal: verify --full >= 70% of sha256sum's MB/s: {product_rate:,.0f} MB/s = "
        f"{100 * share:.0f}% of {floor_rate:,.0f} MB/s -> {c.verdict(goal_ok)}",
        "",
        "Phases of the library `verify_store(full=True)`, in-process (median of 3 runs; inclusive "
        "times, nested steps indented):",
        "",
        c.table(
            ["step", "median ms", "calls", "% of verify"], timer.rows("ops.verify.verify_store")
        ),
    ]
    return "\n".join(text), goal_ok, verify_ok and sums_ok


# --- main ------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small fast run")
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="interpreter whose soloqueue-mem is timed (default: this one)",
    )
    parser.add_argument("--runs", type=int, help="(1) runs per save command (default 15, quick 10)")
    parser.add_argument(
        "--blobs", type=int, help="(2) blobs in the gc store (default 100000, quick 10000)"
    )
    parser.add_argument("--gc-runs", type=int, help="(2) gc rounds (default 5, quick 3)")
    parser.add_argument("--verify-mb", type=int, help="(3) MB of blobs (default 500, quick 100)")
    parser.add_argument("--verify-runs", type=int, help="(3) runs per command (default 7, quick 5)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--only", choices=["save", "gc", "verify"])
    args = parser.parse_args()
    quick = args.quick
    runs = max(10, args.runs or (10 if quick else 15))
    blobs = args.blobs or (10_000 if quick else 100_000)
    gc_runs = args.gc_runs or (3 if quick else 5)
    verify_mb = args.verify_mb or (100 if quick else 500)
    verify_runs = args.verify_runs or (5 if quick else 7)

    c.out(f"## bench_artifacts{' (quick)' if quick else ''}")
    c.out()
    c.out(c.machine_line(args.python))
    c.out()
    c.CACHE.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="bench-artifacts-", dir=c.CACHE))
    ok = True
    goals: list[tuple[str, bool]] = []
    try:
        if args.only in (None, "save"):
            text, goal, good = bench_save(args.python, work, runs, args.seed)
            c.out(text)
            c.out()
            goals.append(("(1) save 10 MB <= 1.5x floor", goal))
            ok &= good
        if args.only in (None, "gc"):
            text, goal, good = bench_gc(args.python, work, blobs, gc_runs, args.seed)
            c.out(text)
            c.out()
            goals.append(("(2) gc --deep <= 2x floor", goal))
            ok &= good
        if args.only in (None, "verify"):
            text, goal, good = bench_verify(args.python, work, verify_mb, verify_runs, args.seed)
            c.out(text)
            c.out()
            goals.append(("(3) verify --full >= 70% of sha256sum", goal))
            ok &= good
        c.out(c.table(["goal", "result"], [[name, c.verdict(g)] for name, g in goals]))
    finally:
        remove_tree(work)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
