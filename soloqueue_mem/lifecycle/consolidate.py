"""``consolidate``: the nightly lifecycle (seed 001 §7, 003 §7.4; SPEC §3.6).

Ordered, idempotent steps, each in its own short transactions, under a run lock
(``.consolidate_state``; a second run exits 75):

1. ``sessions``: each ended or idle session with unprocessed turns becomes episodes
   and memories (see :mod:`soloqueue_mem.lifecycle.digest`).
2. ``decay``: SHORT_TERM memories the user did not state fade (see
   :mod:`soloqueue_mem.lifecycle.decay`): archived (out of recall, recoverable) or
   demoted to TRANSIENT. Nothing else decays: LONG_TERM lives its 30 days.
3. ``expire``: memories past their expiry are deleted (never before it).
4. ``dedup``: near-duplicate memories cluster in O(n log n); the best of each cluster
   stays and supersedes the rest (history stays readable). With a model, it judges
   each cluster: which is best, which others say the same. It runs after decay and
   expiry, over the memories a second run would see (:func:`retire_then_dedup`).
5. ``embed``: with ``search_backend = hybrid/dense``, memories (promoted chunks
   included) and episodes without a vector are embedded (soloqueue_mem.semantic);
   otherwise, or without the extra, the step reports why it was skipped.
6. ``graph``: the graph queue is run, then one compression slice per agent graph
   within ``graph_time_slice`` (seed 002; see :mod:`soloqueue_mem.graph.worker`).
7. ``identity``: ``identity/MEMORY.md``, ``identity/USER.md`` and the promoted traits,
   ``identity/personas/user_custom.md``, are rewritten; with a model, the traits are
   its persona and it compiles the identity sources that changed.
8. ``daily_summary``: ``daily_summaries/YYYY-MM-DD.md`` records the run.

A second run with nothing new changes nothing. ``dry_run`` runs every step on a
private copy of memory.db and writes nothing to the store.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Callable, Collection
from contextlib import AbstractContextManager
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from soloqueue_mem import lock
from soloqueue_mem.clock import iso
from soloqueue_mem.context.identity import PERSONA
from soloqueue_mem.db.adapter import Db
from soloqueue_mem.home import Home, ensure_private_dir, replace_private_file
from soloqueue_mem.lifecycle import decay, dedup, identity
from soloqueue_mem.lifecycle.digest import DbTarget, digest, writers
from soloqueue_mem.lifecycle.model_extract import ModelExtraction
from soloqueue_mem.lifecycle.vocabulary import Vocabulary
from soloqueue_mem.memory import store
from soloqueue_mem.memory.model import Memory
from soloqueue_mem.sessions import turns
from soloqueue_mem.sessions.events import SessionKey
from soloqueue_mem.sessions.turns import SessionRow

if TYPE_CHECKING:
    from soloqueue_mem.db.adapter import Connection
    from soloqueue_mem.semantic.model import Embedder

BATCH = 500  # rows per write transaction: keeps each one short beside live writers
Progress = Callable[[str, int, int], None]  # step, done, total
Report = dict[str, Any]


class Options(NamedTuple):
    dry_run: bool = False
    idle: timedelta = timedelta(hours=2)  # a session this quiet counts as finished
    wait: bool = False
    embed: bool = False  # search_backend is hybrid or dense: run the embed step
    words: Vocabulary | None = None  # the quick rules' predicates (config aliases added)
    # A session's turns whose memories extract_on_log gave already.
    extracted_on_log: Callable[[SessionKey], Collection[int]] = lambda key: ()
    # The graph step (runs the graph queue and compresses every agent graph).
    graph: Callable[[], dict[str, Any]] | None = None
    language: str = "auto"  # the setting: episode summaries, scratchpad headings
    progress: Progress | None = None  # told each step's advance
    # With a model, queued turns are retried first and every point that has a prompt
    # (:mod:`soloqueue_mem.lifecycle.prompts`) goes through it.
    model: ModelExtraction | None = None


def run(
    home: Home,
    held: Callable[[], AbstractContextManager[DbTarget]],
    now: datetime,
    options: Options,
    embed_pass: Callable[..., Report],
    open_artifacts: Callable[[], sqlite3.Connection | None] | None = None,
    lacking: Callable[[], str | None] = lambda: None,
) -> dict[str, Any]:
    """One consolidation under the run lock; the JSON report (see the README).
    ``held()`` holds the back end for the run and gives the target it digests into. On
    a dry run its writes never reach the store (a private copy of memory.db, or a
    transaction rolled back): every step runs for real there, so the report says
    exactly what a real run would do (later steps see the memories and merges of
    earlier ones). ``embed_pass``: the back end's embedding pass (``dense_index``'s);
    ``open_artifacts`` lets expired attachments take their artifact rows with them;
    ``lacking``: as :func:`embed_step` takes it."""
    started = time.monotonic()
    # a dry run neither calls the model nor queues anything
    model = None if options.dry_run else options.model
    home.ensure()
    state_path = home.root / ".consolidate_state"
    with lock.exclusive(state_path, "consolidate", wait=options.wait, note_holder=False):
        report: dict[str, Any] = {"dry_run": options.dry_run, "now": iso(now)}
        with held() as target:
            conn, index = target.conn, target.index.memories

            def embed(embedder: Embedder, step: Callable[[int, int], None] | None) -> Report:
                return embed_pass(conn, embedder, now, False, progress=step)

            if model is not None:
                report["queue"] = model.retry_queue(
                    lambda draft, group, agent: store.remember(
                        conn, draft, group, agent, now, None, index
                    )
                )
            report |= steps(target, now, options, model, embed, open_artifacts, lacking)
        finish(home, report, started, now, options.dry_run)
    return report


def steps(
    target: DbTarget,
    now: datetime,
    options: Options,
    model: ModelExtraction | None,
    embed: Callable[[Embedder, Callable[[int, int], None] | None], Report],
    open_artifacts: Callable[[], sqlite3.Connection | None] | None,
    lacking: Callable[[], str | None] = lambda: None,
) -> Report:
    """The run's steps on ``target``'s connection, either back end's, and their reports:
    ``embed`` and ``lacking`` as :func:`embed_step` takes them; ``open_artifacts``, this
    host's catalog, whose rows of expired attachments go with them."""
    conn, home, progress = target.conn, target.home, options.progress
    due = turns.sessions_with_unextracted(conn)
    report = {"sessions": digest_due(home, target, due, now, options, model, progress)}
    memories = DbMemories(conn, target.index.memories)
    artifacts = None if options.dry_run or open_artifacts is None else open_artifacts()
    try:  # on a dry run's copy (or in its rolled-back transaction), these write
        report |= retire_then_dedup(
            memories, now, model, lambda: _expire(target, memories, artifacts, now)
        )
    finally:
        if artifacts is not None:
            artifacts.close()
    report["embed"] = embed_step(options, progress, embed, lacking)
    report["graph"] = graph_step(options)
    report["identity"] = publish(home, memories.active(now), now, options.dry_run, model)
    report["model"] = model.report() if model is not None else {"used": False}
    return report


