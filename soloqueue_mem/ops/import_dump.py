"""``import dump``: put a dump's records back into a store, idempotently.

Two passes over the dump. The first checks everything — the header and its version,
every line's JSON and the shape of every record, every inline blob against its
sha256 — and writes nothing, so bad input is refused whole (exit 65, the line named).
The second puts each record back through the function of the module that owns its
table, which answers ``added``, ``existing`` (the same thing is already there:
importing twice changes nothing) or ``conflict`` (something else holds its id or key:
left as it is and reported, never overwritten). Ids are kept, so references between
records (a turn's offloaded artifact, an attachment's artifact, a memory's
``superseded_by``, a graph link's nodes) stay true. With ``redact`` on, the text of
each record is redacted first (:mod:`.import_redact`).

On the PostgreSQL back end (``Targets.database``) the rows of memory.db's and state.db's
tables go to the database, through the same functions (memories, episodes and
attachments with its full-text indexes), sessions through
:mod:`soloqueue_mem.storage.postgres.dump`'s; the graph memory too
(:mod:`soloqueue_mem.storage.postgres.graph`); artifacts and identity files to this
host's disk, where they live there too.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack
from typing import IO, TYPE_CHECKING, Any, NamedTuple

from soloqueue_mem import jsonio
from soloqueue_mem.artifacts import store as artifact_store
from soloqueue_mem.artifacts.catalog import Artifact
from soloqueue_mem.bounded_io import read_capped_line
from soloqueue_mem.config import Config
from soloqueue_mem.context import identity
from soloqueue_mem.db.connect import write_tx
from soloqueue_mem.errors import BadInput
from soloqueue_mem.graph import dump as graph_dump
from soloqueue_mem.graph.dump import FocusRecord, NodeRecord, TaskRecord
from soloqueue_mem.home import Home
from soloqueue_mem.memory import attachments, episodes, scratchpad, store, working
from soloqueue_mem.memory.attachments import Attachment
from soloqueue_mem.memory.episodes import Episode
from soloqueue_mem.memory.fulltexts import FTS5, FullTexts
from soloqueue_mem.memory.model import Memory
from soloqueue_mem.memory.working import Entry
from soloqueue_mem.ops.dump_format import END_SINCE, RECORD_TYPES, check_header, conform, end_record
from soloqueue_mem.ops.dump_values import check_values
from soloqueue_mem.ops.import_redact import redacted, rehashed_path
from soloqueue_mem.redact import Redactor, redacted_bytes, redactor
from soloqueue_mem.semantic import dump as vectors
from soloqueue_mem.semantic.index import KINDS as EMBEDDED_KINDS
from soloqueue_mem.sessions import turns
from soloqueue_mem.sessions.events import SessionKey
from soloqueue_mem.sessions.writer import put_back_session
from soloqueue_mem.state import values

if TYPE_CHECKING:
    from soloqueue_mem.graph.db import GraphDb


class Blob(NamedTuple):
    sha256: str
    size: int
    data: str  # base64


class SessionRecord(NamedTuple):
    group: str
    agent: str
    session: str
    ended_at: str | None


class TurnRecord(NamedTuple):
    group: str
    agent: str
    session: str
    extracted: bool
    episode_id: str | None
    record: dict[str, Any]


class PadRecord(NamedTuple):
    group: str
    agent: str
    content: str
    updated_at: str | None


class KvRecord(NamedTuple):
    group: str
    agent: str
    key: str
    value: Any
    updated_at: str


class IdentityRecord(NamedTuple):
    name: str
    content: str


class StateRecord(NamedTuple):
    group: str
    agent: str
    session: str
    key: str
    value: Any
    updated_at: str


class EmbeddingRecord(NamedTuple):
    model: str
    content_hash: str
    dim: int
    vector: str  # base64 of dim little-endian float32
    created_at: str


class EmbeddedItemRecord(NamedTuple):
    model: str
    item_kind: str  # memory, episode or turn
    item_id: str | None  # a memory's or an episode's id
    group: str
    agent: str
    session: str | None  # a turn's session and index
    turn_index: int | None
    content_hash: str


SHAPES: dict[str, type] = {
    "blob": Blob,
    "artifact": Artifact,
    "session": SessionRecord,
    "turn": TurnRecord,
    "memory": Memory,
    "episode": Episode,
    "scratchpad": PadRecord,
    "working": Entry,
    "attachment": Attachment,
    "kv": KvRecord,
    "session_state": StateRecord,
    "identity": IdentityRecord,
    "embedding": EmbeddingRecord,
    "embedded_item": EmbeddedItemRecord,
    "graph_node": NodeRecord,
    "graph_focus": FocusRecord,
    "graph_task": TaskRecord,
}
GRAPH_KINDS = ("graph_node", "graph_focus", "graph_task")
assert tuple(SHAPES) == RECORD_TYPES


class Targets(NamedTuple):
    home: Home
    config: Config
    memory: sqlite3.Connection | None  # None on PostgreSQL
    artifacts: sqlite3.Connection
    state: sqlite3.Connection | None  # None on PostgreSQL
    graph: GraphDb | None = None  # opened only for a dump with graph records
    database: Any = None  # a psycopg connection: the PostgreSQL back end


class Session(NamedTuple):
    """A session's records, gathered until the dump moves on to another."""

    line: int
    head: SessionRecord
    turns: list[TurnRecord]


