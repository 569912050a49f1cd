"""Seed 004's working memory: all SQL for ``working_memory`` and its entry filter.

A per-group list with the semantics of the seed's Redis list: a new entry is pushed
on the front (LPUSH), the list is trimmed to its newest ``CAP`` entries (LTRIM 0 49),
and entries live ``TTL`` (24 h). The seed's Redis key expires 24 h after its last
write, taking the whole list with it; here each entry expires 24 h after its own
write, which never keeps anything longer and lets a quiet day's entries go one by one.
The hot channel returns the newest ``RETURNED`` live entries.

Entries come from ``working add`` (source ``add``) and, as in the seed, from node
output: every assistant turn ``log`` records enters its group's list through the same
filter (source ``log``, :func:`offered`), on both back ends, right after the turns'
commit.

Entry filter (:func:`screen`), in this order; a dropped entry is reported, not stored:

1. ``empty``: nothing but whitespace.
2. ``acknowledgement``: the whole entry, case-folded and without punctuation, emoji or
   spaces, is one of :data:`ACKNOWLEDGEMENTS` ("ok", "thanks", "好的", "收到", …).
3. ``too_short``: less than ``MIN_WEIGHT`` (8) characters of substance, counting a CJK
   character as 2 and a letter or digit as 1 ("ok done", "用 Go" and "改好了" are
   too short; "用 Rust 写" and "数据库好了" are not).
4. ``duplicate``: the same normalised text as a live entry of the group.
5. ``near_duplicate``: keyword Jaccard similarity (the consolidate dedup's keywords:
   words, and character pairs of CJK) of at least ``NEAR_DUPLICATE`` (0.8) with a
   live entry of the group.

The same SQL runs on both back ends (:class:`soloqueue_mem.db.adapter.Db`). On
PostgreSQL a push holds a transaction-scoped advisory lock on the group, so two hosts
pushing the same entry at once store it once and the trim counts every entry.
"""

from __future__ import annotations

import unicodedata
from datetime import datetime, timedelta

from soloqueue_mem.clock import iso
from soloqueue_mem.db.adapter import Db
from soloqueue_mem.db.ids import put_back_row
from soloqueue_mem.errors import BadInput
from soloqueue_mem.memory.model import content_key, normalize
from soloqueue_mem.text.cjk import has_cjk
from soloqueue_mem.tuples import NamedTuple

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import Any

    from soloqueue_mem.db.adapter import Connection

TTL = timedelta(hours=24)
CAP = 50
RETURNED = 10
MIN_WEIGHT = 8
NEAR_DUPLICATE = 0.8
MAX_CHARS = 16_000
ACKNOWLEDGEMENTS = frozenset(
    {
        "ok", "okay", "okk", "k", "kk", "yes", "yep", "yeah", "no", "nope", "sure",
        "thanks", "thank you", "thankyou", "thx", "ty", "got it", "gotit", "done",
        "noted", "cool", "great", "nice", "fine", "alright", "right", "understood",
        "roger", "lgtm", "sounds good", "will do",
        "好", "好的", "好滴", "好嘞", "好了", "嗯", "嗯嗯", "哦", "噢", "行", "可以",
        "收到", "谢谢", "多谢", "谢了", "感谢", "明白", "明白了", "知道了", "了解",
        "没问题", "是的", "对", "对的", "是", "ok了", "好的谢谢", "太好了", "辛苦了",
    }
)  # fmt: skip


class Entry(NamedTuple):
    id: int
    group: str
    content: str
    source: str  # "add" (working add) or "log" (an assistant turn logged with a group)
    created_at: str
    expires_at: str


class Added(NamedTuple):
    entry: Entry | None  # None when the filter dropped it
    dropped: str | None  # the filter rule that dropped it


_COLUMNS = "id, group_id, content, source, created_at, expires_at"