def finish(home: Home, report: dict[str, Any], started: float, now: datetime, dry: bool) -> None:
    """The run's duration, the day's summary and (unless a dry run) the last run time."""
    report["seconds"] = round(time.monotonic() - started, 3)
    report["daily_summary"] = _daily_summary(home, report, now, dry)
    if not dry:
        lock.write_state(home.root / ".consolidate_state", {"last_run_at": iso(now)})


class Memories(Protocol):
    """The memory operations of dedup, decay, expiry and the identity files, each
    write one transaction (memory.db, or a storage back end's database)."""

    def active(self, now: datetime) -> list[Memory]: ...

    def supersede(self, pairs: list[tuple[str, str]], now: datetime) -> None: ...

    def retire(self, archive: list[str], demote: list[str], now: datetime) -> None: ...

    def expire(self, now: datetime, limit: int) -> int:
        """Delete up to ``limit`` memories past their expiry; how many."""
        ...


class DbMemories:
    """:class:`Memories` on either back end's connection (``index``: its full-text index
    of memories), each method one write transaction."""

    def __init__(self, conn: Connection, index: store.FullText = store.FTS5) -> None:
        self.db = Db(conn)
        self.index = index

    def active(self, now: datetime) -> list[Memory]:
        return store.active(self.db.conn, now, self.index)

    def supersede(self, pairs: list[tuple[str, str]], now: datetime) -> None:
        with self.db.write():
            store.supersede(self.db.conn, pairs, now)

    def retire(self, archive: list[str], demote: list[str], now: datetime) -> None:
        with self.db.write():
            store.archive(self.db.conn, archive, now)
            store.demote(self.db.conn, demote, now)

    def expire(self, now: datetime, limit: int) -> int:
        with self.db.write():
            ids = store.expired(self.db.conn, now, limit)
            store.delete(self.db.conn, ids, self.index)
        return len(ids)