class Ending:
    """What the end record must say of the lines before it, gathered as they are
    read: their sha256 and the number of records of each kind. ``complete`` is True
    once an end record matched, None for a dump older than end records without one."""

    def __init__(self) -> None:
        self.digest = hashlib.sha256()
        self.counts: dict[str, int] = {}
        self.line: int | None = None  # where the end record was
        self.complete: bool | None = None

    def add(self, raw: bytes, kind: str | None, number: int) -> None:
        if self.line is not None:
            raise BadInput(f"a line after the end record (line {self.line})", number)
        self.digest.update(raw)
        if kind is not None:
            self.counts[kind] = self.counts.get(kind, 0) + 1

    def close(self, obj: dict[str, Any], number: int) -> None:
        """BadInput unless the end record ``obj`` matches what was read before it."""
        if self.line is not None:
            raise BadInput(f"a second end record (the first is on line {self.line})", number)
        expected = end_record(self.counts, self.digest.hexdigest())
        if obj != expected:
            raise BadInput("the dump does not match its end record (counts or sha256): it "
                           "was changed or damaged after export", number)  # fmt: skip
        self.line, self.complete = number, True

    def finish(self, version: int, last: int) -> None:
        """BadInput for a dump that should end with its end record and does not."""
        if self.line is None and version >= END_SINCE:
            raise BadInput(f"the dump ends at line {last} without its end record: it was cut "
                           "short (export it again, or copy the whole file)")  # fmt: skip


def dump_lines(stream: IO[bytes], cap: int) -> Iterator[bytes]:
    """The lines of the dump ``stream`` from its start, none longer than ``cap``
    (``max_dump_line_bytes``): an endless line is refused, not held in memory."""
    stream.seek(0)
    number = 1
    while line := read_capped_line(stream, cap, "max_dump_line_bytes", number):
        yield line
        number += 1


