"""All SQL for ``artifacts`` and ``artifact_tags`` (artifacts.db).

Rows become :class:`Artifact` values here. Tags live twice by design: the seed's JSON
``tags`` column for readers of that schema, and ``artifact_tags`` for indexed queries;
only this module writes either, always together.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from soloqueue_mem.errors import BadInput, InvalidId, NotFound

EPHEMERAL = "sys:ephemeral"
PERSISTENT = "user:persistent"
_TAG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}")
_ID = re.compile(r"[1-9][0-9]{0,17}")
_SHA = re.compile(r"[0-9a-f]{64}")


class Artifact(NamedTuple):
    id: int
    content_hash: str
    group: str | None
    title: str | None
    tags: list[str]
    author: str | None
    created_at: str
    path: str
    size: int
    mime: str | None


_COLUMNS = "id, content_hash, group_id, title, tags, author, created_at, path, size, mime"


def _artifact(row: tuple[Any, ...]) -> Artifact:
    return Artifact(row[0], row[1], row[2], row[3], json.loads(row[4]), *row[5:])


def validate_tag(tag: str) -> str:
    if not isinstance(tag, str) or not _TAG.fullmatch(tag):
        raise BadInput(
            f"invalid tag {tag!r}: use 1-64 of A-Z a-z 0-9 . _ : / -, "
            "starting with a letter or digit"
        )
    return tag


def validate_ref(ref: str) -> str:
    """An artifact reference is its decimal id or its full sha256; nothing else."""
    if not (_ID.fullmatch(ref) or _SHA.fullmatch(ref)):
        raise InvalidId(f"invalid artifact id {ref[:80]!r}: give its number or its full sha256")
    return ref


def insert(
    conn: sqlite3.Connection,
    *,
    content_hash: str,
    path: str,
    size: int,
    created_at: str,
    tags: Iterable[str],
    group: str | None = None,
    title: str | None = None,
    author: str | None = None,
    mime: str | None = None,
    artifact_id: int | None = None,
) -> int:
    """Add a row (under ``artifact_id`` when given: an import keeps its ids)."""
    tag_list = sorted(set(tags))
    cursor = conn.execute(
        "INSERT INTO artifacts (id, content_hash, group_id, title, tags, author, created_at,"
        " path, size, mime) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            artifact_id,
            content_hash,
            group,
            title,
            json.dumps(tag_list),
            author,
            created_at,
            path,
            size,
            mime,
        ),
    )
    artifact_id = int(cursor.lastrowid or 0)
    conn.executemany(
        "INSERT INTO artifact_tags (tag, artifact_id) VALUES (?, ?)",
        [(tag, artifact_id) for tag in tag_list],
    )
    return artifact_id


def get(conn: sqlite3.Connection, ref: str) -> Artifact:
    """The artifact with this id, or the newest one with this sha256; NotFound otherwise."""
    validate_ref(ref)
    if _SHA.fullmatch(ref):
        row = conn.execute(
            f"SELECT {_COLUMNS} FROM artifacts WHERE content_hash = ? ORDER BY id DESC LIMIT 1",  # noqa: S608
            (ref,),
        ).fetchone()
    else:
        row = conn.execute(f"SELECT {_COLUMNS} FROM artifacts WHERE id = ?", (int(ref),)).fetchone()  # noqa: S608
    if row is None:
        raise NotFound(f"artifact {ref} not found (try: soloqueue-mem artifact list)")
    return _artifact(row)


def list_artifacts(
    conn: sqlite3.Connection, tag: str | None, group: str | None, limit: int
) -> list[Artifact]:
    if tag is not None:
        sql = (
            f"SELECT {', '.join('a.' + c for c in _COLUMNS.split(', '))} FROM artifact_tags AS t"  # noqa: S608
            " JOIN artifacts AS a ON a.id = t.artifact_id WHERE t.tag = :tag"
            " AND (:group IS NULL OR a.group_id = :group) ORDER BY a.id DESC LIMIT :limit"
        )
    else:
        sql = (
            f"SELECT {_COLUMNS} FROM artifacts WHERE (:group IS NULL OR group_id = :group)"  # noqa: S608
            " ORDER BY id DESC LIMIT :limit"
        )
    rows = conn.execute(sql, {"tag": tag, "group": group, "limit": limit})
    return [_artifact(row) for row in rows]


def set_tags(
    conn: sqlite3.Connection, artifact_id: int, add: Iterable[str], remove: Iterable[str]
) -> list[str]:
    """Add and remove tags (in one transaction of the caller's); return the new list."""
    conn.executemany(
        "INSERT OR IGNORE INTO artifact_tags (tag, artifact_id) VALUES (?, ?)",
        [(tag, artifact_id) for tag in add],
    )
    conn.executemany(
        "DELETE FROM artifact_tags WHERE tag = ? AND artifact_id = ?",
        [(tag, artifact_id) for tag in remove],
    )
    tags = [
        row[0]
        for row in conn.execute(
            "SELECT tag FROM artifact_tags WHERE artifact_id = ? ORDER BY tag", (artifact_id,)
        )
    ]
    conn.execute("UPDATE artifacts SET tags = ? WHERE id = ?", (json.dumps(tags), artifact_id))
    return tags


def delete(conn: sqlite3.Connection, artifact_id: int) -> None:
    conn.execute("DELETE FROM artifact_tags WHERE artifact_id = ?", (artifact_id,))
    conn.execute("DELETE FROM artifacts WHERE id = ?", (artifact_id,))


def blob_of(conn: sqlite3.Connection, content_hash: str) -> tuple[str, int] | None:
    """The path and size of the blob some row already keeps for this content."""
    row = conn.execute(
        "SELECT path, size FROM artifacts WHERE content_hash = ? ORDER BY id LIMIT 1",
        (content_hash,),
    ).fetchone()
    return None if row is None else (row[0], row[1])


def referenced_among(conn: sqlite3.Connection, relpaths: Sequence[str]) -> set[str]:
    """Which of these blob paths a row references (looked up through the hash index,
    500 paths a query)."""
    found: set[str] = set()
    for start in range(0, len(relpaths), 500):
        batch = relpaths[start : start + 500]
        hashes = [relpath.rsplit("/", 1)[-1] for relpath in batch]
        marks = ", ".join("?" * len(hashes))
        rows = conn.execute(
            f"SELECT path FROM artifacts WHERE content_hash IN ({marks})",  # noqa: S608
            hashes,
        )
        found.update(row[0] for row in rows)
    return found.intersection(relpaths)


def referenced_paths(conn: sqlite3.Connection, excluding: Collection[int] = ()) -> set[str]:
    """Every blob path a row references, rows ``excluding`` left out (what a dry run's
    phase 1 would delete). GC's reference set; the set removes duplicates, cheaper than
    ``DISTINCT``'s sort. Raises sqlite3.Error when the table cannot be read: GC must
    then delete nothing."""
    if not excluding:
        return {row[0] for row in conn.execute("SELECT path FROM artifacts")}
    left_out = set(excluding)
    rows = conn.execute("SELECT id, path FROM artifacts")
    return {path for artifact_id, path in rows if artifact_id not in left_out}


def expired_ephemeral(conn: sqlite3.Connection, created_before: str) -> list[int]:
    """Ephemeral artifacts created before the cut-off and not marked persistent."""
    rows = conn.execute(
        "SELECT t.artifact_id FROM artifact_tags AS t JOIN artifacts AS a ON a.id = t.artifact_id"
        " WHERE t.tag = ? AND a.created_at < ? AND NOT EXISTS ("
        "  SELECT 1 FROM artifact_tags AS p WHERE p.artifact_id = t.artifact_id AND p.tag = ?)"
        " ORDER BY t.artifact_id",
        (EPHEMERAL, created_before, PERSISTENT),
    )
    return [row[0] for row in rows]


def all_artifacts(conn: sqlite3.Connection) -> Iterator[Artifact]:
    for row in conn.execute(f"SELECT {_COLUMNS} FROM artifacts ORDER BY id"):  # noqa: S608
        yield _artifact(row)


def count(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM artifacts").fetchone()[0])
