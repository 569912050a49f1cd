#!/usr/bin/env python3
"""Chinese: segmentation agreement with jieba, and Chinese retrieval on MemoryBank.

(i)  Our ``segment()`` (jieba's algorithm over the SQLite lexicon) against
     ``jieba.lcut(HMM=True)`` on every MemoryBank Chinese text (queries and responses),
     split into sentences: share of sentences with identical Han word lists, and
     token-level agreement (Han word spans in common). Goal: identical.
(ii) Retrieval: each MemoryBank user's dialogues in its own store (user turn and
     assistant turn per pair, metadata {"pair": "DATE#i"}); each labelled question of
     benchmarks/data/memorybank_zh_evidence.jsonl through the library's ``trace()``
     (top 5/10/20), against references built in the same run on the same turns: a
     jieba-word FTS5 index (jieba.lcut tokens joined by spaces, query tokens quoted and
     OR-joined, the same stopwords), and a character-bigram FTS5 index. Also index size
     and the per-process cost of the first query (ours: lexicon open + segmentation;
     jieba: import + dictionary load). With the ``semantic`` extra, "recall (hybrid)"
     asks as "recall (default)" does with ``search_backend = "hybrid"``, after the
     store's turns, memories and episodes are embedded through the library (vectors
     kept between runs, see _dense.py), at the dense channel's registered weight or at
     each ``--dense-weights`` value. Weights are tuned on the users at even places in
     name order (the tuning half); the others are the held-out half.

Probing questions are read from bench-data at run time (never copied into the repo).
Run: ``/tmp/bench-venv/bin/python benchmarks/bench_zh.py [--quick] [--no-dense]
[--dense-weights 0.8,1.2]``.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import _common as c
import _dense
from _bm25 import Bm25

if TYPE_CHECKING:
    from soloqueue_mem.home import Home
    from soloqueue_mem.memory.recall import Hit
    from soloqueue_mem.sessions.events import Event
    from soloqueue_mem.text.lexicon import Lexicon

c.import_project()

KS = (5, 10, 20)
LONG_PREFIX = 30  # user lines before the question in the `long` subset
HAN = re.compile("[\u4e00-\u9fd5]+")
SENTENCE_END = re.compile(r"(?<=[。！？!?；;…\n])")
TOKENIZER = "porter unicode61 remove_diacritics 2"  # the product's tokenizer
LABELS = Path(__file__).resolve().parent / "data" / "memorybank_zh_evidence.jsonl"


def load_memorybank(root: Path) -> tuple[dict, dict[str, list[str]]]:
    bank = json.loads((root / "memory_bank_cn.json").read_text(encoding="utf-8"))
    probing: dict[str, list[str]] = {}
    for line in (root / "probing_questions_cn.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            for user, questions in json.loads(line).items():
                probing.setdefault(user, []).extend(questions)
    return bank, probing


def all_texts(bank: dict) -> list[str]:
    return [
        text
        for user in bank.values()
        for pairs in user["history"].values()
        for pair in pairs
        for text in (pair["query"], pair["response"])
        if text
    ]


def sentences(text: str) -> list[str]:
    return [s for s in SENTENCE_END.split(text) if HAN.search(s)]


def han_spans(words: list[str]) -> list[tuple[int, int]]:
    spans, pos = [], 0
    for word in words:
        if HAN.fullmatch(word):
            spans.append((pos, pos + len(word)))
        pos += len(word)
    return spans


# --- (i) segmentation ---------------------------------------------------------------


def segmentation(texts: list[str], lexicon: Lexicon, jieba: ModuleType) -> str:
    from soloqueue_mem.text.segment import segment

    units = [s for text in texts for s in sentences(text)]
    same = 0
    common = ours_n = theirs_n = 0
    examples = []
    ours_time = theirs_time = 0.0
    for sentence in units:
        t0 = time.perf_counter()
        ours = segment(sentence, lexicon)
        t1 = time.perf_counter()
        theirs = jieba.lcut(sentence, HMM=True)
        t2 = time.perf_counter()
        ours_time += t1 - t0
        theirs_time += t2 - t1
        assert "".join(ours) == sentence, "segment() lost or changed characters"
        a, b = han_spans(ours), han_spans(theirs)
        ours_n += len(a)
        theirs_n += len(b)
        common += len(set(a) & set(b))
        if [sentence[i:j] for i, j in a] == [sentence[i:j] for i, j in b]:
            same += 1
        else:
            examples.append((sentence, ours, theirs))
    precision = common / ours_n if ours_n else 1.0
    recall = common / theirs_n if theirs_n else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    chars = sum(len(u) for u in units)
    lines = [
        "### (i) segmentation: our segment() vs jieba.lcut(HMM=True)",
        "",
        c.table(
            ["measure", "value"],
            [
                ["texts (MemoryBank queries + responses)", f"{len(texts):,}"],
                ["sentences with Han text", f"{len(units):,} ({chars:,} characters)"],
                [
                    "sentences with identical Han word lists",
                    f"{same:,} = {c.pct(same / len(units))}%",
                ],
                ["Han words: ours / jieba / same span", f"{ours_n:,} / {theirs_n:,} / {common:,}"],
                [
                    "token agreement: precision / recall / F1 (spans vs jieba)",
                    f"{c.pct(precision)} / {c.pct(recall)} / {c.pct(f1)}%",
                ],
                [
                    "time, all sentences: ours (lexicon queries) / jieba (loaded)",
                    f"{ours_time:.2f} s / {theirs_time:.2f} s",
                ],
            ],
        ),
    ]
    if examples:
        lines += [
            "",
            f"Differing sentences ({len(examples)}), first ones "
            "(only the words that differ are shown with their neighbours):",
            "",
        ]
        rows = []
        for sentence, ours, theirs in examples[:8]:
            rows.append(
                [
                    sentence[:60],
                    _diff_words(sentence, ours, theirs, 0),
                    _diff_words(sentence, ours, theirs, 1),
                ]
            )
        lines.append(c.table(["sentence", "ours", "jieba"], rows))
        kinds = Counter(_diff_kind(s, o, t) for s, o, t in examples)
        lines += [
            "",
            "Differences by kind: " + ", ".join(f"{k}: {n}" for k, n in kinds.most_common()),
        ]
    return "\n".join(lines)


def _diff_words(sentence: str, ours: list[str], theirs: list[str], which: int) -> str:
    a, b = set(han_spans(ours)), set(han_spans(theirs))
    mine = sorted(a - b) if which == 0 else sorted(b - a)
    words = ours if which == 0 else theirs
    spans = han_spans(words)
    shown = []
    for span in mine[:3]:
        i = spans.index(span)
        context = spans[max(0, i - 1) : i + 2]
        shown.append("/".join(sentence[x:y] for x, y in context))
    return "; ".join(shown)


def _diff_kind(sentence: str, ours: list[str], theirs: list[str]) -> str:
    """A rough cause: does the differing region touch a digit/letter next to Han text?"""
    a, b = set(han_spans(ours)), set(han_spans(theirs))
    for x, y in sorted(a ^ b):
        left = sentence[x - 1] if x > 0 else ""
        right = sentence[y] if y < len(sentence) else ""
        if re.match(r"[A-Za-z0-9+#&._%\-]", left + " ") or re.match(
            r"[A-Za-z0-9+#&._%\-]", right + " "
        ):
            return "next to ASCII letters/digits (jieba cuts Han+ASCII blocks together)"
    return "other"


# --- (ii) retrieval -----------------------------------------------------------------


def bigram_form(text: str) -> str:
    """Han runs as overlapping character bigrams (a lone character as itself)."""
    out, pos = [], 0
    for run in HAN.finditer(text):
        out.append(text[pos : run.start()])
        s = run.group()
        out.append(" " + " ".join(s[i : i + 2] for i in range(max(1, len(s) - 1))) + " ")
        pos = run.end()
    out.append(text[pos:])
    return "".join(out)


def or_match(tokens: list[str], stopwords: frozenset[str]) -> str | None:
    unique = list(dict.fromkeys(t.lower() for t in tokens if re.search(r"\w", t)))
    meaningful = [t for t in unique if t not in stopwords] or unique
    if not meaningful:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in meaningful[:64])


class RefIndex:
    """A contentless FTS5 index (the product's tokenizer) over pre-tokenised text."""

    def __init__(self, path: Path, labels: list[str], texts: list[str]) -> None:
        self.labels = labels
        self.conn = sqlite3.connect(path)
        self.conn.execute(
            f"CREATE VIRTUAL TABLE f USING fts5(body, content='', tokenize='{TOKENIZER}')"
        )
        with self.conn:
            self.conn.executemany(
                "INSERT INTO f (rowid, body) VALUES (?, ?)",
                ((i + 1, t) for i, t in enumerate(texts)),
            )

    def search(self, match: str | None, k: int) -> list[str]:
        if match is None:
            return []
        rows = self.conn.execute(
            "SELECT rowid FROM f WHERE f MATCH ? ORDER BY rank, rowid DESC LIMIT ?", (match, k)
        )
        return [self.labels[r[0] - 1] for r in rows]


def fts_bytes(conn: sqlite3.Connection, prefix: str) -> int:
    """Payload bytes of the FTS5 shadow tables (dbstat: excludes page slack)."""
    row = conn.execute(
        "SELECT SUM(payload) FROM dbstat WHERE name LIKE ? AND name NOT LIKE 'sqlite_%'",
        (prefix + "%",),
    ).fetchone()
    return int(row[0] or 0)


def logged_user(
    root: Path, bank: dict, user: str
) -> tuple[Home, sqlite3.Connection, list[tuple[None, Event]], list[str], list[str]]:
    """A store holding one MemoryBank user's dialogue, every pair's two turns logged
    (metadata ``pair``: "day#index"); returns (home, conn, events, pair labels, texts)."""
    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.sessions.events import Event
    from soloqueue_mem.sessions.writer import Rejected, log_events
    from soloqueue_mem.storage.sqlite.stores import open_memory

    history = bank[user]["history"]
    items, pair_labels, texts = [], [], []
    for day in sorted(history):
        start = datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC)
        for i, pair in enumerate(history[day]):
            tag = f"{day}#{i}"
            for role, text in (("user", pair["query"]), ("assistant", pair["response"])):
                items.append(
                    (
                        None,
                        Event(
                            role=role,
                            content=text,
                            tool_calls=[],
                            tool_results=[],
                            timestamp=start + timedelta(minutes=2 * i + (role == "assistant")),
                            metadata={"pair": tag},
                            session=day,
                        ),
                    )
                )
                pair_labels.append(tag)
                texts.append(text)
    home = Home(root)
    config = Config()
    conn = c.created(open_memory(home, config))
    logging = log_events(
        home,
        conn,
        items,
        ("memorybank", "agent", None),
        config,
        asked_at(items),
        chunk_size=100_000,
    )
    for result in logging:
        if isinstance(result, Rejected):
            raise RuntimeError(result)
    return home, conn, items, pair_labels, texts