def parsed(lines: Iterable[bytes], ending: Ending | None = None) -> Iterator[tuple[int, str, Any]]:
    """``(line number, type, value)`` of every record after the header; BadInput (with
    the line) for anything that is not a well-formed record of a readable dump, whose
    values the store can hold (:func:`check_values`), ending as its version says."""
    ending = Ending() if ending is None else ending
    number = version = 0
    for number, raw in enumerate(lines, 1):
        if number == 1:
            version = check_header(jsonio.loads(raw, 1))
            ending.add(raw, None, number)
            continue
        if not raw.strip():
            ending.add(raw, None, number)
            continue
        obj = jsonio.loads(raw, number)
        kind = obj.get("kind") if isinstance(obj, dict) else None
        if kind == "end":
            ending.close(obj, number)
            continue
        if kind not in SHAPES:
            raise BadInput(f"unknown record type {kind!r}", number)
        try:
            value: Any = conform(SHAPES[kind], {k: v for k, v in obj.items() if k != "kind"})
            if isinstance(value, Blob):
                _blob_bytes(value)
            if isinstance(value, IdentityRecord) and value.name not in identity.AUTHORED:
                raise BadInput(f"not an identity source: {value.name!r}")
            _check_more(value)
            check_values(kind, value)
        except BadInput as exc:
            raise BadInput(f"{kind}: {exc.reason}", number) from None
        ending.add(raw, kind, number)
        yield number, kind, value
    if number == 0:
        raise BadInput("the dump is empty (no header)")
    ending.finish(version, number)


def _check_more(value: Any) -> None:
    """BadInput for what the field types do not say about the newer records."""
    if isinstance(value, EmbeddingRecord):
        _vector_bytes(value)
    elif isinstance(value, EmbeddedItemRecord):
        turn = value.item_kind == "turn"
        named = (value.session is not None, value.turn_index is not None, value.item_id is None)
        if value.item_kind not in EMBEDDED_KINDS or named != (turn, turn, turn):
            raise BadInput("a turn is named by session and turn_index, anything else by item_id")
    elif isinstance(value, NodeRecord):
        reason = graph_dump.check_links(value)
        if reason or value.id < 1 or value.scan_count < 0:
            raise BadInput(reason or "a node id is a positive number, its scan count not negative")
    elif isinstance(value, FocusRecord):
        if not value.node_ids or any(n < 1 for n in value.node_ids):
            raise BadInput("a focus list names one or more node ids")
    elif isinstance(value, TaskRecord) and (value.id < 1 or value.attempts < 0):
        raise BadInput("a task id is a positive number, its attempts not negative")


def _vector_bytes(value: EmbeddingRecord) -> bytes:
    try:
        data = base64.b64decode(value.vector, validate=True)
    except (binascii.Error, ValueError):
        raise BadInput("vector is not base64") from None
    if value.dim < 1 or len(data) != 4 * value.dim:
        raise BadInput(f"vector is not {value.dim} float32 values")
    return data


class Checked(NamedTuple):
    records: int
    kinds: set[str]
    complete: bool | None  # Ending.complete


def check(lines: Iterable[bytes]) -> Checked:
    """Read the whole dump without writing: BadInput if anything in it is bad."""
    count = 0
    kinds: set[str] = set()
    ending = Ending()
    current: SessionRecord | None = None
    last = -1  # the current session's last turn index
    for number, kind, value in parsed(lines, ending):
        count += 1
        kinds.add(kind)
        if kind == "session":
            current, last = value, -1
        elif kind == "turn":
            if current is None or value[:3] != current[:3]:
                raise BadInput("a turn record outside its session", number)
            index = value.record.get("turn_index")
            if not isinstance(index, int) or isinstance(index, bool) or index <= last:
                raise BadInput("turn indexes must be whole numbers, increasing", number)
            last = index
    return Checked(count, kinds, ending.complete)


def import_dump(
    lines: Callable[[], Iterable[bytes]], open_targets: Callable[[bool], Targets]
) -> dict[str, Any]:
    """Check the dump, then (only then: bad input creates nothing) open the store —
    graph.db too when the dump has graph records — and put the records back; the
    report (see the README)."""
    checked = check(lines())
    targets = open_targets(any(kind in checked.kinds for kind in GRAPH_KINDS))
    report: dict[str, Any] = {
        "records": checked.records, "added": {}, "existing": {}, "conflicts": [],
        "redacted": {}, "skipped": {}, "complete": checked.complete,
    }  # fmt: skip
    batch = _Batch()
    try:
        _put_back_all(targets, parsed(lines()), _Report(report), batch)
    except BaseException as exc:
        batch.close(exc)
        raise
    batch.close()
    return report


