"""``verify``: is the store sound? Read-only unless ``repair``.

Findings are separated like ``git fsck`` and ``restic check``: *errors* (a blob that
no longer hashes to its name, a row whose blob is missing, a corrupt database or log
line, index rows without a log record), *warnings* (orphan blobs and temporary files
older than the grace period, stray files, a torn log tail, turns the index lacks),
*info* (files younger than the grace period: a save or a log in progress). memory.db's
supersede chains and the episodes its rows name are checked as on PostgreSQL
(:func:`check_links`). A database another process keeps busy is reported ``busy``,
never corrupt. ``repair`` rebuilds only derived state: the full-text index, and turns
re-indexed from the JSONL logs.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from typing import Any, NamedTuple

from soloqueue_mem.artifacts import cas, catalog
from soloqueue_mem.db.adapter import Db
from soloqueue_mem.errors import StorageError
from soloqueue_mem.home import Home, refuse_symlinks
from soloqueue_mem.lifecycle.gc import scan_blobs, temp_files
from soloqueue_mem.sessions.events import SessionKey
from soloqueue_mem.sessions.logfile import read_lines
from soloqueue_mem.sessions.reader import session_files

EXIT_WARNINGS = 8
EXIT_ERRORS = 9
EXIT_BUSY = 75
# opens a database so that it cannot write: (path, busy_timeout_ms) -> connection
Connect = Callable[[str, int], sqlite3.Connection]


class Finding(NamedTuple):
    severity: str  # error | warning | info
    kind: str
    where: str
    detail: str = ""


class VerifyOptions(NamedTuple):
    full: bool = False
    repair: bool = False
    grace_seconds: float = 3600
    busy_timeout_ms: int = 10_000
    ephemeral_days: float = 3  # gc_ephemeral_days: offloaded output older than this may be gone


def verify_store(
    home: Home,
    options: VerifyOptions,
    now: float,
    connect: Connect,
    open_for_repair: Callable[[], sqlite3.Connection | None] | None = None,
) -> dict[str, Any]:
    """Check everything; return ``{"findings": [...], "counts": {...}, "exit_code": n}``.
    ``connect(path, busy_timeout_ms)`` opens a database so that it cannot write."""
    findings: list[Finding] = []
    counts: dict[str, int] = {}
    from soloqueue_mem.storage.sqlite import schema_graph, schema_memory

    memory = _open_ro(home.memory_db, options, findings, len(schema_memory.MIGRATIONS), connect)
    try:
        cataloged = check_artifacts(home, options, now, findings, counts, connect)
        offloads: dict[str, Offload] = {}
        _check_sessions(home, memory, findings, counts, offloads)
        if memory is not None:
            check_links(memory, findings, counts)
        expired_before = now - options.ephemeral_days * 86400
        check_offloads(offloads, cataloged or set(), expired_before, findings)
        # graph memory: integrity and schema version only
        graph = _open_ro(home.graph_db, options, findings, len(schema_graph.MIGRATIONS), connect)
        if graph is not None:
            graph.close()
    finally:
        if memory is not None:
            memory.close()
    repaired = _repair(home, open_for_repair) if options.repair and open_for_repair else None
    return report(findings, counts, repaired)


def report(
    findings: list[Finding], counts: dict[str, int], repaired: dict[str, Any] | None
) -> dict[str, Any]:
    """The report ``verify`` prints (``repaired`` only after a repair)."""
    done: dict[str, Any] = {
        "findings": [f._asdict() for f in findings],
        "counts": counts,
        "summary": {
            s: sum(1 for f in findings if f.severity == s) for s in ("error", "warning", "info")
        },
        "exit_code": exit_code(findings),
    }
    if repaired is not None:
        done["repaired"] = repaired
    return done


def check_artifacts(
    home: Home,
    options: VerifyOptions,
    now: float,
    findings: list[Finding],
    counts: dict[str, int],
    connect: Connect,
) -> set[str] | None:
    """This data directory's artifact catalog against its blobs (the CAS); the ids of
    the catalog's rows (None when it was not read)."""
    from soloqueue_mem.storage.sqlite import schema_artifacts

    artifacts = _open_ro(
        home.artifacts_db, options, findings, len(schema_artifacts.MIGRATIONS), connect
    )
    try:
        if not _blob_folders_are_real(home, findings):
            pass  # a symlinked artifacts/ or artifacts/blobs: never followed, never read
        elif artifacts is not None:
            return _check_artifacts(home, artifacts, options, now, findings, counts)
        elif not _has_catalog(home) and scan_blobs(home).blobs:
            findings.append(Finding("error", "missing-catalog", "artifacts.db", "blobs exist"))
    finally:
        if artifacts is not None:
            artifacts.close()
    return None