def digest_due(
    home: Home,
    target: DbTarget,
    sessions: list[SessionRow],
    now: datetime,
    options: Options,
    model: ModelExtraction | None,
    progress: Progress | None,
) -> dict[str, Any]:
    """Digest each of ``sessions`` (those with unextracted turns) that ended or idled."""
    use = writers(model, options.words)
    idle_before = iso(now - options.idle)
    due = [s for s in sessions if s.ended_at is not None or s.last_turn_at < idle_before]
    episodes = memories = processed = 0
    for number, row in enumerate(due, start=1):
        key = SessionKey(row.group, row.agent, row.session)
        source = "session_end" if row.ended_at else "consolidate"
        done = options.extracted_on_log(key)
        made = digest(target, home, key, now, source, use, done)
        episodes += len(made.episodes)
        memories += len(made.remembered)
        processed += made.turns
        if progress:
            progress("sessions", number, len(due))
    return {"sessions": len(due), "turns": processed, "episodes": episodes, "memories": memories}


def retire_then_dedup(
    memories: Memories,
    now: datetime,
    model: ModelExtraction | None,
    expire: Callable[[], dict[str, Any]],
) -> dict[str, Any]:
    """The ``decay``, ``expire`` and ``dedup`` reports, dedup run last: it then clusters
    exactly the memories a second run would. Run before them, the memories they take
    away would still decide which keywords are too common to sign with and which pairs
    share a bucket, and the second run would find pairs the first one missed."""
    decayed = decay_step(memories, now)
    expired = expire()
    return {"dedup": dedup_step(memories, now, model), "decay": decayed, "expire": expired}


def dedup_step(
    memories: Memories, now: datetime, model: ModelExtraction | None = None
) -> dict[str, Any]:
    started = time.monotonic()
    items = [
        dedup.Item(
            m.id,
            (m.group, m.agent, m.type),
            m.content,
            (m.confidence, m.importance, m.access_count, m.updated_at),
        )
        for m in memories.active(now)
    ]
    judge = None if model is None else _judge(model)
    clusters, pairs = dedup.settled(items, judge, same_meaning())
    for start in range(0, len(pairs), BATCH):
        memories.supersede(pairs[start : start + BATCH], now)
    seconds = round(time.monotonic() - started, 3)
    return {
        "memories": len(items),
        "clusters": clusters,
        "superseded": len(pairs),
        "seconds": seconds,
    }


def same_meaning() -> dedup.SameMeaning | None:
    """With the semantic extra installed: whether two texts say the same thing, by the
    cosine of their embeddings (loaded only when dedup has a pair to ask about). Each
    text is embedded once per run: dedup's later passes ask again about the pairs an
    earlier one found apart."""
    from soloqueue_mem.semantic.model import Unavailable, load, unavailable

    if unavailable() is not None:
        return None
    vectors: dict[str, Any] = {}

    def same(pairs: list[tuple[str, str]]) -> list[bool]:
        try:
            embedder = load()
        except Unavailable:
            return [False] * len(pairs)
        texts = sorted({text for pair in pairs for text in pair} - vectors.keys())
        if texts:
            vectors.update(zip(texts, embedder.passages(texts), strict=True))
        return [float(vectors[a] @ vectors[b]) >= dedup.SAME_MEANING for a, b in pairs]

    return same


def _judge(model: ModelExtraction) -> dedup.Judge:
    return lambda group: model.judge_cluster([item.content for item in group])


def decay_step(memories: Memories, now: datetime) -> dict[str, Any]:
    archive, demote = decay.plan(memories.active(now), now)
    for start in range(0, max(len(archive), len(demote)), BATCH):
        memories.retire(archive[start : start + BATCH], demote[start : start + BATCH], now)
    return {"archived": len(archive), "demoted": len(demote)}


def expire_step(memories: Memories, now: datetime) -> int:
    """Delete every expired memory, ``BATCH`` per transaction; how many."""
    deleted = 0
    while True:
        done = memories.expire(now, BATCH)
        deleted += done
        if done < BATCH:
            return deleted


def _expire(
    target: DbTarget, memories: DbMemories, artifacts: sqlite3.Connection | None, now: datetime
) -> dict[str, Any]:
    """Expired memories, expired attachments (with their artifact rows) and expired
    working-memory entries go."""
    from soloqueue_mem.memory import attach, working

    deleted = expire_step(memories, now)
    expired = attach.expire(attach.Rows(target.conn, target.index.attachments), artifacts, now)
    return {"deleted": deleted, "attachments": expired, "working": working.expire(target.conn, now)}