class _Report:
    """The report being filled, and what later records must know of earlier ones:
    which items were conflicts or had their text redacted (their vectors are not put
    back: they are of another text)."""

    def __init__(self, report: dict[str, Any]) -> None:
        self.report = report
        self.conflicted: set[tuple[str, str]] = set()  # (kind, key) of such items
        self.redacted: set[tuple[str, str]] = set()
        self.new_hashes: dict[str, tuple[str, int]] = {}  # of redacted blobs

    def count(self, kind: str, line: int, outcome: str, key: str) -> None:
        if outcome in ("added", "existing", "redacted"):
            self.report[outcome][kind] = self.report[outcome].get(kind, 0) + 1
        else:
            self.conflicted.add((kind, key))
            self.report["conflicts"].append(
                {"line": line, "kind": kind, "key": key, "reason": outcome}
            )

    def was_redacted(self, kind: str, key: str) -> None:
        self.redacted.add((kind, key))
        self.report["redacted"][kind] = self.report["redacted"].get(kind, 0) + 1

    def redacted_blob(self, sha256: str, data: bytes, redact: Redactor) -> bytes:
        """A text blob's bytes redacted; its new hash and size remembered for the
        rows that name it (binary blobs stay as they are)."""
        clean = redacted_bytes(data, redact)
        if clean != data:
            self.new_hashes[sha256] = (hashlib.sha256(clean).hexdigest(), len(clean))
            self.was_redacted("blob", sha256)
        return clean

    def rehashed(self, kind: str, value: Any) -> Any:
        """An artifact or attachment row naming a redacted blob, naming the new one
        (same id, same day folder)."""
        digest, size = self.new_hashes.get(value.content_hash, (None, 0))
        if digest is None:
            return value
        if kind == "artifact":
            return value._replace(content_hash=digest, path=rehashed_path(value.path, digest),
                                  size=size)  # fmt: skip
        path = rehashed_path(value.local_path, digest)
        return value._replace(content_hash=digest, local_path=path, file_size=size)


def _put_back_all(
    targets: Targets, records: Iterable[tuple[int, str, Any]], report: _Report, batch: _Batch
) -> None:
    redact = redactor(targets.config)
    blob: tuple[str, bytes] | None = None
    session: Session | None = None
    for number, kind, value in records:
        if kind != "turn" and session is not None:
            _end_session(targets, session, report)
            session = None
        if redact is not None:
            value = _redacted(kind, value, redact, report)
        if kind == "turn":
            assert session is not None
            session.turns.append(value)
            continue
        database = _ROW_DATABASES.get(kind)
        if database is None:
            batch.close()  # sessions, artifacts and files commit on their own
        else:
            batch.join(_row_target(targets, database))
        if kind == "session":
            session = Session(number, value, [])
        elif kind == "blob":
            blob = (value.sha256, _blob_bytes(value))
            if redact is not None:  # under its new hash, as the rows name it now
                clean = report.redacted_blob(value.sha256, blob[1], redact)
                blob = (report.new_hashes.get(value.sha256, (value.sha256,))[0], clean)
        elif kind == "artifact":
            data = blob[1] if blob is not None and blob[0] == value.content_hash else None
            outcome = artifact_store.put_back(targets.home, targets.artifacts, value, data)
            report.count(kind, number, outcome, str(value.id))
        elif kind == "embedded_item":
            report.count(kind, number, _put_back_link(targets, value, report), _key(value))
        else:
            report.count(kind, number, _put_back(targets, kind, value), _key(value))
    if session is not None:
        batch.close()
        _end_session(targets, session, report)