def _blob_folders_are_real(home: Home, findings: list[Finding]) -> bool:
    for folder in (home.blobs_dir, home.path("artifacts", "tmp")):
        try:
            refuse_symlinks(home.dir, folder)
        except StorageError as exc:
            findings.append(
                Finding("error", "symlink", os.path.relpath(folder, home.dir), str(exc))
            )
            return False
    return True


def _has_catalog(home: Home) -> bool:
    path = home.artifacts_db
    return os.path.exists(path) and os.stat(path).st_size > 0


def exit_code(findings: list[Finding]) -> int:
    if any(f.severity == "error" for f in findings):
        return EXIT_ERRORS
    if any(f.kind == "busy" for f in findings):
        return EXIT_BUSY
    if any(f.severity == "warning" for f in findings):
        return EXIT_WARNINGS
    return 0


# --- databases ---------------------------------------------------------------------


def _open_ro(
    path: str, options: VerifyOptions, findings: list[Finding], head: int, connect: Connect
) -> sqlite3.Connection | None:
    """A read-only connection after an integrity check; None if absent, busy, corrupt
    or written by a newer release (schema above ``head``: other commands refuse it)."""
    if not os.path.exists(path):
        return None
    name = os.path.basename(path)
    try:
        conn = connect(path, options.busy_timeout_ms)
        check = "integrity_check" if options.full else "quick_check"
        result = [row[0] for row in conn.execute(f"PRAGMA {check}")]
    except sqlite3.OperationalError as exc:
        kind = "busy" if "locked" in str(exc) or "busy" in str(exc) else "corrupt-database"
        severity = "warning" if kind == "busy" else "error"
        findings.append(Finding(severity, kind, name, str(exc)))
        return None
    except sqlite3.DatabaseError as exc:
        findings.append(Finding("error", "corrupt-database", name, str(exc)))
        return None
    if result != ["ok"]:
        findings.append(Finding("error", "corrupt-database", name, "; ".join(result[:5])))
        conn.close()
        return None
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version == 0:  # created, never migrated (a first write failed, e.g. disk full)
        detail = "no tables yet: the next command that writes creates them"
        findings.append(Finding("warning", "empty-database", name, detail))
        conn.close()
        return None
    if version > head:
        detail = f"schema version {version}, newer than this soloqueue-mem ({head}): upgrade"
        findings.append(Finding("error", "schema-too-new", name, detail))
        conn.close()
        return None
    return conn


# --- links between rows ----------------------------------------------------------


def check_links(conn: Any, findings: list[Finding], counts: dict[str, int]) -> None:
    """The memories' supersede chains end (``dangling-supersede``, ``supersede-cycle``:
    errors), and no memory or turn names an episode that is not there
    (``dangling-episode``, a warning). ``conn``: either back end's connection."""
    db = Db(conn)
    rows = db.fetchall(
        "SELECT m.id, m.superseded_by, s.id IS NULL FROM memories AS m"
        " LEFT JOIN memories AS s ON s.id = m.superseded_by WHERE m.superseded_by IS NOT NULL"
    )
    links = {ref: by for ref, by, _ in rows}
    counts["memories_superseded"] = len(links)
    dangling = {ref for ref, _, missing in rows if missing}
    for ref, detail in _broken_chains(links, dangling):
        findings.append(Finding("error", detail, f"memory {ref}", f"superseded_by {links[ref]}"))
    for table, what, column in (
        ("memories", "memory", "source_episode_id"),
        (db.turns, "turn", "episode_id"),
    ):
        for ref, episode in db.fetchall(
            f"SELECT t.id, t.{column} FROM {table} AS t"  # noqa: S608 - constants
            f" LEFT JOIN episodes AS e ON e.id = t.{column}"
            f" WHERE t.{column} IS NOT NULL AND e.id IS NULL ORDER BY t.id LIMIT 100"
        ):
            where = f"{what} {ref}"
            findings.append(Finding("warning", "dangling-episode", where, f"episode {episode}"))


