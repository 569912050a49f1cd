#!/usr/bin/env python3
"""Quick-rule extraction against a labelled set: precision and recall.

Each line of ``tests/data/extraction_labelled.jsonl`` is one thing a user said to an
assistant (Chinese or English) with the memories a careful person would store from it
(``expected``: a type and substrings its content must contain; an empty list means
nothing should be stored). Every utterance goes through
``soloqueue_mem.lifecycle.extract.from_text``. A predicted memory is a true positive
when it matches a not yet matched expected memory of the same type whose substrings
all occur in its content (case-folded); each expected memory is matched at most once.

Each set is scored separately. ``extraction_labelled.jsonl`` is the main set; the
rules were improved while looking at its misses and false positives, so its figures
are optimistic. ``extraction_heldout.jsonl`` was written after that, without running
the rules on it first: its first measurement is the fairer estimate (see the README).
``extraction_heldout_v2.jsonl`` (facts in ordinary speech, corrections, plans, task
and behaviour rules) was written before the rules for those were, and run blind once.
``extraction_heldout_mixed.jsonl`` (code-switched developer speech) was written and
committed before the rules for it, and run blind once.

Prints Markdown per set: the figures overall, per language and per type, then every
miss and every false positive. Standard library plus the project.

Run: ``/tmp/venv/bin/python benchmarks/bench_extraction.py [--data PATH ...]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data" / "extraction_labelled.jsonl"
HELDOUT = REPO / "tests" / "data" / "extraction_heldout.jsonl"
HELDOUT_V2 = REPO / "tests" / "data" / "extraction_heldout_v2.jsonl"
HELDOUT_MIXED = REPO / "tests" / "data" / "extraction_heldout_mixed.jsonl"
# Plans ("next week …") resolve their day against the turn's time: a fixed one here.
SAID_AT = datetime(2026, 11, 26, 8, tzinfo=UTC)

if importlib.util.find_spec("soloqueue_mem") is None:
    sys.path.insert(0, str(REPO))

from soloqueue_mem.lifecycle.extract import from_text  # noqa: E402


class Counts(NamedTuple):
    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


class Outcome(NamedTuple):
    row: dict[str, Any]
    matched: list[tuple[tuple[str, str], dict[str, Any]]]  # (predicted, expected)
    false_positives: list[tuple[str, str]]  # (type, content)
    misses: list[dict[str, Any]]


def load(path: Path = DATA) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def _matches(predicted: tuple[str, str], expected: dict[str, Any]) -> bool:
    kind, content = predicted
    folded = content.casefold()
    return kind == expected["type"] and all(
        part.casefold() in folded for part in expected["content_contains"]
    )


def judge(row: dict[str, Any]) -> Outcome:
    predicted = [(d.type, d.content) for d in from_text(row["text"], SAID_AT)]
    open_ = list(row["expected"])
    matched, false_positives = [], []
    for item in predicted:
        hit = next((e for e in open_ if _matches(item, e)), None)
        if hit is None:
            false_positives.append(item)
        else:
            open_.remove(hit)
            matched.append((item, hit))
    return Outcome(row, matched, false_positives, open_)


def tally(outcomes: list[Outcome]) -> dict[str, Counts]:
    """Counts overall (``all``), per language (``lang:zh``) and per type (``type:FACT``)."""
    found: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for outcome in outcomes:
        lang = outcome.row["lang"]
        events = [(p[0], 0) for p, _ in outcome.matched]
        events += [(p[0], 1) for p in outcome.false_positives]
        events += [(e["type"], 2) for e in outcome.misses]
        for kind, slot in events:
            for key in ("all", f"lang:{lang}", f"type:{kind}"):
                found[key][slot] += 1
    return {key: Counts(*values) for key, values in sorted(found.items())}


def evaluate(path: Path = DATA) -> tuple[list[Outcome], dict[str, Counts]]:
    outcomes = [judge(row) for row in load(path)]
    return outcomes, tally(outcomes)


def _cell(text: str) -> str:
    return text.replace("\n", "\\n").replace("|", "\\|")


def report(outcomes: list[Outcome], counts: dict[str, Counts], name: str) -> str:
    rows = [r.row for r in outcomes]
    negatives = sum(1 for r in rows if not r["expected"])
    langs = {lang: sum(1 for r in rows if r["lang"] == lang) for lang in ("zh", "en")}
    lines = [
        f"# Quick-rule extraction: {name}",
        "",
        f"{len(rows)} utterances ({langs['zh']} Chinese, {langs['en']} English), "
        f"{sum(len(r['expected']) for r in rows)} expected memories, "
        f"{negatives} utterances that should yield nothing.",
        "",
        "| slice | expected | predicted | true pos. | precision | recall |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for key, c in counts.items():
        lines.append(
            f"| {key} | {c.tp + c.fn} | {c.tp + c.fp} | {c.tp} "
            f"| {c.precision:.3f} | {c.recall:.3f} |"
        )
    lines += ["", "## Misses (expected, not extracted)", ""]
    lines += ["| lang | utterance | expected |", "|---|---|---|"]
    for outcome in outcomes:
        for miss in outcome.misses:
            wanted = f"{miss['type']} {miss['content_contains']}"
            lines.append(f"| {outcome.row['lang']} | {_cell(outcome.row['text'])} | {wanted} |")
    lines += ["", "## False positives (extracted, not expected)", ""]
    lines += ["| lang | utterance | extracted |", "|---|---|---|"]
    for outcome in outcomes:
        for kind, content in outcome.false_positives:
            lines.append(
                f"| {outcome.row['lang']} | {_cell(outcome.row['text'])} "
                f"| {kind}: {_cell(content)} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data",
        type=Path,
        action="append",
        help="a labelled JSONL file (repeatable; default: the main and the held-out sets)",
    )
    args = parser.parse_args()
    for number, path in enumerate(args.data or [DATA, HELDOUT, HELDOUT_V2, HELDOUT_MIXED]):
        outcomes, counts = evaluate(path)
        sys.stdout.write(("\n" if number else "") + report(outcomes, counts, path.name))


if __name__ == "__main__":
    main()
