#!/usr/bin/env python3
"""Long-query recall: a user's multi-sentence message, or the last turns of a dialogue,
as the query; the stored memory the next answer needs as the answer.

The sets (``data/longquery_zh.jsonl``, ``data/longquery_en.jsonl``) were written by a
helper who was given only the categories and never read the ranking or extraction code:
15 users a language, 40-60 memories each (said on days 0-60, with 2-4 corrections, a
later memory changing an earlier one), 10 queries each of 150-800 characters, users
u01-u08 the tuned half and u09-u15 the held-out half.

Each user gets a fresh store: every memory goes in through ``Store.remember`` at its
day (in day order), kept permanently (a FACT's default 30 days would expire the early
ones before day 61: retention is not what this measures); each query is asked through
``Store.recall(query)`` with the default channels, limit 10 and budget, at day 61.
Beside it, in the same process, the plain BM25 baseline (``_bm25.py``) over exactly
the memories the store holds.

Reported per language, half, kind and query-length bucket: recall@10 (share of the
answers in the top 10), hit@10 (any answer in the top 10), and for the answers that are
a correction's new memory, how often it ranks above the memory it corrected.

``--recent`` (recall enriched by the conversation's last turns, docs/concepts/search.md)
is measured on a second store per user, the way an agent asks: a dialogue's last user
line is the question and its earlier lines are logged as the session's turns; a
message's context is the user's previous message (another topic: a long turn that must
not drown the question). "question alone" is asked before the context is logged,
"question + --recent N" after, both ranked by their memories (the turns the store now
holds take no place); BM25 beside them on the question alone and on the context and
question pasted together.

Run: ``python benchmarks/bench_longquery.py [--lang zh|en] [--show N]``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import _common as c
from _bm25 import Bm25, length_bucket

if TYPE_CHECKING:
    from soloqueue_mem.api.store import Store

c.import_project()

DATA = Path(__file__).resolve().parent / "data"
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ASKED_DAY = 61
LIMIT = 10
RECENT = (3, 5)
TURN_ROOM = 30  # more places than the logged turns can take
SPEAKER = re.compile(r"^(User|Assistant|用户|助手)[:：]\s*")


def ingest(root: Path, user: dict) -> tuple[Store, dict[str, str]]:
    """A store holding the user's memories; returns it and {store id: data id}."""
    from soloqueue_mem.api.store import Store

    clock = [START]
    store = Store(root, clock=lambda: clock[0])
    ids: dict[str, str] = {}
    for memory in sorted(user["memories"], key=lambda m: m["day"]):
        clock[0] = START + timedelta(days=memory["day"], minutes=len(ids))
        done = store.remember(memory["content"], duration="permanent")
        ids.setdefault(done.memory.id, memory["id"])
    clock[0] = START + timedelta(days=ASKED_DAY)
    return store, ids


def recalled(store: Store, ids: dict[str, str], query: str) -> list[str]:
    hits = store.recall(query, limit=LIMIT).hits
    return [ids.get(h.candidate.memory.id, "?") for h in hits if h.candidate.memory is not None]


def memories_first(
    store: Store, ids: dict[str, str], query: str, recent: int = 0, session: str | None = None
) -> list[str]:
    """The memories among the best ``LIMIT`` + ``TURN_ROOM`` hits: a store that holds
    turns spends places on them, which is not what ``--recent`` changes."""
    hits = store.recall(
        query, limit=LIMIT + TURN_ROOM, max_tokens=10**6, recent=recent, session=session
    ).hits
    ranked = [ids.get(h.candidate.memory.id, "?") for h in hits if h.candidate.memory]
    return ranked[:LIMIT]


def in_context(user: dict, number: int) -> tuple[str, list[dict]]:
    """A query as an agent asks it: the question and the turns said before it (a
    dialogue's earlier lines; a message's: the user's previous message)."""
    query = user["queries"][number]
    if query["kind"] == "dialogue":
        lines = query["query"].splitlines()
        said = [
            {
                "role": "user" if line.startswith(("User", "用户")) else "assistant",
                "content": SPEAKER.sub("", line),
            }
            for line in lines
        ]
        return said[-1]["content"], said[:-1]
    previous = user["queries"][number - 1]["query"]  # the first takes the last one's
    return query["query"], [{"role": "user", "content": previous}]


def with_recent(
    store: Store, ids: dict[str, str], bm25: Bm25[str], user: dict, number: int
) -> dict[str, list]:
    """The ``--recent`` methods' rankings of query ``number`` (see the module docstring)."""
    question, said = in_context(user, number)
    session = f"q{number}"
    ranked = {
        "question alone": memories_first(store, ids, question),
        "BM25, question alone": bm25.search(question, LIMIT),
        "BM25, context + question": bm25.search(
            "\n".join([*(t["content"] for t in said), question]), LIMIT
        ),
    }
    store.log(said, session=session)
    for n in RECENT:
        ranked[f"question + --recent {n}"] = memories_first(
            store, ids, question, recent=n, session=session
        )
    return ranked


def score(ranked: list[str], answers: list[str]) -> tuple[float, bool]:
    top = set(ranked[:LIMIT])
    held = sum(1 for a in answers if a in top)
    return held / len(answers), held > 0