def _broken_chains(links: dict[str, str], dangling: set[str]) -> list[tuple[str, str]]:
    """Memories superseded by one that is not there (``dangling``), or on a chain that
    loops."""
    broken = [(ref, "dangling-supersede") for ref in dangling]
    for start in sorted(links):
        seen, ref = {start}, links[start]
        while ref in links and ref not in seen:
            seen.add(ref)
            ref = links[ref]
        if ref in seen:
            broken.append((start, "supersede-cycle"))
    return sorted(broken)


# --- artifacts ----------------------------------------------------------------------


def _check_artifacts(
    home: Home,
    conn: sqlite3.Connection,
    options: VerifyOptions,
    now: float,
    findings: list[Finding],
    counts: dict[str, int],
) -> set[str]:
    rows = list(catalog.all_artifacts(conn))
    counts["artifacts"] = len(rows)
    checked: dict[str, str] = {}
    paths_by_hash: dict[str, set[str]] = {}
    for artifact in rows:
        paths_by_hash.setdefault(artifact.content_hash, set()).add(artifact.path)
        if artifact.path not in checked:
            checked[artifact.path] = cas.check(
                home, artifact.path, artifact.size, artifact.content_hash, rehash=options.full
            )
        status = checked[artifact.path]
        if status == "missing":
            findings.append(
                Finding("error", "missing-blob", f"artifact {artifact.id}", artifact.path)
            )
        elif status != "ok":
            findings.append(Finding("error", status, f"artifact {artifact.id}", artifact.path))
    for content_hash, paths in paths_by_hash.items():
        if len(paths) > 1:
            findings.append(
                Finding("info", "duplicate-copy", content_hash, ", ".join(sorted(paths)))
            )
    scan = scan_blobs(home)
    blobs, strays = scan.blobs, scan.strays
    counts["blobs"] = len(blobs)
    referenced = set(checked)
    for blob in blobs:
        if blob.relpath not in referenced:
            old = now - blob.mtime >= options.grace_seconds
            findings.append(
                Finding(
                    "warning" if old else "info", "orphan" if old else "orphan-recent", blob.relpath
                )
            )
    for stray in strays:
        kind = "symlink" if (home.root / stray).is_symlink() else "stray-file"
        findings.append(Finding("warning", kind, stray))
    for temp in temp_files(home):
        old = now - temp.mtime >= options.grace_seconds
        findings.append(Finding("warning" if old else "info", "temp-file", temp.relpath))
    return {str(artifact.id) for artifact in rows}


class Offload(NamedTuple):
    """The first turn whose offloaded output an artifact holds."""

    where: str  # group/agent/session/turn_index
    timestamp: str


def check_offloads(
    offloads: dict[str, Offload],
    cataloged: set[str],
    expired_before: float,
    findings: list[Finding],
) -> None:
    """A finding for each turn whose offloaded output names an artifact the catalog
    lacks (issue 30 L11): ``dangling-artifact`` (a warning: an import that could not
    restore it, a lost row), or ``expired-artifact`` (info) when the turn is older than
    ``gc_ephemeral_days``, whose gc removes such rows by design."""
    from soloqueue_mem.clock import parse_timestamp
    from soloqueue_mem.errors import BadInput

    for artifact_id, offload in sorted(offloads.items()):
        if artifact_id in cataloged:
            continue
        try:
            old = parse_timestamp(offload.timestamp).timestamp() < expired_before
        except BadInput:
            old = False
        kind = "expired-artifact" if old else "dangling-artifact"
        detail = f"its offloaded output names artifact {artifact_id}, not in the catalog"
        findings.append(Finding("info" if old else "warning", kind, offload.where, detail))


# --- session logs ---------------------------------------------------------------------


