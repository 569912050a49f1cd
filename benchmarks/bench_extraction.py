#!/usr/bin/env python3
"""Quick-rule extraction against a labelled set: precision and recall.

The set (``data/extraction_set.jsonl``, written by someone who had not read the
patterns) has one thing a user said to an agent per line::

    {"id", "lang": "zh|en|mixed", "half": "tuned|heldout", "category", "text",
     "expect": ["short strings: the facts a correct extractor keeps"],
     "corrects": "id of an earlier item whose value this one changes" (optional)}

Every ``text`` goes through ``soloqueue_mem.lifecycle.extract.from_text`` (plans
resolved against a fixed turn time). A memory **matches** an expected fact when its
content holds every key word of it, case-folded:

- the fact's Latin words and numbers (``[a-z0-9]`` runs), except a few function
  words ("the", "is", "our", ...), each as a whole word of the content;
- its Chinese characters, except function characters (的 了 是 都 我 们 ...), each
  somewhere in the content (the memory is one clause, so this stays strict).

**Precision** is the share of extracted memories that match an expected fact of their
own item (a non-statement expects none, so anything extracted from it is a false
positive); **recall** the share of expected facts that some memory of their item
matches. Both are given per half, per language and per category. **Corrections**: for
each item with ``corrects``, the earlier item's memories and then this one's are
stored through ``remember`` in a fresh store; the correction counts as applied when
none of the earlier item's memories is still active beside it (an item
that corrects one value of several counts as not applied: a strict reading). **Wrong
supersedes**: all items of the half stored in order in one store; each memory a later
one supersedes counts unless it came from the item the later one ``corrects``
(superseding the wrong memory takes it out of recall). **Wrong joins** (with the
``semantic`` extra): all items' memories of a half in one scope through consolidate's
dedup, embeddings included; each pair it joins from two items neither of which corrects
the other counts (the items say different things), those across languages apart.

The held-out half is scored but its misses and false positives are only listed with
``--show-heldout``: tune on the tuned half only. The older sets under
``tests/data/extraction_*.jsonl`` (``{"text", "lang", "expected": [{"type",
"content_contains"}]}``) are read too with ``--data``: each expected memory becomes a
fact whose key words are its substrings.

Run: ``python benchmarks/bench_extraction.py [--data PATH ...] [--half tuned|heldout]
[--show-heldout]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
import tempfile
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "benchmarks" / "data" / "extraction_set.jsonl"
# Plans ("next week …") resolve their day against the turn's time: a fixed one here.
SAID_AT = datetime(2026, 11, 26, 8, tzinfo=UTC)
_LATIN_FUNCTION = frozenset(
    "the a an is are was be to of in on for and or with at by as our my we i you it"
    " this that user users".split()
)
_HAN_FUNCTION = frozenset("的了是在都也就和与及我们你他她它这那个用户吧呢啊")

if importlib.util.find_spec("soloqueue_mem") is None:
    sys.path.insert(0, str(REPO))

from soloqueue_mem.lifecycle.extract import from_text  # noqa: E402


class Counts(NamedTuple):
    memories: int = 0
    precise: int = 0  # memories that match an expected fact of their item
    facts: int = 0
    found: int = 0  # expected facts some memory matches

    def plus(self, other: Counts) -> Counts:
        """Field by field (a tuple's ``+`` concatenates)."""
        return Counts(*(a + b for a, b in zip(self, other, strict=True)))

    @property
    def precision(self) -> float:
        return self.precise / self.memories if self.memories else 1.0

    @property
    def recall(self) -> float:
        return self.found / self.facts if self.facts else 1.0


class Outcome(NamedTuple):
    row: dict[str, Any]
    memories: list[str]
    false_positives: list[str]
    misses: list[str]

    @property
    def counts(self) -> Counts:
        memories, facts = len(self.memories), len(self.row["expect"])
        return Counts(
            memories, memories - len(self.false_positives), facts, facts - len(self.misses)
        )


def load(path: Path = DATA) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [_normalized(json.loads(line), n) for n, line in enumerate(lines) if line.strip()]


def _normalized(row: dict[str, Any], number: int) -> dict[str, Any]:
    """A row of an older set in the new shape (see the module doc)."""
    if "expected" not in row:
        return row
    expect = [" ".join(e["content_contains"]) for e in row["expected"]]
    kind = row["expected"][0]["type"].lower() if row["expected"] else "non_statement"
    return {"id": str(number), "half": "tuned", "category": kind, "expect": expect, **row}


def key_words(fact: str) -> tuple[set[str], set[str]]:
    """(Latin words and numbers, Chinese characters) a matching memory must hold."""
    folded = fact.casefold()
    latin = {w for w in re.findall(r"[a-z0-9]+", folded) if w not in _LATIN_FUNCTION}
    han = {c for c in re.findall(r"[\u4e00-\u9fff]", folded) if c not in _HAN_FUNCTION}
    return latin, han


def matches(content: str, fact: str) -> bool:
    latin, han = key_words(fact)
    folded = content.casefold()
    words = set(re.findall(r"[a-z0-9]+", folded))
    return bool(latin or han) and latin <= words and all(c in folded for c in han)


def judge(row: dict[str, Any]) -> Outcome:
    memories = [d.content for d in from_text(row["text"], SAID_AT)]
    false_positives = [m for m in memories if not any(matches(m, f) for f in row["expect"])]
    misses = [f for f in row["expect"] if not any(matches(m, f) for m in memories)]
    return Outcome(row, memories, false_positives, misses)


def tally(outcomes: list[Outcome]) -> dict[str, Counts]:
    """Counts per half, and per half and language or category."""
    found: dict[str, Counts] = defaultdict(Counts)
    for outcome in outcomes:
        row = outcome.row
        for key in ("all", f"lang:{row['lang']}", f"category:{row['category']}"):
            name = f"{row['half']} {key}"
            found[name] = found[name].plus(outcome.counts)
    return dict(sorted(found.items()))


def evaluate(path: Path = DATA) -> dict[str, Counts]:
    return tally([judge(row) for row in load(path)])


def corrections(rows: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """(applied, total) over the items that correct an earlier one (see the module doc),
    for all of them and by the half of the correcting item."""
    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.memory import store
    from soloqueue_mem.storage.sqlite.stores import open_memory

    by_id = {row["id"]: row for row in rows}
    pairs = [(by_id[r["corrects"]], r) for r in rows if r.get("corrects") in by_id]
    applied: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as folder:
        for number, (earlier, later) in enumerate(pairs):
            conn = open_memory(Home(Path(folder) / str(number)), Config())
            assert conn is not None
            old = [store.remember(conn, d, "g", "a", SAID_AT).memory.id for d in _drafts(earlier)]
            new = {store.remember(conn, d, "g", "a", SAID_AT).memory.id for d in _drafts(later)}
            active = {m.id for m in store.active(conn, SAID_AT)}
            stale = [m for m in old if m not in new and m in active]
            done = bool(old) and bool(new) and not stale
            applied.update({"all": done, later["half"]: done})
            conn.close()
    totals = Counter(["all"] * len(pairs) + [later["half"] for _, later in pairs])
    return {name: (applied[name], total) for name, total in sorted(totals.items())}


def wrong_supersedes(rows: list[dict[str, Any]]) -> tuple[int, int]:
    """(memories superseded wrongly, items that correct nothing): every item's memories
    stored in order in one store; a supersede is wrong unless the earlier memory came
    from the item this one ``corrects``."""
    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.memory import store
    from soloqueue_mem.storage.sqlite.stores import open_memory

    wrong = 0
    origin: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as folder:
        conn = open_memory(Home(Path(folder)), Config())
        assert conn is not None
        for row in rows:
            for draft in _drafts(row):
                done = store.remember(conn, draft, "g", "a", SAID_AT)
                wrong += sum(origin.get(old) != row.get("corrects") for old in done.superseded)
                origin.setdefault(done.memory.id, row["id"])
        conn.close()
    return wrong, sum(1 for r in rows if not r.get("corrects"))


def wrong_joins(rows: list[dict[str, Any]]) -> list[tuple[str, str]] | None:
    """With the semantic extra (else None): consolidate's dedup over every memory of
    ``rows`` in one scope, embeddings included; the contents of each pair it joins that
    came from two items, neither correcting the other (items of a labelled set say
    different things: any such join loses a fact)."""
    from soloqueue_mem.lifecycle import dedup
    from soloqueue_mem.lifecycle.consolidate import same_meaning

    same = same_meaning()
    if same is None:
        return None
    items, origin = [], {}
    for row in rows:
        for number, draft in enumerate(_drafts(row)):
            key = f"{row['id']}.{number}"
            items.append(dedup.Item(key, ("g", "a", draft.type), draft.content, (0.5, 0.5, 0, key)))
            origin[key] = row
    content = {item.id: item.content for item in items}
    _, pairs = dedup.settled(items, None, same)
    return [
        (content[a], content[b])
        for a, b in pairs
        if origin[a]["id"] != origin[b]["id"]
        and origin[b]["id"] != origin[a].get("corrects")
        and origin[a]["id"] != origin[b].get("corrects")
    ]


def _drafts(row: dict[str, Any]) -> list[Any]:
    return from_text(row["text"], SAID_AT)


def _cell(text: str) -> str:
    return text.replace("\n", "\\n").replace("|", "\\|")


def report(outcomes: list[Outcome], name: str, show: set[str]) -> str:
    rows = [o.row for o in outcomes]
    lines = [
        f"# Quick-rule extraction: {name}",
        "",
        f"{len(rows)} items, {sum(len(r['expect']) for r in rows)} expected facts, "
        f"{sum(1 for r in rows if not r['expect'])} items that should yield nothing.",
        "",
        "| slice | memories | precise | precision | facts | found | recall |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for key, c in tally(outcomes).items():
        lines.append(
            f"| {key} | {c.memories} | {c.precise} | {c.precision:.3f} "
            f"| {c.facts} | {c.found} | {c.recall:.3f} |"
        )
    if any(r.get("corrects") for r in rows):
        lines += ["", "| corrections applied (the earlier value superseded) | applied | total |"]
        lines += ["|---|---:|---:|"]
        for name, (applied, total) in corrections(rows).items():
            lines.append(f"| {name} | {applied} | {total} |")
        lines += ["", "| wrong supersedes (a half in one store, in order) | wrong | items |"]
        lines += ["|---|---:|---:|"]
        for half in sorted({r["half"] for r in rows}):
            wrong, others = wrong_supersedes([r for r in rows if r["half"] == half])
            lines.append(f"| {half} | {wrong} | {others} that correct nothing |")
    lines += _joins_report(rows, show)
    shown = [o for o in outcomes if o.row["half"] in show]
    lines += ["", f"## Misses ({', '.join(sorted(show)) or 'none shown'})", ""]
    lines += ["| id | category | text | expected |", "|---|---|---|---|"]
    for o in shown:
        for miss in o.misses:
            lines.append(
                f"| {o.row['id']} | {o.row['category']} | {_cell(o.row['text'])} | {_cell(miss)} |"
            )
    lines += ["", "## False positives", ""]
    lines += ["| id | category | text | extracted |", "|---|---|---|---|"]
    for o in shown:
        for content in o.false_positives:
            lines.append(
                f"| {o.row['id']} | {o.row['category']} | {_cell(o.row['text'])} "
                f"| {_cell(content)} |"
            )
    return "\n".join(lines) + "\n"


def _joins_report(rows: list[dict[str, Any]], show: set[str]) -> list[str]:
    """:func:`wrong_joins` per half, those across languages apart; the pairs of the
    halves in ``show`` listed."""
    lines = [
        "",
        "| wrong joins at dedup (a half in one scope, semantic) | all | across languages |",
    ]
    lines += ["|---|---:|---:|"]
    listed = []
    for half in sorted({r["half"] for r in rows}):
        joins = wrong_joins([r for r in rows if r["half"] == half])
        if joins is None:
            return ["", "(wrong joins at dedup: the semantic extra is not installed)"]
        across = [p for p in joins if len({bool(re.search(r"[\u4e00-\u9fff]", t)) for t in p}) == 2]
        lines.append(f"| {half} | {len(joins)} | {len(across)} |")
        listed += [pair for pair in joins if half in show]
    lines += [f"- {_cell(a)} / {_cell(b)}" for a, b in listed]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, action="append", help="a labelled JSONL file")
    parser.add_argument("--half", choices=("tuned", "heldout"), help="score one half only")
    parser.add_argument("--show-heldout", action="store_true", help="list held-out errors")
    args = parser.parse_args()
    show = {"tuned", "heldout"} if args.show_heldout else {"tuned"}
    for number, path in enumerate(args.data or [DATA]):
        rows = [r for r in load(path) if args.half in (None, r["half"])]
        outcomes = [judge(row) for row in rows]
        sys.stdout.write(("\n" if number else "") + report(outcomes, path.name, show))


if __name__ == "__main__":
    main()