def embed_step(
    options: Options,
    progress: Progress | None,
    embed: Callable[[Embedder, Callable[[int, int], None] | None], Report],
    lacking: Callable[[], str | None] = lambda: None,
) -> Report:
    """Vectors for what lacks one, through the back end's ``embed``; never fails the
    run: a missing model, or what the store lacks (``lacking``), is a reason."""
    if not options.embed:
        return {"skipped": "search_backend is not hybrid or dense"}
    if options.dry_run:
        return {"skipped": "dry run"}
    reason = lacking()
    if reason is not None:
        return {"skipped": reason}
    from soloqueue_mem.semantic.model import Unavailable, load

    try:
        embedder = load()
    except Unavailable as exc:
        return {"skipped": str(exc)}
    step = (lambda done, total: progress("embed", done, total)) if progress else None
    return embed(embedder, step)


def graph_step(options: Options) -> dict[str, Any]:
    if options.dry_run:
        return {"skipped": "dry run"}
    if options.graph is None:
        return {"skipped": "no graph step"}
    return options.graph()


def republish_identity(home: Home, active: Callable[[], list[Memory]], now: datetime) -> bool:
    """After ``memory forget``: whether identity/ was rewritten from ``active()`` (the
    active memories), which it is when the store publishes it: the forgotten text must
    not live on in the files an agent reads."""
    if not (home.root / "identity").is_dir():
        return False
    publish(home, active(), now)
    return True


def publish(
    home: Home,
    memories: list[Memory],
    now: datetime,
    dry_run: bool = False,
    model: ModelExtraction | None = None,
) -> dict[str, Any]:
    """The identity files from ``memories`` (the active ones). With a model, the
    promoted traits are its persona, and the identity sources that changed are compiled
    by it (seed 003 §7.4 steps 6 and 7)."""
    folder = home.root / "identity"
    files = {
        "MEMORY.md": identity.memory_md(memories, now),
        "USER.md": identity.user_md(memories, now),
        PERSONA: _persona(folder / PERSONA, identity.traits(memories, now), model),
    }
    if not dry_run:
        for name, text in files.items():
            path = folder / name
            if _read_text(path) != text:  # unchanged: its compile stays (no model call)
                ensure_private_dir(home.root, path.parent)
                replace_private_file(path, text.encode("utf-8"))
        if model is not None:
            from soloqueue_mem.context.identity import compile_identity

            compile_identity(home.root, now, model=model.compile_identity)
    return {name: {"chars": len(text)} for name, text in files.items()}


def _persona(path: Path, traits: list[str], model: ModelExtraction | None) -> str:
    """user_custom.md for ``traits``: as it is when they have not changed (the model
    is not asked again), else the model's persona or the rules' list. Its first line
    records which traits it was written from."""
    mark = f"<!-- traits {hashlib.sha256(json.dumps(traits).encode()).hexdigest()[:16]} -->\n"
    before = _read_text(path)
    if before is not None and before.startswith(mark):
        return before
    written = model.write_persona(traits) if model is not None and traits else None
    return mark + identity.persona_md(traits, written)


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError, UnicodeDecodeError):
        return None


def _daily_summary(
    home: Home, report: dict[str, Any], now: datetime, dry_run: bool
) -> dict[str, Any]:
    path = home.root / "daily_summaries" / f"{now.date().isoformat()}.md"
    lines = [f"## consolidate {iso(now)}", ""]
    for step in ("sessions", "dedup", "decay", "expire", "identity"):
        lines.append(f"- {step}: {json.dumps(report[step], ensure_ascii=False)}")
    entry = "\n".join(lines) + "\n\n"
    if not dry_run and _did_something(report):
        ensure_private_dir(home.root, path.parent)
        previous = path.read_text(encoding="utf-8") if path.exists() else f"# {now.date()}\n\n"
        replace_private_file(path, (previous + entry).encode("utf-8"))
    return {
        "path": str(path.relative_to(home.root)),
        "written": not dry_run and _did_something(report),
    }


def _did_something(report: dict[str, Any]) -> bool:
    """A run that changed no memory leaves the day's summary alone (idempotence)."""
    return bool(
        report["sessions"]["episodes"]
        or report["dedup"]["superseded"]
        or report["decay"]["archived"]
        or report["decay"]["demoted"]
        or report["expire"]["deleted"]
        or report["expire"]["attachments"]
    )


def read_state(home: Home) -> dict[str, Any]:
    return lock.read_state(home.root / ".consolidate_state")