def above(ranked: list[str], new: str, old: str) -> bool:
    """The correction ranks above what it corrected (absent counts as last)."""
    place = {key: n for n, key in enumerate(ranked)}
    return place.get(new, 10**6) < place.get(old, 10**6)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lang", choices=("zh", "en"), action="append")
    parser.add_argument("--show", type=int, default=0, help="print N tuned-half misses")
    parser.add_argument(
        "--ablate", action="store_true", help="also each adjustment toggled (_common.ABLATIONS)"
    )
    parser.add_argument("--no-recent", action="store_true", help="skip the --recent methods")
    args = parser.parse_args()
    langs = args.lang or ["zh", "en"]
    methods: tuple[str, ...] = ("recall (default)", "BM25 (in-process)")
    methods += tuple(c.ABLATIONS) if args.ablate else ()
    if not args.no_recent:
        methods += ("question alone", "BM25, question alone", "BM25, context + question")
        methods += tuple(f"question + --recent {n}" for n in RECENT)
    rows: list[dict] = []
    misses: list[str] = []
    from soloqueue_mem.api.store import Store

    work = Path(tempfile.mkdtemp(prefix="bench-longquery-"))
    try:
        for lang in langs:
            for line in (DATA / f"longquery_{lang}.jsonl").read_text(encoding="utf-8").splitlines():
                user = json.loads(line)
                store, ids = ingest(work / f"{lang}-{user['user']}", user)
                if not args.no_recent:
                    asked, asked_ids = ingest(work / f"{lang}-{user['user']}-recent", user)
                held = set(ids.values())
                bm25 = Bm25([(m["id"], m["content"]) for m in user["memories"] if m["id"] in held])
                replaced = {fix["new"]: fix["old"] for fix in user.get("corrections", [])}
                ablated = {  # the same store read with each adjustment toggled
                    name: Store(store.root, config=store.config._replace(**off), clock=store.now)
                    for name, off in (c.ABLATIONS.items() if args.ablate else ())
                }
                for number, query in enumerate(user["queries"]):
                    ranked = {
                        methods[0]: recalled(store, ids, query["query"]),
                        methods[1]: bm25.search(query["query"], LIMIT),
                    }
                    for name, other in ablated.items():
                        ranked[name] = recalled(other, ids, query["query"])
                    if not args.no_recent:
                        ranked |= with_recent(asked, asked_ids, bm25, user, number)
                    for method, found in ranked.items():
                        share, hit = score(found, query["answers"])
                        fixes = [
                            above(found, a, replaced[a]) for a in query["answers"] if a in replaced
                        ]
                        rows.append(
                            {
                                "lang": lang,
                                "half": query["half"],
                                "kind": query["kind"],
                                "bucket": length_bucket(query["query"]),
                                "method": method,
                                "recall": share,
                                "hit": hit,
                                "fixes": fixes,
                            }
                        )
                        if method == methods[0] and share < 1 and query["half"] == "tuned":
                            misses.append(f"{query['id']}: wanted {query['answers']}, got {found}")
                for other in (store, *ablated.values()):
                    other.close()
                if not args.no_recent:
                    asked.close()
            c.note(f"{lang}: done")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(rows, methods, langs)
    for miss in misses[: args.show]:
        c.out(f"- {miss}")
    return 0


def field_is(key: str, value: str) -> Callable[[dict], bool]:
    """Whether a row's ``key`` is ``value``."""
    return lambda row: row[key] == value


def report(rows: list[dict], methods: tuple[str, ...], langs: list[str]) -> None:
    def cell(selected: list[dict]) -> list[str]:
        if not selected:
            return ["-", "-"]
        recall = 100 * sum(r["recall"] for r in selected) / len(selected)
        hit = 100 * sum(r["hit"] for r in selected) / len(selected)
        return [f"{recall:.1f}", f"{hit:.1f}"]

    groups: list[tuple[str, Callable[[dict], bool]]] = [("all", lambda r: True)]
    groups += [(f"half={h}", field_is("half", h)) for h in ("tuned", "heldout")]
    groups += [(f"kind={k}", field_is("kind", k)) for k in ("message", "dialogue")]
    groups += [(f"length {b}", field_is("bucket", b)) for b in ("<100", "100-299", ">=300")]
    table = []
    for lang in langs:
        for name, keep in groups:
            chosen = [r for r in rows if r["lang"] == lang and keep(r)]
            if not chosen:
                continue
            cells = [cell([r for r in chosen if r["method"] == m]) for m in methods]
            gap = float(cells[0][0]) - float(cells[1][0]) if cells[0][0] != "-" else 0.0
            queries = len(chosen) // len(methods)
            ablated = [cell[0] for cell in cells[2:]]
            table.append([lang, name, queries, *cells[0], *cells[1], f"{gap:+.1f}", *ablated])
    c.out("## bench_longquery")
    c.out()
    c.out(c.machine_line(sys.executable))
    c.out()
    c.out(
        c.table(
            [
                "lang",
                "subset",
                "queries",
                "recall@10",
                "hit@10",
                "BM25 recall@10",
                "BM25 hit@10",
                "recall - BM25",
                *(f"{m} recall@10" for m in methods[2:]),
            ],
            table,
        )
    )
    c.out()
    for method in methods:
        fixes = [f for r in rows if r["method"] == method for f in r["fixes"]]
        if fixes:
            c.out(
                f"{method}: a correction ranks above what it corrected in "
                f"{sum(fixes)}/{len(fixes)} answers ({100 * sum(fixes) / len(fixes):.1f}%)."
            )


if __name__ == "__main__":
    sys.exit(main())
