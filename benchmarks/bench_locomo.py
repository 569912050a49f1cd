#!/usr/bin/env python3
"""LoCoMo retrieval: hit@5/10/20 of ``trace`` against the questions' evidence turns.

One store per conversation (every turn logged through the library with content =
"speaker: text" plus the image caption, metadata {"dia_id": ...}, one session per
LoCoMo session); each question of categories 1-5 is run through the library's
``trace()`` (top 20) inside its own conversation. hit@k = any evidence turn in the top
k. Malformed or non-existent evidence ids are dropped (see bench-data/README.md);
questions left without evidence are not scored. Categories 1-4 are also reported for
each half of the conversations, so a gain can be checked on both.

Baselines computed in the same run on the same indexed text: plain SQLite FTS5 with
``unicode61`` and the question's words OR-joined (the README's "FTS5-OR" reference),
the same with the ``porter`` stemmer, and the same with the project's stopwords
dropped from the query (ours = porter + stopwords). Reference figures from the README are shown
beside them (the reference was measured on all 10 conversations).

The same questions also go through the library's ``recall`` with only the ``traces``
channel (``recall --traces -n 20``; the token budget lifted so the 20 hits stay): its
score adds recency, importance and access to the turns' relevance, and the stores are
logged with LoCoMo's own (2023) dates, so on this data it ranks like ``trace``.

"recall (default, --recent 3)" asks the same with ``--recent 3``: the conversation's
last three turns (its end, mostly about something else) enrich every question, as an
agent's would when the question comes after them; those turns are never returned.

With the ``semantic`` extra, "recall (hybrid)" asks the same as "recall (default)"
with ``search_backend = "hybrid"``, after the store's turns, memories and episodes are
embedded through the library (vectors kept under /tmp/soloqueue-bench between runs,
see _dense.py): the dense channel joins the fusion at its registered weight, or at
each ``--dense-weights`` value (tuned on conversations 1-5, the first half; 6-10 are
the held-out half).

``--keep DIR`` builds each conversation's store in ``DIR/conv-N`` (N from 0) and keeps
it, so one question can be read through the CLI as the bench asked it:
``SOLOQUEUE_HOME=DIR/conv-N SOLOQUEUE_NOW=<the time printed for it> soloqueue-mem recall
"QUESTION" --explain --format json --limit 20``.

Run: ``/tmp/bench-venv/bin/python benchmarks/bench_locomo.py [--quick] [--no-dense]
[--dense-weights 0.8,1.2] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import _common as c
import _dense
from _bm25 import Bm25, length_bucket

if TYPE_CHECKING:
    from soloqueue_mem.home import Home
    from soloqueue_mem.memory.recall import Hit
    from soloqueue_mem.text.lexicon import Lexicon

c.import_project()

KS = (5, 10, 20)
REFERENCE_1_4 = {  # bench-data/README.md, categories 1-4 (1,536 questions)
    "BM25": (54.8, 62.5, 69.5),
    "BM25 + stemming": (59.4, 67.7, 73.9),
    "SQLite FTS5 (unicode61) OR": (58.3, 67.1, 73.3),
    "SQLite FTS5 default AND": (11.6, 11.9, 11.9),
    "most-recent-k": (0.3, 1.1, 3.0),
}
CATEGORY = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_ID = re.compile(r"D(\d+):(\d+)")


def turn_text(turn: dict) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += "\n" + turn["blip_caption"]
    return text


def sessions_of(conv: dict) -> list[tuple[int, str, list[dict]]]:
    numbers = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
    return [(n, conv.get(f"session_{n}_date_time", ""), conv[f"session_{n}"]) for n in numbers]


def parse_when(text: str, fallback: datetime) -> datetime:
    try:
        return datetime.strptime(text, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    except ValueError:
        return fallback


def clean_evidence(raw: list[str], known: set[str]) -> tuple[list[str], int]:
    """Evidence ids split on ';'/spaces, normalised (D30:05 -> D30:5), unknown dropped."""
    kept, dropped = [], 0
    for item in raw:
        for part in re.split(r"[;,\s]+", item):
            if not part:
                continue
            m = _ID.fullmatch(part)
            norm = f"D{int(m.group(1))}:{int(m.group(2))}" if m else None
            if norm in known:
                kept.append(norm)
            else:
                dropped += 1
    return kept, dropped


def ingest(
    root: Path, conv: dict
) -> tuple[Home, sqlite3.Connection, list[tuple[str, str]], datetime]:
    """A store for one conversation; returns (home, conn, [(dia_id, text)], asked_at).

    The conversation is logged, consolidated and questioned on a pinned clock, the day
    after its last session (``asked_at``), never at the wall clock's time: retention and
    decay count from "now", so a wall clock made the figure move with the day it ran.
    """
    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.sessions.events import Event
    from soloqueue_mem.sessions.writer import Rejected, log_events
    from soloqueue_mem.storage.sqlite.stores import open_memory

    home = Home(root)
    config = Config()
    conn = c.created(open_memory(home, config))
    docs: list[tuple[str, str]] = []
    items = []
    fallback = datetime(2023, 1, 1, tzinfo=UTC)
    last = fallback
    for number, when, turns in sessions_of(conv):
        start = parse_when(when, fallback + timedelta(days=number))
        last = max(last, start + timedelta(seconds=len(turns)))
        for i, turn in enumerate(turns):
            text = turn_text(turn)
            docs.append((turn["dia_id"], text))
            items.append(
                (
                    None,
                    Event(
                        role="user" if turn["speaker"] == conv["speaker_a"] else "assistant",
                        content=text,
                        tool_calls=[],
                        tool_results=[],
                        timestamp=start + timedelta(seconds=i),
                        metadata={"dia_id": turn["dia_id"]},
                        session=f"session_{number}",
                    ),
                )
            )
    asked_at = last + timedelta(days=1)
    for result in log_events(
        home, conn, items, ("locomo", "agent", None), config, asked_at, chunk_size=10_000
    ):
        if isinstance(result, Rejected):
            raise RuntimeError(result)
    return home, conn, docs, asked_at


def consolidate(home: Home, now: datetime) -> int:
    """What a night's `consolidate` makes of the conversation: episodes and memories
    (every session idle by now); returns what a second run right after it changed."""
    from soloqueue_mem.config import Config
    from soloqueue_mem.lifecycle.consolidate import Options
    from soloqueue_mem.storage import open_backend

    backend = open_backend(home, Config())
    try:
        backend.consolidate(now, Options())
        return c.changes(backend.consolidate(now, Options()))
    finally:
        backend.close()


class Baseline:
    """Plain FTS5 over the same texts; the question's words quoted and OR-joined."""

    def __init__(
        self, docs: list[tuple[str, str]], tokenizer: str, stopwords: frozenset[str] = frozenset()
    ) -> None:
        self.stopwords = stopwords
        self.ids = [dia for dia, _ in docs]
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute(f"CREATE VIRTUAL TABLE d USING fts5(body, tokenize='{tokenizer}')")
        self.conn.executemany(
            "INSERT INTO d (rowid, body) VALUES (?, ?)",
            ((i + 1, text) for i, (_, text) in enumerate(docs)),
        )

    def search(self, question: str, k: int) -> list[str]:
        words = list(dict.fromkeys(re.findall(r"\w+", question.lower())))
        words = [w for w in words if w not in self.stopwords] or words
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = self.conn.execute(
            "SELECT rowid FROM d WHERE d MATCH ? ORDER BY rank, rowid DESC LIMIT ?", (match, k)
        )
        return [self.ids[r[0] - 1] for r in rows]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="first 2 conversations only")
    parser.add_argument("--data", type=Path, default=c.BENCH_DATA / "locomo10.json")
    parser.add_argument("--conversations", type=int, help="how many conversations (default all)")
    parser.add_argument(
        "--no-consolidate",
        action="store_true",
        help="skip the consolidation (episodes, extracted memories) before the questions",
    )
    parser.add_argument(
        "--ablate", action="store_true", help="also each adjustment toggled (_common.ABLATIONS)"
    )
    parser.add_argument(
        "--keep", type=Path, help="build each conversation's store in DIR/conv-N and keep it"
    )
    _dense.add_options(parser)
    args = parser.parse_args()
    if args.keep is not None and args.keep.exists() and any(args.keep.iterdir()):
        parser.error(f"--keep {args.keep}: not empty (a store logged twice holds every turn twice)")

    from soloqueue_mem.config import Config
    from soloqueue_mem.memory.recall import Request
    from soloqueue_mem.sessions.trace import trace
    from soloqueue_mem.sessions.turns import Scope
    from soloqueue_mem.text.fts import STOPWORDS
    from soloqueue_mem.text.lexicon import open_lexicon

    config = Config()
    now = datetime(2023, 1, 1, tzinfo=UTC)  # each conversation's asked_at, set below

    def through_traces(question: str) -> Request:
        """`recall --traces -n 20` with a budget that never cuts the 20 hits."""
        return Request(question, channels=("traces",), limit=20, max_tokens=1_000_000)

    def default_hits(
        home: Home,
        conn: sqlite3.Connection,
        question: str,
        limit: int,
        setup: Config = config,
        recent: int = 0,
    ) -> list[Hit]:
        """Plain `recall QUESTION -n LIMIT` (default channels and budget): its hits."""
        asked = Request(question, limit=limit, recent=recent)
        return c.recall_in(home, asked, setup, now, lexicon).hits

    def turns_of(conn: sqlite3.Connection, hits: list[Hit], memories: bool) -> list:
        """The turns among ``hits`` (memories and episodes take places in the answer
        too); with ``memories``, a rules memory counts as the turn it was said in."""
        ids = []
        for hit in hits:
            if hit.candidate.turn:
                ids.append(c.logged(hit.candidate.turn, "dia_id"))
            elif memories and hit.candidate.memory and hit.candidate.memory.source == "rules":
                ids.append(c.said_in(conn, hit.candidate.memory, "dia_id"))
        return [dia for dia in ids if dia is not None]

    def answer_turns(
        home: Home,
        conn: sqlite3.Connection,
        question: str,
        setup: Config = config,
        recent: int = 0,
        both: bool = False,
    ) -> list[c.Answers] | c.Answers:
        """The turns of -n 10 and of -n 20 (hit@20 asks for 20); with ``both``, also
        the same with memories counted as the turns they were said in."""
        asked = [default_hits(home, conn, question, n, setup, recent) for n in (10, 20)]
        answers = [
            c.Answers(turns_of(conn, asked[0], memories), turns_of(conn, asked[1], memories))
            for memories in ((False, True) if both else (False,))
        ]
        return answers if both else answers[0]

    data = json.loads(args.data.read_text(encoding="utf-8"))
    limit = args.conversations or (2 if args.quick else len(data))
    data = data[:limit]
    lexicon_cache: list[Lexicon] = []

    def lexicon() -> Lexicon:
        if not lexicon_cache:
            lexicon_cache.append(open_lexicon(c.CACHE / "lexicon"))
        return lexicon_cache[0]

    methods = [
        "soloqueue-mem trace",
        "soloqueue-mem recall --traces",
        "soloqueue-mem recall (default)",
        "FTS5 unicode61 OR (baseline)",
        "FTS5 porter unicode61 OR",
        "FTS5 unicode61 OR, stopwords dropped",
        "BM25 (in-process, Porter)",
        "soloqueue-mem recall (default, --recent 3)",
        "soloqueue-mem recall (default), a memory as the turn it was said in",
    ]
    ablated = {name: config._replace(**off) for name, off in c.ABLATIONS.items()}
    methods += list(ablated) if args.ablate else []
    hybrid: dict[str, Config] = {}
    skipped = None if args.no_dense else _dense.available()
    if not args.no_dense and skipped is None:
        for weight in args.dense_weights:
            name = "soloqueue-mem recall (hybrid)"
            weights = {} if weight is None else {"dense": weight}
            if weight is not None:
                name = f"soloqueue-mem recall (hybrid, dense weight {weight:g})"
            hybrid[name] = Config(search_backend="hybrid", recall_channel_weights=weights)
        methods += list(hybrid)
        _dense.remember_queries()
    # results[method][category] = list of (hit5, hit10, hit20)
    results: dict[str, dict[int, list[tuple[bool, ...]]]] = {m: {} for m in methods}
    # halves[method][half] = the same for categories 1-4; half 0 = the first half_size
    halves: dict[str, dict[int, list[tuple[bool, ...]]]] = {m: {} for m in methods}
    # lengths[method][bucket] = the same for categories 1-4, by the question's length
    lengths: dict[str, dict[str, list[tuple[bool, ...]]]] = {m: {} for m in methods}
    half_size = (len(data) + 1) // 2
    dropped_ids = unscored = second_run = sourced = 0
    unsourced: list[tuple[str, str]] = []
    trace_seconds = 0.0
    traced = 0
    turns_total = 0
    embedded = 0
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-locomo-"))
    try:
        for index, sample in enumerate(data):
            conv = sample["conversation"]
            home, conn, docs, now = ingest(work / f"conv-{index}", conv)
            if args.keep is not None:
                c.note(f"keeping {home.root}: SOLOQUEUE_NOW={now.isoformat()}")
            if not args.no_consolidate:
                second_run += consolidate(home, now)
                checked, bad = c.unsourced(Path(home.memory_db))
                sourced += checked
                unsourced += bad
            if hybrid:
                report = _dense.embed(conn, now)
                embedded += report["memories"]["embedded"] + report["turns"]["embedded"]
            turns_total += len(docs)
            known = {dia for dia, _ in docs}
            baselines = [
                Baseline(docs, "unicode61"),
                Baseline(docs, "porter unicode61"),
                Baseline(docs, "unicode61", STOPWORDS),
            ]
            bm25 = Bm25(docs)
            for qa in sample["qa"]:
                category = qa["category"]
                evidence, dropped = clean_evidence(qa.get("evidence", []), known)
                dropped_ids += dropped
                if not evidence:
                    unscored += 1
                    continue
                wanted = set(evidence)
                question = qa["question"]
                start = time.perf_counter()
                hits = trace(home, conn, question, Scope(), 20, lexicon)
                trace_seconds += time.perf_counter() - start
                traced += 1
                recalled = c.recall_in(home, through_traces(question), config, now, lexicon)
                plain, as_said = answer_turns(home, conn, question, both=True)
                ranked = {
                    methods[0]: [c.logged(h.turn, "dia_id") for h in hits],
                    methods[1]: [c.logged(h.candidate.turn, "dia_id") for h in recalled.hits],
                    methods[2]: plain,
                    methods[3]: baselines[0].search(question, 20),
                    methods[4]: baselines[1].search(question, 20),
                    methods[5]: baselines[2].search(question, 20),
                    methods[6]: bm25.search(question, 20),
                    methods[7]: answer_turns(home, conn, question, recent=3),
                    methods[8]: as_said,
                }
                for name, setup in (*hybrid.items(), *(ablated.items() if args.ablate else ())):
                    ranked[name] = answer_turns(home, conn, question, setup)
                for method, ids in ranked.items():
                    hit = tuple(bool(wanted.intersection(c.first(ids, k))) for k in KS)
                    results[method].setdefault(category, []).append(hit)
                    if category != 5:
                        halves[method].setdefault(int(index >= half_size), []).append(hit)
                        lengths[method].setdefault(length_bucket(question), []).append(hit)
            conn.close()
            c.note(
                f"conversation {index + 1}/{len(data)}: {len(docs)} turns, "
                f"{len(sample['qa'])} questions"
            )
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)

    def rates(rows: list[tuple[bool, ...]]) -> list[str]:
        return [c.pct(sum(r[i] for r in rows) / len(rows)) if rows else "-" for i in range(len(KS))]

    c.out(f"## bench_locomo{' (quick)' if args.quick else ''}")
    c.out()
    c.out(c.machine_line(sys.executable))
    c.out()
    c.out(
        f"{len(data)} conversation(s), {turns_total:,} turns, {traced:,} scored questions; "
        f"{dropped_ids} malformed/unknown evidence id(s) dropped, {unscored} question(s) "
        f"without valid evidence not scored. Library trace(): "
        f"{1000 * trace_seconds / max(traced, 1):.2f} ms per question (top 20)."
    )
    if not args.no_consolidate:
        c.out(
            f"A second consolidate right after the first changed {second_run} item(s). "
            f"Rules memories whose text is not in a turn they came from: {len(unsourced)} "
            f"of {sourced}{': ' + repr(unsourced[:3]) if unsourced else ''}."
        )
    if skipped:
        c.out(f"recall (hybrid) not measured: {skipped}.")
    elif hybrid:
        c.out(f"recall (hybrid): {embedded:,} text(s) embedded by this run, the rest cached.")
    c.out()
    table_rows = []
    for category in (1, 2, 3, 4, 5):
        for method in methods:
            rows = results[method].get(category, [])
            table_rows.append([f"{category} {CATEGORY[category]}", method, len(rows), *rates(rows)])
    for method in methods:
        rows = [r for cat in (1, 2, 3, 4) for r in results[method].get(cat, [])]
        table_rows.append(["**1-4**", f"**{method}**", len(rows), *rates(rows)])
    c.out(c.table(["category", "method", "questions", "hit@5", "hit@10", "hit@20"], table_rows))
    c.out()
    names = [f"1-{half_size}", f"{half_size + 1}-{len(data)}"]
    c.out("Categories 1-4 by half of the conversations (a real gain holds on both):")
    c.out()
    c.out(
        c.table(
            ["conversations", "method", "questions", "hit@5", "hit@10", "hit@20"],
            [
                [
                    names[half],
                    method,
                    len(halves[method].get(half, [])),
                    *rates(halves[method].get(half, [])),
                ]
                for half in (0, 1)
                for method in methods[:4] + methods[6:]
            ],
        )
    )
    c.out()
    c.out("Categories 1-4 by the question's length in characters:")
    c.out()
    c.out(
        c.table(
            ["length", "method", "questions", "hit@5", "hit@10", "hit@20"],
            [
                [name, method, len(lengths[method].get(name, [])), *rates(lengths[method][name])]
                for name in ("<100", "100-299", ">=300")
                for method in (methods[2], methods[6], methods[7], methods[8])
                if lengths[method].get(name)
            ],
        )
    )
    c.out()
    c.out(
        "Reference figures from bench-data/README.md (categories 1-4, 1,536 questions, all 10 "
        "conversations):"
    )
    c.out()
    c.out(
        c.table(
            ["reference", "hit@5", "hit@10", "hit@20"],
            [[name, *vals] for name, vals in REFERENCE_1_4.items()],
        )
    )
    c.out()
    ours = [r for cat in (1, 2, 3, 4) for r in results[methods[0]].get(cat, [])]
    base = [r for cat in (1, 2, 3, 4) for r in results[methods[3]].get(cat, [])]
    if ours and base:
        diff = [
            100 * (sum(r[i] for r in ours) - sum(r[i] for r in base)) / len(ours)
            for i in range(len(KS))
        ]
        c.out(
            "Ours minus the FTS5-OR baseline of this run, categories 1-4: "
            + "/".join(f"{d:+.1f}" for d in diff)
            + " points at hit@5/@10/@20."
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
