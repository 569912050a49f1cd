"""The dump format of ``export``/``import``: versioned JSONL, one record per line.

The first line is the header ``{"kind": "header", "format": "soloqueue-mem-dump",
"version": 3, ...}``; every other line is a record whose ``kind`` says what it holds
(``RECORD_TYPES``), and the last one, since version 3, the end record
(:func:`end_record`): how many records of each kind came before it and the sha256 of
every line before it, so a dump cut short (even at a line boundary) is told from a
whole one. A record's other keys are the fields of the row it stands for, as
the store's own values (:class:`~soloqueue_mem.memory.model.Memory`, …), so the dump
is readable without this code. :func:`conform` turns a decoded record back into such a
value and refuses anything of the wrong shape (a dump is untrusted input).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterable, Iterator
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, get_type_hints

from soloqueue_mem.errors import BadInput, InvalidId
from soloqueue_mem.home import validate_id

if TYPE_CHECKING:
    from soloqueue_mem.sessions.events import SessionKey

FORMAT = "soloqueue-mem-dump"
VERSION = 3  # 3 added the end record, 2 the embedding and graph records
END_SINCE = 3  # the first version whose dumps must end with their end record
RECORD_TYPES = (
    "blob",
    "artifact",
    "session",
    "turn",
    "memory",
    "episode",
    "scratchpad",
    "working",
    "attachment",
    "kv",
    "session_state",
    "identity",
    "embedding",
    "embedded_item",
    "graph_node",
    "graph_focus",
    "graph_task",
)
ID_FIELDS = ("group", "agent", "session")  # they become path components: checked as ids

T = TypeVar("T", bound=NamedTuple)


def header(group: str | None, agent: str | None, with_blobs: bool) -> dict[str, Any]:
    return {
        "kind": "header",
        "format": FORMAT,
        "version": VERSION,
        "scope": {"group": group, "agent": agent},
        "with_blobs": with_blobs,
    }


def end_record(counts: dict[str, int], sha256: str) -> dict[str, Any]:
    """The dump's last line: the number of records (header and end left out), by kind,
    and the sha256 of the bytes of every line before it."""
    return {"kind": "end", "records": sum(counts.values()), "counts": dict(sorted(counts.items())),
            "sha256": sha256}  # fmt: skip


def check_header(record: Any) -> int:
    """The version of ``record``, a dump header; BadInput unless this code can read it."""
    if not isinstance(record, dict) or record.get("kind") != "header":
        raise BadInput("not a soloqueue-mem dump: the first line is not its header", 1)
    if record.get("format") != FORMAT:
        raise BadInput(f"not a soloqueue-mem dump: format {record.get('format')!r}", 1)
    version = record.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise BadInput(f"dump version {version!r} is not a version", 1)
    if version > VERSION:
        raise BadInput(
            f"dump version {version} is newer than this soloqueue-mem reads ({VERSION}); "
            "upgrade soloqueue-mem",
            1,
        )
    return version


def record(kind: str, value: NamedTuple | dict[str, Any]) -> dict[str, Any]:
    """The dump record of a store value."""
    fields = value._asdict() if hasattr(value, "_asdict") else value
    return {"kind": kind, **fields}


def session_records(
    key: SessionKey,
    ended_at: str | None,
    turns: Iterable[tuple[dict[str, Any], tuple[bool, str | None]]],
) -> Iterator[dict[str, Any]]:
    """A session's dump records: the session, then each of ``turns`` (a JSONL record
    and its extraction state: whether it was extracted, into which episode)."""
    yield record("session", {**key._asdict(), "ended_at": ended_at})
    for turn, (extracted, episode) in turns:
        yield record(
            "turn",
            {**key._asdict(), "extracted": extracted, "episode_id": episode, "record": turn},
        )


def conform(cls: type[T], data: dict[str, Any]) -> T:
    """``data`` (a record without its ``kind``) as a ``cls``, every field checked
    against the annotation; BadInput naming the first field that does not fit."""
    hints = _hints(cls)
    missing = [name for name in cls._fields if name not in data and name not in cls._field_defaults]
    extra = [name for name in data if name not in hints]
    if missing or extra:
        raise BadInput(f"fields missing {missing} or unknown {extra}")
    for name, value in data.items():
        if not _fits(value, hints[name]):
            raise BadInput(f"field {name!r} has the wrong type ({type(value).__name__})")
        if name in ID_FIELDS and value:
            try:
                validate_id(name, value)
            except InvalidId as exc:
                raise BadInput(str(exc)) from None
    return cls._make(data.get(name, cls._field_defaults.get(name)) for name in cls._fields)


@cache
def _hints(cls: type) -> dict[str, Any]:
    """The fields' annotations, resolved. ``Any`` is supplied: the modules on recall's
    path import it for type checkers only (``typing`` stays out of a recall)."""
    return get_type_hints(cls, localns={"Any": Any})


def _fits(value: Any, hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, arm) for arm in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is Any:
        return True
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if origin in (list, tuple):
        (item, *_) = typing.get_args(hint) or (Any,)
        return isinstance(value, list) and all(_fits(v, item) for v in value)
    if origin is dict or hint is dict:
        return isinstance(value, dict)
    return isinstance(value, hint)