def _redacted(kind: str, value: Any, redact: Redactor, report: _Report) -> Any:
    clean = redacted(kind, value, redact)
    if kind in ("artifact", "attachment"):
        clean = report.rehashed(kind, clean)
    if clean != value:
        key = _key(clean)
        if kind == "turn":
            key = f"{_key(SessionKey(*value[:3]))}/{value.record['turn_index']}"
        report.was_redacted(kind, key)
    return clean


def _end_session(targets: Targets, session: Session, report: _Report) -> None:
    outcome = _session(targets, session)
    report.count("session", session.line, outcome, _key(session.head))


BATCH = 500  # rows put back per transaction: few commits, and the write lock held briefly
_ROW_DATABASES = {
    "memory": "memory",
    "episode": "memory",
    "scratchpad": "memory",
    "working": "memory",
    "attachment": "memory",
    "embedding": "memory",
    "embedded_item": "memory",
    "kv": "state",
    "session_state": "state",
    "graph_node": "graph",
    "graph_focus": "graph",
    "graph_task": "graph",
}


def _row_target(targets: Targets, database: str) -> Any:
    """The connection a kind's rows go to (the database's instead of memory.db's and
    state.db's)."""
    if database in ("memory", "state") and targets.database is not None:
        return targets.database
    return getattr(targets, database)


class _Batch:
    """Consecutive row put-backs of one database, ``BATCH`` to a transaction (each
    put-back's own ``write_tx`` becomes a savepoint inside it)."""

    def __init__(self) -> None:
        self.stack: ExitStack | None = None
        self.conn: Any = None
        self.rows = 0

    def join(self, conn: Any) -> None:
        """``conn``: SQLite's, or the PostgreSQL back end's (psycopg)."""
        if self.conn is not conn or self.rows >= BATCH:
            self.close()
            self.stack = ExitStack()
            sqlite = isinstance(conn, sqlite3.Connection)
            self.stack.enter_context(write_tx(conn) if sqlite else conn.transaction())
            self.conn, self.rows = conn, 0
        self.rows += 1

    def close(self, error: BaseException | None = None) -> None:
        """Commit the open transaction (roll it back when ``error`` ended the import)."""
        stack, self.stack, self.conn = self.stack, None, None
        if stack is not None:
            if error is None:
                stack.close()
            else:
                stack.__exit__(type(error), error, error.__traceback__)


def _put_back(targets: Targets, kind: str, value: Any) -> str:
    if kind == "identity":
        return identity.put_back(targets.home.root, value.name, value.content)
    if kind in GRAPH_KINDS:
        assert targets.graph is not None
        if kind == "graph_node":
            return graph_dump.put_back_node(targets.graph, value)
        if kind == "graph_focus":
            return graph_dump.put_back_focus(targets.graph, value)
        return graph_dump.put_back_task(targets.graph, value)
    put_back = ROW_PUT_BACKS.get(kind)
    if put_back is not None:
        return put_back(_row_target(targets, _ROW_DATABASES[kind]), value)
    texts = _full_texts(targets)
    row_put_back, index = {
        "memory": (store.put_back, texts.memories),
        "episode": (episodes.put_back, texts.episodes),
        "attachment": (attachments.put_back, texts.attachments),
    }[kind]
    return row_put_back(_row_target(targets, "memory"), value, index)  # type: ignore[operator]


def _full_texts(targets: Targets) -> FullTexts:
    """The full-text indexes of the back end imported into."""
    if targets.database is None:
        return FTS5
    from soloqueue_mem.storage.postgres.episodes import INDEXES

    return INDEXES


def _put_back_pad(conn: Any, pad: PadRecord) -> str:
    return scratchpad.put_back(conn, scratchpad.from_content(*pad))


def _put_back_kv(conn: Any, entry: KvRecord) -> str:
    value = values.Entry((entry.group, entry.agent), entry.key, entry.value, entry.updated_at)
    return values.put_back(conn, "kv_store", value)