def asked_at(items: list) -> datetime:
    """The pinned clock a user's store is logged, consolidated and questioned at: the day
    after their last turn. Never the wall clock: retention and decay count from "now",
    so a wall clock made the figures move with the day they ran."""
    return max(event.timestamp for _, event in items) + timedelta(days=1)


def retrieval(
    bank: dict,
    probing: dict[str, list[str]],
    labels: list[dict],
    lexicon_fn: Callable[[], Lexicon],
    jieba: ModuleType,
    work: Path,
    dense_weights: list[float | None],
    ablate: bool = False,
) -> tuple[str, dict]:
    from soloqueue_mem.config import Config
    from soloqueue_mem.lifecycle.consolidate import Options
    from soloqueue_mem.memory.recall import Request
    from soloqueue_mem.sessions.trace import trace
    from soloqueue_mem.sessions.turns import Scope
    from soloqueue_mem.storage import open_backend
    from soloqueue_mem.text.fts import STOPWORDS

    now = datetime(2023, 1, 1, tzinfo=UTC)  # each user's asked_at, set below

    def recalled(
        home: Home, conn: sqlite3.Connection, question: str, setup: Config | None = None
    ) -> tuple[c.Answers, c.Answers]:
        """The pairs of the turns plain `recall QUESTION` returns, in its places
        (memories and episodes hold theirs), for -n 10 and for -n 20; then the same
        with a rules memory counted as the turn it was said in."""
        found = [
            c.recall_in(home, Request(question, limit=limit), setup or config, now, lexicon_fn).hits
            for limit in (10, 20)
        ]

        def pair(hit: Hit, memories: bool) -> Any:
            if hit.candidate.turn:
                return c.logged(hit.candidate.turn, "pair")
            if memories and hit.candidate.memory:
                return c.said_in(conn, hit.candidate.memory, "pair")
            return None

        default, as_said = (
            c.Answers(*([pair(h, memories) for h in hits] for hits in found))
            for memories in (False, True)
        )
        return default, as_said

    methods = [
        "soloqueue-mem trace (bigrams indexed, jieba-algorithm query)",
        "jieba reference (jieba words indexed)",
        "character bigrams",
        "soloqueue-mem recall (default; after consolidate)",
        "BM25 (in-process, jieba search-mode words)",
        "soloqueue-mem recall (default), a memory as the turn it was said in",
    ]
    hybrid: dict[str, Config] = {}
    for weight in dense_weights:
        name = "soloqueue-mem recall (hybrid)"
        if weight is not None:
            name = f"soloqueue-mem recall (hybrid, dense weight {weight:g})"
        weights = {} if weight is None else {"dense": weight}
        hybrid[name] = Config(search_backend="hybrid", recall_channel_weights=weights)
    ablated = {
        f"soloqueue-mem {name}": Config()._replace(**off)
        for name, off in (c.ABLATIONS.items() if ablate else ())
    }
    setups = {**hybrid, **ablated}  # the same stores read with another configuration
    methods += list(setups)
    tuning = set(sorted({x["user"] for x in labels})[::2])
    halves: dict[str, dict[bool, list[tuple[bool, ...]]]] = {m: {} for m in methods}
    results: dict[str, dict[str, list[tuple[bool, ...]]]] = {m: {} for m in methods}
    sizes = dict.fromkeys(methods, 0)
    timings = dict.fromkeys(methods, 0.0)
    by_user: dict[str, list[dict]] = {}
    for label in labels:
        by_user.setdefault(label["user"], []).append(label)
    examples = []
    for number, (user, user_labels) in enumerate(by_user.items()):
        root = work / f"user-{number}"
        home, conn, items, pair_labels, texts = logged_user(root, bank, user)
        now = asked_at(items)
        config = Config()
        sizes[methods[0]] += fts_bytes(conn, "conversation_turns_fts")
        backend = open_backend(home, config)
        try:
            backend.consolidate(now, Options())
        finally:
            backend.close()
        if hybrid:
            _dense.embed(conn, now)
        # a dialogue pasted as the query: the user's first lines, then the question
        context = [e.content for _, e in items if e.role == "user"]
        jieba_index = RefIndex(
            root / "jieba.db", pair_labels, [" ".join(jieba.lcut(t)) for t in texts]
        )
        bigram_index = RefIndex(root / "bigram.db", pair_labels, [bigram_form(t) for t in texts])
        bm25 = Bm25(list(zip(pair_labels, texts, strict=True)))
        sizes[methods[1]] += fts_bytes(jieba_index.conn, "f")
        sizes[methods[2]] += fts_bytes(bigram_index.conn, "f")
        for label in user_labels:
            if label["source"] == "probing":
                question = probing[user][label["probe_index"]]
            else:
                question = label["question"]
            wanted = set(label["evidence"])
            t0 = time.perf_counter()
            ours = [
                c.logged(h.turn, "pair")
                for h in trace(home, conn, question, Scope(), 20, lexicon_fn)
            ]
            t1 = time.perf_counter()
            theirs = jieba_index.search(or_match(jieba.lcut(question), STOPWORDS), 20)
            t2 = time.perf_counter()
            bigram = bigram_index.search(or_match(bigram_form(question).split(), STOPWORDS), 20)
            t3 = time.perf_counter()
            default, as_said = recalled(home, conn, question)
            t4 = time.perf_counter()
            timings[methods[0]] += t1 - t0
            timings[methods[1]] += t2 - t1
            timings[methods[2]] += t3 - t2
            timings[methods[3]] += t4 - t3
            answers = [ours, theirs, bigram, default, bm25.search(question, 20), as_said]
            for name, setup in setups.items():
                t5 = time.perf_counter()
                answers.append(recalled(home, conn, question, setup)[0])
                timings[name] += time.perf_counter() - t5
            for method, ranked in zip(methods, answers, strict=True):
                hit = tuple(bool(wanted.intersection(c.first(ranked, k))) for k in KS)
                results[method].setdefault(label["source"], []).append(hit)
                halves[method].setdefault(user in tuning, []).append(hit)
            long = "".join(context[:LONG_PREFIX]) + question
            long_default, long_as_said = recalled(home, conn, long)
            for method, ranked in zip(
                methods,
                (
                    [
                        c.logged(h.turn, "pair")
                        for h in trace(home, conn, long, Scope(), 20, lexicon_fn)
                    ],
                    jieba_index.search(or_match(jieba.lcut(long), STOPWORDS), 20),
                    bigram_index.search(or_match(bigram_form(long).split(), STOPWORDS), 20),
                    long_default,
                    bm25.search(long, 20),
                    long_as_said,
                    *(recalled(home, conn, long, setup)[0] for setup in setups.values()),
                ),
                strict=True,
            ):
                hit = tuple(bool(wanted.intersection(c.first(ranked, k))) for k in KS)
                results[method].setdefault("long", []).append(hit)
            if bool(wanted.intersection(ours[:10])) != bool(wanted.intersection(theirs[:10])):
                examples.append((question, bool(wanted.intersection(ours[:10]))))
        conn.close()
        jieba_index.conn.close()
        bigram_index.conn.close()

    def rates(rows):
        return [c.pct(sum(r[i] for r in rows) / len(rows)) if rows else "-" for i in range(len(KS))]

    rows = []
    for subset in ("probing", "written", "all", "long"):
        for method in methods:
            data = results[method]
            picked = (
                data.get(subset, [])
                if subset != "all"
                else data.get("probing", []) + data.get("written", [])
            )
            rows.append([subset, method, len(picked), *rates(picked)])
    n_questions = len(labels)
    lines = [
        "### (ii) Chinese retrieval on MemoryBank (hit@k of evidence pairs; a hit on either "
        "turn of a pair counts)",
        "",
        f"{len(by_user)} users, one store each; {n_questions} labelled questions "
        f"({sum(1 for x in labels if x['source'] == 'probing')} probing, "
        f"{sum(1 for x in labels if x['source'] == 'written')} written). All three "
        f"indexes use tokenizer `{TOKENIZER}`, BM25 order, OR-joined quoted query terms "
        "and the same stopword list (soloqueue_mem.text.fts.STOPWORDS). `long`: every "
        f"question again, after the user's first {LONG_PREFIX} lines of dialogue (a dialogue "
        "pasted as the query; the references keep its first 64 terms).",
        "",
        c.table(["subset", "method", "questions", "hit@5", "hit@10", "hit@20"], rows),
        "",
        f"Probing and written questions by half of the users ({len(tuning)} tuning users, at "
        "even places in name order; the others held out):",
        "",
        c.table(
            ["users", "method", "questions", "hit@5", "hit@10", "hit@20"],
            [
                [
                    half,
                    method,
                    len(halves[method].get(key, [])),
                    *rates(halves[method].get(key, [])),
                ]
                for half, key in (("tuning", True), ("held-out", False))
                for method in (methods[0], methods[3], methods[4], methods[5], *setups)
            ],
        ),
        "",
        c.table(
            [
                "method",
                "FTS index payload bytes (shadow tables, all users)",
                "vs ours",
                "search ms per question (in process, warm)",
            ],
            [
                [
                    m,
                    f"{sizes[m]:,}",
                    f"{sizes[m] / sizes[methods[0]]:.2f}x",
                    f"{1000 * timings[m] / n_questions:.2f}",
                ]
                for m in methods
            ],
        ),
    ]
    if examples:
        lines += ["", "Questions where ours and the jieba reference disagree at hit@10:", ""]
        lines.append(
            c.table(
                ["question", "hit@10 by"],
                [[q, "ours only" if mine else "jieba only"] for q, mine in examples[:10]],
            )
        )
    return "\n".join(lines), {
        "question": next(
            probing[x["user"]][x["probe_index"]] for x in labels if x["source"] == "probing"
        )
    }