def _check_sessions(
    home: Home,
    memory: sqlite3.Connection | None,
    findings: list[Finding],
    counts: dict[str, int],
    offloads: dict[str, Offload],
) -> None:
    from soloqueue_mem.sessions import turns

    indexed = turns.indexed_turn_indexes(memory) if memory is not None else {}
    logged = logged_turns(home, findings, offloads)
    counts["sessions"] = len(logged)
    counts["turns_logged"] = sum(len(v) for v in logged.values())
    counts["turns_indexed"] = sum(len(v) for v in indexed.values())
    if memory is not None:
        _compare(logged, indexed, findings)


def logged_turns(
    home: Home, findings: list[Finding], offloads: dict[str, Offload] | None = None
) -> dict[SessionKey, set[int]]:
    """The turn indexes of each session log of this data directory; a finding for
    each unreadable line (a torn tail: a warning). ``offloads`` is given the artifact
    of each offloaded output and the first turn naming it."""
    logged: dict[SessionKey, set[int]] = {}
    for key, path in session_files(home, None, None):
        where = os.path.relpath(path, home.dir)
        indexes: set[int] = set()
        for entry in read_lines(path):
            if entry.record is None:
                torn = entry.error and entry.error.startswith("torn tail")
                findings.append(
                    Finding(
                        "warning" if torn else "error",
                        "torn-tail" if torn else "jsonl-corrupt",
                        f"{where}:{entry.number}",
                        entry.error or "",
                    )
                )
            elif isinstance(entry.record.get("turn_index"), int):
                indexes.add(entry.record["turn_index"])
                if offloads is not None:
                    _note_offloads(entry.record, "/".join(key), offloads)
        logged[key] = indexes
    return logged


def _note_offloads(record: dict[str, Any], session: str, offloads: dict[str, Offload]) -> None:
    notes = record.get("offloaded")
    for note in notes if isinstance(notes, list) else ():
        if isinstance(note, dict) and isinstance(note.get("artifact_id"), str):
            where = f"{session}/{record['turn_index']}"
            offloads.setdefault(note["artifact_id"], Offload(where, str(record.get("timestamp"))))


def _compare(
    logged: dict[SessionKey, set[int]],
    indexed: dict[SessionKey, set[int]],
    findings: list[Finding],
) -> None:
    for key in sorted(set(logged) | set(indexed)):
        name = "/".join(key)
        missing = logged.get(key, set()) - indexed.get(key, set())
        extra = indexed.get(key, set()) - logged.get(key, set())
        if missing:
            findings.append(Finding("warning", "unindexed-turns", name, f"{len(missing)} turn(s)"))
        if extra:
            kind = "missing-log" if key not in logged else "index-ahead"
            findings.append(
                Finding("error", kind, name, f"{len(extra)} indexed turn(s) without a log record")
            )


# --- repair ---------------------------------------------------------------------------


def _repair(home: Home, open_memory: Callable[[], sqlite3.Connection | None]) -> dict[str, int]:
    """Re-index turns the logs have and the index lacks; rebuild the full-text indexes."""
    from soloqueue_mem.db.connect import write_tx
    from soloqueue_mem.memory import attachments, episodes
    from soloqueue_mem.memory import store as memory_store
    from soloqueue_mem.sessions import turns
    from soloqueue_mem.sessions.logfile import SessionLog
    from soloqueue_mem.sessions.writer import reindex_log

    conn = open_memory()
    if conn is None:
        return {
            "sessions": 0,
            "fts_rows": 0,
            "memory_fts_rows": 0,
            "episode_fts_rows": 0,
            "attachment_fts_rows": 0,
        }
    try:
        sessions = 0
        for key, path in session_files(home, None, None):
            with SessionLog(path) as log, write_tx(conn):
                reindex_log(conn, key, log)
            sessions += 1
        with write_tx(conn):
            rows = turns.rebuild_fts(conn)
            memory_rows = memory_store.rebuild_fts(conn)
            episode_rows = episodes.rebuild_fts(conn)
            attachment_rows = attachments.rebuild_fts(conn)
    finally:
        conn.close()
    return {
        "sessions": sessions,
        "fts_rows": rows,
        "memory_fts_rows": memory_rows,
        "episode_fts_rows": episode_rows,
        "attachment_fts_rows": attachment_rows,
    }