def _put_back_state(conn: Any, entry: StateRecord) -> str:
    scope = (entry.group, entry.agent, entry.session)
    return values.put_back(conn, "session_state", values.Entry(scope, entry.key, entry.value,
                                                               entry.updated_at))  # fmt: skip


def _put_back_vector(conn: Any, value: EmbeddingRecord) -> str:
    row = vectors.Cached(
        value.model, value.content_hash, value.dim, _vector_bytes(value), value.created_at
    )
    return vectors.put_back_cached(conn, row)


# the kinds whose rows both back ends hold alike: put back on either one's connection
ROW_PUT_BACKS: dict[str, Callable[[Any, Any], str]] = {
    "scratchpad": _put_back_pad,
    "working": working.put_back,
    "kv": _put_back_kv,
    "session_state": _put_back_state,
    "embedding": _put_back_vector,
}


def _put_back_link(targets: Targets, value: EmbeddedItemRecord, report: _Report) -> str:
    """An item's link to its vector, unless the item here is another one (its record
    was a conflict: ``item-conflict``) or of another text (its record was redacted:
    ``redacted``, the vector being of the secret's text)."""
    if value.item_kind == "turn":
        key = SessionKey(value.group, value.agent, str(value.session))
        item = ("session", _key(key))
        text = ("turn", f"{item[1]}/{value.turn_index}")
    else:
        item = text = (value.item_kind, str(value.item_id))
    if item in report.conflicted:
        return "item-conflict"
    if text in report.redacted:
        return "redacted"
    conn = _row_target(targets, "memory")
    if value.item_kind == "turn":
        turn = turns.turn_at(conn, key, int(value.turn_index or 0))
        item_id = None if turn is None else str(turn.id)
    else:
        item_id = value.item_id
    if item_id is None:
        return "missing-item"
    row = vectors.Linked(value.model, value.item_kind, item_id, value.group, value.agent,
                         value.content_hash)  # fmt: skip
    if targets.database is not None:
        from soloqueue_mem.storage.postgres.embed import put_back_link

        return put_back_link(targets.database, row)
    return vectors.put_back_linked(conn, row)


def _session(targets: Targets, session: Session) -> str:
    key = SessionKey(*session.head[:3])
    records = [turn.record for turn in session.turns]
    states = [(turn.extracted, turn.episode_id) for turn in session.turns]
    if targets.database is not None:
        from soloqueue_mem.storage.postgres.dump import put_back_session as put_back_pg

        fsync = targets.config.durability == "full"
        return put_back_pg(targets.home, targets.database, key, records, states,
                           session.head.ended_at, fsync)  # fmt: skip
    assert targets.memory is not None
    return put_back_session(targets.home, targets.memory, key, records, targets.config, states,
                            session.head.ended_at)  # fmt: skip


def _blob_bytes(blob: Blob) -> bytes:
    try:
        data = base64.b64decode(blob.data, validate=True)
    except (binascii.Error, ValueError):
        raise BadInput("blob data is not base64") from None
    if len(data) != blob.size or hashlib.sha256(data).hexdigest() != blob.sha256:
        raise BadInput(f"blob {blob.sha256[:12]} does not match its sha256 and size")
    return data


def _key(value: Any) -> str:
    """How a report names a record: its id, or its scope and key."""
    if hasattr(value, "id"):
        return str(value.id)
    if isinstance(value, IdentityRecord):
        return value.name
    if isinstance(value, EmbeddingRecord):
        return f"{value.model}/{value.content_hash}"
    if isinstance(value, EmbeddedItemRecord):
        item = value.item_id or f"{value.group}/{value.agent}/{value.session}/{value.turn_index}"
        return f"{value.model}/{value.item_kind}/{item}"
    names = [name for name in ("group", "agent", "session", "key") if name in value._fields]
    return "/".join(str(getattr(value, name)) for name in names)