def _squeezed(text: str) -> str:
    """Case-folded letters, digits and CJK only, single-spaced (for acknowledgements)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    kept = "".join(c if c.isalnum() else " " for c in folded)
    return " ".join(kept.split())


def weight(text: str) -> int:
    """Characters of substance: a CJK character counts 2, a letter or digit 1."""
    return sum(2 if has_cjk(c) else 1 for c in text if c.isalnum())


def screen(content: str, live: list[str]) -> str | None:
    """Why ``content`` should not enter working memory beside ``live``; None to keep."""
    if not content.strip():
        return "empty"
    squeezed = _squeezed(content)
    if squeezed in ACKNOWLEDGEMENTS or squeezed.replace(" ", "") in ACKNOWLEDGEMENTS:
        return "acknowledgement"
    if weight(content) < MIN_WEIGHT:
        return "too_short"
    key = normalize(content)
    if any(normalize(other) == key for other in live):
        return "duplicate"
    from soloqueue_mem.lifecycle.dedup import jaccard, keywords  # writes only, not recall

    words = keywords(content)
    if any(jaccard(words, keywords(other)) >= NEAR_DUPLICATE for other in live):
        return "near_duplicate"
    return None


def _entry(row: tuple[Any, ...]) -> Entry:
    return Entry(*row)


_LIVE_SQL = f"""
SELECT {_COLUMNS} FROM working_memory
WHERE group_id = ? AND expires_at > ?
ORDER BY id DESC LIMIT ?
"""
_TRIM_SQL = """
DELETE FROM working_memory WHERE group_id = ? AND (
    expires_at <= ? OR id NOT IN (
        SELECT id FROM working_memory WHERE group_id = ? ORDER BY id DESC LIMIT ?
    )
)
"""


def checked(content: str) -> str:
    """``content`` stripped; BadInput when it is too long or holds NUL."""
    content = content.strip()
    if len(content) > MAX_CHARS or "\x00" in content:
        raise BadInput(f"a working-memory entry is at most {MAX_CHARS} characters, without NUL")
    return content


def add(conn: Connection, group: str, content: str, source: str, now: datetime) -> Added:
    """Push ``content`` onto the group's list unless the filter drops it, then trim."""
    content = checked(content)
    stamp, expires = iso(now), iso(now + TTL)
    db = Db(conn)
    with db.write():
        db.lock(f"working/{group}")
        live = latest(conn, group, now, CAP)
        reason = screen(content, [e.content for e in live])
        if reason is not None:
            return Added(None, reason)
        entry_id = db.insert(
            "INSERT INTO working_memory"
            " (group_id, content, content_key, source, created_at, expires_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (group, content, content_key(content), source, stamp, expires),
        )
        db.execute(_TRIM_SQL, (group, stamp, group, CAP))
    return Added(Entry(entry_id, group, content, source, stamp, expires), None)


def offered(outputs: list[tuple[str, str]]) -> dict[str, list[str]]:
    """Of ``(group, content)`` node output, oldest first, what each group's list is
    offered, oldest first. Only a group's newest ``CAP`` entries outlive the trim, so
    only the newest ``CAP`` that pass the rules needing no list are offered (a batch of
    thousands costs as much as one of 50); a turn longer than an entry enters cut, one
    holding NUL not at all: logging never fails here."""
    by_group: dict[str, list[str]] = {}
    for group, content in reversed(outputs):
        kept = by_group.setdefault(group, [])
        content = content.strip()[:MAX_CHARS]
        if len(kept) < CAP and "\x00" not in content and screen(content, []) is None:
            kept.append(content)
    return {group: newest[::-1] for group, newest in by_group.items()}


def still_offered(outputs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``outputs`` cut to the entries :func:`offered` takes from them: offered these and
    any later outputs, a group gets what it would have got from all of them, so a batch
    of any length holds at most ``CAP`` outputs per group plus those since the cut."""
    return [(group, content) for group, kept in offered(outputs).items() for content in kept]


def feed(conn: Connection, outputs: list[tuple[str, str]], now: datetime) -> None:
    """Logged node output onto each group's list through the filter (source ``log``)."""
    for group, contents in offered(outputs).items():
        for content in contents:
            add(conn, group, content, "log", now)


def latest(conn: Connection, group: str, now: datetime, limit: int = RETURNED) -> list[Entry]:
    """The group's newest live entries, newest first (LRANGE 0 limit-1)."""
    rows = Db(conn).fetchall(_LIVE_SQL, (group, iso(now), limit))
    return [_entry(row) for row in rows]


def clear(conn: Connection, group: str) -> int:
    """Drop the group's list (DEL); the number of entries removed."""
    db = Db(conn)
    with db.write():
        removed: int = db.execute(
            "DELETE FROM working_memory WHERE group_id = ?", (group,)
        ).rowcount
    return removed


def expire(conn: Connection, now: datetime) -> int:
    """Delete every group's expired entries (a group's own ``add`` trims only its
    list, so a group that went quiet would keep its last day's on disk)."""
    db = Db(conn)
    with db.write():
        removed: int = db.execute(
            "DELETE FROM working_memory WHERE expires_at <= ?", (iso(now),)
        ).rowcount
    return removed


def every(conn: Connection, group: str | None = None) -> list[Entry]:
    """Every entry (of ``group`` when given), live or not, oldest first (export)."""
    where, params = ("group_id = ?", (group,)) if group is not None else ("1 = 1", ())
    rows = Db(conn).fetchall(
        f"SELECT {_COLUMNS} FROM working_memory WHERE {where} ORDER BY id",  # noqa: S608
        params,
    )
    return [_entry(row) for row in rows]


def put_back(conn: Connection, entry: Entry) -> str:
    """Put back an exported entry under its id: ``added``, ``existing`` or ``conflict``
    (no later push takes its id)."""
    db = Db(conn)

    def insert() -> None:
        db.execute(
            "INSERT INTO working_memory"
            " (id, group_id, content, content_key, source, created_at, expires_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (*entry[:3], content_key(entry.content), *entry[3:]),
        )
        db.claim_id("working_memory", "id", entry.id)

    return put_back_row(
        db,
        f"SELECT {_COLUMNS} FROM working_memory WHERE id = ?",  # noqa: S608
        (entry.id,),
        lambda held: _entry(held) == entry,
        insert,
    )