# --- per-process first-query cost -----------------------------------------------------

OURS_FIRST = r"""
import json, sys, time
t0 = time.perf_counter()
from pathlib import Path
from soloqueue_mem.text.fts import match_expression, query_terms
from soloqueue_mem.text.lexicon import open_lexicon
t1 = time.perf_counter()
lexicon = open_lexicon(Path(sys.argv[1]))
t2 = time.perf_counter()
match = match_expression(query_terms(sys.argv[2], lambda: lexicon))
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "load": t2 - t1, "query": t3 - t2, "total": t3 - t0}))
"""

JIEBA_FIRST = r"""
import json, logging, sys, time
t0 = time.perf_counter()
import jieba
jieba.setLogLevel(logging.WARNING)
t1 = time.perf_counter()
jieba.initialize()
t2 = time.perf_counter()
words = jieba.lcut(sys.argv[2])
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "load": t2 - t1, "query": t3 - t2, "total": t3 - t0}))
"""


def first_query(python: str, question: str, runs: int) -> str:
    env = c.timing_env()
    lexicon_dir = str(c.CACHE / "lexicon")
    progs = {
        "ours: import + open lexicon + segment": OURS_FIRST,
        "jieba: import + load dictionary + lcut": JIEBA_FIRST,
    }
    rows = []
    for label, prog in progs.items():
        argv = [python, "-c", prog, lexicon_dir, question]
        c.run_timed(argv, env)  # builds jieba's own cache file / our lexicon if missing
        phases: dict[str, list[float]] = {}
        walls = []
        for _ in range(runs):
            wall, raw = c.run_timed(argv, env, capture=True)
            walls.append(wall)
            for key, value in json.loads(raw).items():
                phases.setdefault(key, []).append(value)
        rows.append(
            [
                label,
                c.ms(c.median(phases["import"])),
                c.ms(c.median(phases["load"])),
                c.ms(c.median(phases["query"])),
                c.ms(c.median(phases["total"])),
                c.ms(c.median(walls)),
            ]
        )
    bare = c.median([c.run_timed([python, "-c", "pass"], env)[0] for _ in range(runs)])
    return "\n".join(
        [
            f"### (iii) per-process cost of the first Chinese query ({runs} fresh processes each, "
            "medians; caches present: our lexicon file, jieba's dictionary cache in the temp dir)",
            "",
            f"Query: {question}",
            "",
            c.table(
                [
                    "process",
                    "import ms",
                    "load ms",
                    "segment ms",
                    "in-process total ms",
                    "whole process ms",
                ],
                rows,
            ),
            "",
            f"Bare `python -c pass`: {c.ms(bare)} ms.",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a third of the texts for (i), 3 users for (ii), 5 runs for (iii)",
    )
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="interpreter for the first-query processes (default: this one)",
    )
    parser.add_argument("--data", type=Path, default=c.BENCH_DATA / "memorybank")
    parser.add_argument(
        "--ablate", action="store_true", help="also each adjustment toggled (_common.ABLATIONS)"
    )
    _dense.add_options(parser)
    args = parser.parse_args()

    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    from soloqueue_mem.text.lexicon import open_lexicon

    lexicon = open_lexicon(c.CACHE / "lexicon")
    bank, probing = load_memorybank(args.data)
    labels = [
        json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    texts = all_texts(bank)
    if args.quick:
        texts = texts[::3]
        users = list(dict.fromkeys(x["user"] for x in labels))[:3]
        labels = [x for x in labels if x["user"] in users]

    c.out(f"## bench_zh{' (quick)' if args.quick else ''}")
    c.out()
    c.out(c.machine_line(args.python))
    c.out()
    c.out(segmentation(texts, lexicon, jieba))
    c.out()
    work = Path(tempfile.mkdtemp(prefix="bench-zh-"))
    try:
        skipped = None if args.no_dense else _dense.available()
        weights = [] if args.no_dense or skipped else args.dense_weights
        text, info = retrieval(
            bank, probing, labels, lambda: lexicon, jieba, work, weights, args.ablate
        )
        if skipped:
            text += f"\n\nrecall (hybrid) not measured: {skipped}."
    finally:
        shutil.rmtree(work, ignore_errors=True)
    c.out(text)
    c.out()
    c.out(first_query(args.python, info["question"], 5 if args.quick else 15))
    return 0


if __name__ == "__main__":
    sys.exit(main())
