#!/usr/bin/env python3
"""Agent-memory scenarios: does what a user told the agent come back days later?

Each line of ``data/agent_scenarios_tuned.jsonl``, ``data/agent_scenarios_heldout.jsonl``
and ``data/agent_scenarios_dev.jsonl`` (a development set written after the held-out
half's first blind run, to generalise on without looking at it) is one scenario: a
bilingual user working with an agent over about three sessions on different days
(OpenAI-shaped messages: user and assistant turns, assistant ``tool_calls``,
``role: tool`` results, one or more failing tools whose content is an error text
without ``is_error``), then labelled checks. For every scenario the runner
builds a fresh store in a temporary folder and drives the real CLI as hooks would:

* each session is logged with ``log --batch`` (one call per session, every message
  carrying its own ``timestamp`` one minute apart; ``--per-message`` logs one ``log``
  call per message instead, with ``SOLOQUEUE_NOW`` at the message's time), then
  ``session end``;
* ``consolidate`` runs at 03:43 every night from the day after the first session,
  with ``SOLOQUEUE_NOW`` advancing;
* night N is the N-th nightly consolidation after the day of the last session; at
  09:30 that morning each check listing N in ``nights`` is asked through plain
  ``recall QUESTION --format json`` (plus ``--extra-args``) against a copy of the
  store, so asking at night 1 changes nothing that night 10 sees.

With ``--semantic`` (the ``semantic`` extra installed in ``--python``'s environment)
each store's config.toml sets ``search_backend = "hybrid"``: ``consolidate`` embeds
memories and episodes, and ``index --embed --turns`` runs after each logged session,
so ``recall`` fuses the dense channel in.

A check passes when (a) one of its ``expected`` strings occurs, case-folded, in the
``content`` or ``text`` of one of the first 10 hits; (b) no hit that contains one of
its ``absent_before`` strings (an outdated value) and none of the expected ones ranks
above the first expected hit; (c) no *memory* hit among the first 10 contains one of
its ``expect_absent`` strings (a plan whose date is past: turns and episodes are the
historical record and may still mention it; a live memory may not).

The report gives pass rates per half, per night, per category and per scenario, and
lists the tuned half's failures with what came back. Held-out failures are counted but
never shown unless ``--show-heldout`` is given: do not tune on them.

A second pair, ``data/agent_scenarios_dev2.jsonl`` and ``…_heldout2.jsonl`` (``--half
pair2``), was written blind later (six new users, a quarter of the checks corrections,
a quarter of the questions 150-600 characters long): dev2 to generalise on, heldout2
never looked at.

A third pair, ``data/agent_scenarios_dev3.jsonl`` and ``…_heldout3.jsonl`` (``--half
pair3``), was written blind on 2026-11-30 by a writer who had read only the issues and
this docstring: six more users outside software (a vet clinic manager, a game studio
producer, a freight planner, a chemistry PhD student, a landlord, a translator), each
with 17 checks of which five are corrections, a quarter long questions and a third asked
in the other language than the fact was stated: dev3 to generalise on, heldout3 never
looked at.

A fourth pair, ``data/agent_scenarios_dev4.jsonl`` and ``…_heldout4.jsonl`` (``--half
pair4``), was written blind on 2026-11-30 by a writer who had read only the issues and
this docstring: six more users (a restaurant owner, a marathon coach, a wedding planner,
a CCU nurse on shifts, a ceramics seller, an architect; zh-dominant, en-dominant and
mixed in each file), four sessions and 52-55 messages each, 17-18 checks each (one per
file a past plan that must no longer be a live memory, added when the data test asked
for one) of which five are corrections, about a third long questions (150-500
characters, some pasted dialogue) and about a third asked in the other language than the
fact was stated: dev4 to generalise on, heldout4 never looked at.

A fifth pair, ``data/agent_scenarios_dev5.jsonl`` and ``…_heldout5.jsonl`` (``--half
pair5``), was written blind on 2026-11-30 by a writer who had read only the issues and
this docstring: six more users (a bakery chain's operations manager, a podcast producer,
a drone-survey founder, a primary-school principal, a clinical-trial coordinator, a
hotel revenue manager; zh-dominant, en-dominant and mixed in each file), four sessions
and 48-55 messages each, 17 checks each of which five are corrections and one a past
plan that must no longer be a live memory, about a third long questions (150-500
characters, some pasted group chat) and about a third asked in the other language than
the fact was stated: dev5 to generalise on, heldout5 never looked at.

A sixth pair, ``data/agent_scenarios_dev6.jsonl`` and ``…_heldout6.jsonl`` (``--half
pair6``), was written blind on 2026-11-30 by a writer who had read only the issues and
this docstring: six more users (a dental clinic manager, a game composer, a hardware
startup CTO, a green-coffee exporter, a fintech support lead, a climbing-gym owner;
zh-dominant, en-dominant and mixed in each file), four sessions and 50-55 messages each
with two failing tools, 19 checks each of which seven are corrections (a number with a
unit, a vendor, a person handing over a role, a date or time, a reversed rule, a price
or quota, a place; said outright, only as a new value, inside a long message, by the
assistant confirming, as "not X, Y", or as a slip corrected a minute later) and one a
past plan that must no longer be a live memory, about a third long questions (150-550
characters, some pasted group chat) and about a third asked in the other language than
the fact was stated: dev6 to generalise on, heldout6 never looked at.

A seventh pair, ``data/agent_scenarios_dev7.jsonl`` and ``…_heldout7.jsonl`` (``--half
pair7``), was written blind on 2026-12-01 by a writer who had read only the issues and
this docstring: six more users (an ice-sculpture festival coordinator, a legal-tech
paralegal, a cross-border Amazon seller, a solar-installer dispatcher, a silk-embroidery
studio owner, a data journalist; zh-dominant, en-dominant and mixed in each file), four
sessions and 50-54 messages each with two failing tools, 19 checks each of which seven
are corrections (said outright, only as a new value, inside a long message, by the
assistant confirming, as "not X, Y", or as a slip corrected a minute later) and one a
past plan that must no longer be a live memory, about a third long questions (150-480
characters, some pasted chat) and about a third asked in the other language than the
fact was stated: dev7 to generalise on, heldout7 never looked at.

An eighth pair, ``data/agent_scenarios_dev8.jsonl`` and ``…_heldout8.jsonl`` (``--half
pair8``), was written blind on 2026-12-01 by a writer who had read only the issues and
this docstring: six more users (a hotpot-chain franchise manager, an immigration
consultant, a livestreaming-agency producer, a port crane-maintenance supervisor, a
boutique-hotel owner, a children's-book illustrator; zh-dominant, en-dominant and mixed in
each file), three or four sessions and 47-55 messages each with two or more failing tools,
19 checks each of which seven are corrections (said outright, only as a new value, inside
a long message, by the assistant confirming, as "not X, Y", or as a slip corrected a
minute later) and one a past plan that must no longer be a live memory, about a third
long questions (150-470 characters, some pasted chat) and about a third asked in the
other language than the fact was stated: dev8 to generalise on, heldout8 never looked at.

A ninth pair, ``data/agent_scenarios_dev9.jsonl`` and ``…_heldout9.jsonl`` (``--half
pair9``), was written blind on 2026-12-01 by a writer who had read only the issues and
this docstring: six more users (a seafood-export QA lead, a wine-tour operator, an
EV-battery test engineer, a festival box-office manager, a riverside guesthouse owner, a
K-beauty importer; zh-dominant, en-dominant and mixed in each file), four sessions and
48-55 messages each with two or more failing tools, 19 checks each of which seven are
corrections (said outright, only as a new value, inside a long message, by the assistant
confirming, as "not X, Y", or as a slip corrected a minute later) and one a past plan
that must no longer be a live memory, about a third long questions (150-630 characters,
some pasted chat) and about a third asked in the other language than the fact was
stated: dev9 to generalise on, heldout9 never looked at.

A tenth pair, ``data/agent_scenarios_dev10.jsonl`` and ``…_heldout10.jsonl`` (``--half
pair10``), was written blind on 2026-12-01 by a writer who had read only the issues and
this docstring: six more users (a Wuyishan rock-tea factory's production manager, a
piano technician, a museum registrar handling an incoming loan, a Hulunbuir cattle-ranch
manager, a TV location manager, a giant-panda keeper; zh-dominant, en-dominant and mixed
in each file), four sessions and 54-55 messages each with two or more failing tools, 19
checks each of which seven are corrections (said outright, only as a new value, inside a
long message, by the assistant confirming, as "not X, Y", as a slip corrected a minute
later, or as a role handed over across sessions) and one a past plan that must no longer
be a live memory, about a third long questions (150-440 characters, some pasted chat)
and about a third asked in the other language than the fact was stated: dev10 to
generalise on, heldout10 never looked at.

An eleventh pair, ``data/agent_scenarios_dev11.jsonl`` and ``…_heldout11.jsonl``
(``--half pair11``), was written blind on 2026-12-01 by a writer who had read only the
issues and this docstring: six more users (a rare-book conservator at a city library, a
touring theatre company stage manager, an equestrian club manager, the storage-section
head of a state grain reserve depot, a ski patrol director, an escape-room studio owner;
zh-dominant, en-dominant and mixed in each file), four sessions and 50-53 messages each
with two or more failing tools, 19 checks each of which seven are corrections (said
outright, only as a new value, inside a long message, by the assistant confirming, as
"not X, Y", as a slip corrected a minute later, or as a role handed over across
sessions) and one a past plan that must no longer be a live memory, about a third long
questions (150-390 characters, some pasted group chat) and about a third asked in the
other language than the fact was stated: dev11 to generalise on, heldout11 never looked
at.

Run: ``python benchmarks/bench_scenarios.py [--quick]
[--half tuned|heldout|dev|both|pair2|pair3|pair4|pair5|pair6|pair7|pair8|pair9|pair10|pair11]
[--extra-args "--limit 10"] [--per-message]
[--semantic] [--ablate] [--show-heldout] [--json-out PATH] [--keep DIR]``.
``--ablate`` asks every check again with each ranking adjustment of
``_common.ABLATIONS`` toggled and prints the pass rates beside.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bm25 import Bm25, length_bucket  # noqa: E402
from _common import (  # noqa: E402
    ABLATIONS,
    REPO,
    Ablation,
    changes,
    cli_argv,
    import_project,
    machine_line,
    neutral_cwd,
    note,
    out,
    table,
    unsourced,
)

import_project()

DATA = REPO / "benchmarks" / "data"
HALVES = {
    "tuned": DATA / "agent_scenarios_tuned.jsonl",
    "heldout": DATA / "agent_scenarios_heldout.jsonl",
    "dev": DATA / "agent_scenarios_dev.jsonl",
    "dev2": DATA / "agent_scenarios_dev2.jsonl",
    "heldout2": DATA / "agent_scenarios_heldout2.jsonl",
    "dev3": DATA / "agent_scenarios_dev3.jsonl",
    "heldout3": DATA / "agent_scenarios_heldout3.jsonl",
    "dev4": DATA / "agent_scenarios_dev4.jsonl",
    "heldout4": DATA / "agent_scenarios_heldout4.jsonl",
    "dev5": DATA / "agent_scenarios_dev5.jsonl",
    "heldout5": DATA / "agent_scenarios_heldout5.jsonl",
    "dev6": DATA / "agent_scenarios_dev6.jsonl",
    "heldout6": DATA / "agent_scenarios_heldout6.jsonl",
    "dev7": DATA / "agent_scenarios_dev7.jsonl",
    "heldout7": DATA / "agent_scenarios_heldout7.jsonl",
    "dev8": DATA / "agent_scenarios_dev8.jsonl",
    "heldout8": DATA / "agent_scenarios_heldout8.jsonl",
    "dev9": DATA / "agent_scenarios_dev9.jsonl",
    "heldout9": DATA / "agent_scenarios_heldout9.jsonl",
    "dev10": DATA / "agent_scenarios_dev10.jsonl",
    "heldout10": DATA / "agent_scenarios_heldout10.jsonl",
    "dev11": DATA / "agent_scenarios_dev11.jsonl",
    "heldout11": DATA / "agent_scenarios_heldout11.jsonl",
}
TOP = 10
CONSOLIDATE_AT = "03:43"
ASK_AT = "09:30"
CATEGORIES = (
    "fact",
    "correction",
    "cross_language",
    "preference",
    "rule",
    "personal",
    "plan",
    "temporal",
    "tool_error",
    "episode",
)
NIGHTS = (1, 10, 30)


def load(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def is_cross_language(check: dict[str, Any]) -> bool:
    """Asked in one language about something stated in the other (mixed counts neither)."""
    langs = {check.get("q_lang"), check.get("stated_lang")}
    return langs == {"zh", "en"}


# --- time line ---------------------------------------------------------------------


def at(start: date, day: int, hhmm: str, minutes: int = 0) -> datetime:
    hour, minute = map(int, hhmm.split(":"))
    base = datetime(start.year, start.month, start.day, hour, minute, tzinfo=UTC)
    return base + timedelta(days=day, minutes=minutes)


def stamp(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def timeline(scenario: dict[str, Any]) -> list[tuple[datetime, str, Any]]:
    """Every action of a scenario in time order: (when, kind, payload)."""
    start = date.fromisoformat(scenario["start_date"])
    last_day = max(s["day"] for s in scenario["sessions"])
    nights = sorted({n for c in scenario["checks"] for n in c["nights"]})
    actions: list[tuple[datetime, str, Any]] = []
    for session in scenario["sessions"]:
        actions.append((at(start, session["day"], session["start"]), "session", session))
    for day in range(1, last_day + (nights[-1] if nights else 0) + 1):
        actions.append((at(start, day, CONSOLIDATE_AT), "consolidate", day))
    for night in nights:
        actions.append((at(start, last_day + night, ASK_AT), "ask", night))
    actions.sort(key=lambda a: (a[0], a[1]))
    return actions


# --- the CLI -------------------------------------------------------------------------


class Cli:
    def __init__(self, python: str, scenario: dict[str, Any], root: Path) -> None:
        self.argv = cli_argv(python)
        base = {k: v for k, v in os.environ.items() if not k.startswith("SOLOQUEUE_")}
        base.pop("PYTHONDONTWRITEBYTECODE", None)
        base.update(
            SOLOQUEUE_GROUP=scenario["group"],
            SOLOQUEUE_AGENT=scenario["agent"],
        )
        self.base = base
        self.home = root / "home"
        self.calls = 0
        self.seconds = 0.0

    def run(
        self,
        args: list[str],
        now: datetime,
        stdin: bytes | None = None,
        home: Path | None = None,
    ) -> bytes:
        env = dict(self.base, SOLOQUEUE_HOME=str(home or self.home), SOLOQUEUE_NOW=stamp(now))
        started = time.perf_counter()
        proc = subprocess.run(
            [*self.argv, *args],
            env=env,
            cwd=neutral_cwd(),
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
        )
        self.seconds += time.perf_counter() - started
        self.calls += 1
        if proc.returncode != 0:
            raise RuntimeError(
                f"soloqueue-mem {' '.join(args)[:160]} exited {proc.returncode}: "
                f"{proc.stderr.decode(errors='replace')[-1500:]}"
            )
        return proc.stdout


def log_session(
    cli: Cli, scenario: dict[str, Any], session: dict[str, Any], when: datetime, per_message: bool
) -> None:
    start = date.fromisoformat(scenario["start_date"])
    sid = f"{scenario['id']}-{session['id']}"
    last = when
    lines = []
    for index, message in enumerate(session["messages"]):
        last = at(start, session["day"], session["start"], minutes=index)
        event = dict(message, timestamp=stamp(last))
        if per_message:
            cli.run(
                ["--quiet", "log", "--session", sid, "--format", "text"],
                last,
                stdin=json.dumps(message, ensure_ascii=False).encode(),
            )
        else:
            lines.append(json.dumps(event, ensure_ascii=False))
    if not per_message:
        data = ("\n".join(lines) + "\n").encode()
        cli.run(["--quiet", "log", "--batch", "--session", sid, "--format", "text"], last, data)
    cli.run(["--quiet", "session", "end", sid, "--format", "json"], last + timedelta(minutes=1))


def ask(cli: Cli, question: str, when: datetime, extra: list[str], home: Path) -> list[dict]:
    raw = cli.run(["recall", question, "--format", "json", *extra], when, home=home)
    text = raw.decode("utf-8").strip()
    hits = json.loads(text) if text else []
    return hits if isinstance(hits, list) else []


def store_items(home: Path, when: datetime) -> Bm25[tuple[int, str, str]]:
    """The plain BM25 baseline over every item the store holds at ``when``: turns
    (with their tool calls and results), active memories and episodes."""
    conn = sqlite3.connect(f"file:{home / 'memory.db'}?mode=ro", uri=True)
    try:
        now = stamp(when)
        rows = conn.execute(
            "SELECT 'turn', content || ' ' || coalesce(tool_calls, '') || ' '"
            " || coalesce(tool_results, '') FROM conversation_turns"
            " UNION ALL SELECT 'memory', content FROM memories WHERE superseded_by IS NULL"
            " AND archived_at IS NULL AND (expires_at IS NULL OR expires_at > ?)"
            " UNION ALL SELECT 'episode', summary FROM episodes",
            (now,),
        ).fetchall()
    finally:
        conn.close()
    return Bm25([((n, kind, text), text) for n, (kind, text) in enumerate(rows)])


def bm25_hits(index: Bm25, question: str) -> list[dict[str, Any]]:
    return [{"kind": kind, "content": text} for _, kind, text in index.search(question, TOP)]


def first_answer(check: dict[str, Any], hits: list[dict[str, Any]]) -> int | None:
    expected = check.get("expected") or []
    return next((i for i, h in enumerate(hits[:TOP]) if expected and _contains(h, expected)), None)


# --- scoring -------------------------------------------------------------------------


def _haystack(hit: dict[str, Any]) -> str:
    return f"{hit.get('content') or ''}\n{hit.get('text') or ''}".casefold()


def _contains(hit: dict[str, Any], needles: list[str]) -> bool:
    hay = _haystack(hit)
    return any(n.casefold() in hay for n in needles)


def judge(check: dict[str, Any], hits: list[dict[str, Any]]) -> tuple[bool, str]:
    """(passed, reason): see the module docstring for the three conditions."""
    top = hits[:TOP]
    expected = check.get("expected") or []
    reasons = []
    first = None
    if expected:
        first = next((i for i, h in enumerate(top) if _contains(h, expected)), None)
        if first is None:
            reasons.append("expected not in top 10")
    stale = check.get("absent_before") or []
    if stale and first is not None:
        outdated = next(
            (i for i, h in enumerate(top) if _contains(h, stale) and not _contains(h, expected)),
            None,
        )
        if outdated is not None and outdated < first:
            reasons.append(f"outdated value at rank {outdated + 1} above the answer at {first + 1}")
    gone = check.get("expect_absent") or []
    if gone:
        live = [i for i, h in enumerate(top) if h.get("kind") == "memory" and _contains(h, gone)]
        if live:
            reasons.append(f"expired plan still a live memory at rank {live[0] + 1}")
    if not reasons:
        return True, f"answer at rank {first + 1}" if first is not None else "absent as expected"
    return False, "; ".join(reasons)


# --- one scenario ---------------------------------------------------------------------


class Timing(TypedDict):
    """What a scenario's run cost and what its last night's checks found."""

    calls: int  # CLI processes
    cli_seconds: float
    recall_seconds: float
    second_run: int  # what a second consolidate right after the last night changed
    checked: int  # rules memories checked against their turns
    unsourced: list[tuple[str, str]]  # (content, first turn) of those not in them
    nights: int


def run_scenario(
    python: str,
    half: str,
    scenario: dict[str, Any],
    extra: list[str],
    per_message: bool,
    lexicons: Path | None = None,
    keep: Path | None = None,
    semantic: bool = False,
    ablate: bool = False,
) -> tuple[list[dict[str, Any]], Timing]:
    """Build the scenario's store, run its nights, ask its checks.

    With ``ablate`` each check is asked again of the same probe once per
    ``_common.ABLATIONS`` entry, its settings appended to the probe's config.toml.

    ``lexicons`` is a folder shared by the run: the segmentation lexicon (a cache built
    from jieba's dictionary alone, ~1.5 s) is copied from there into each new store's
    cache folder, and the first store's is kept there.
    """
    results = []
    with tempfile.TemporaryDirectory(prefix="sq-scenario-") as folder:
        root = Path(folder)
        cli = Cli(python, scenario, root)
        first = timeline(scenario)[0][0]
        cli.run(["--quiet", "init"], first - timedelta(hours=1))
        if semantic:
            with (cli.home / "config.toml").open("a", encoding="utf-8") as config:
                config.write('\nsearch_backend = "hybrid"\n')
        if lexicons is not None:
            (cli.home / "cache").mkdir(exist_ok=True)
            for path in lexicons.glob("lexicon-*"):
                shutil.copy2(path, cli.home / "cache" / path.name)
        recall_seconds = 0.0
        second_run = 0
        actions = timeline(scenario)
        last_night = max((p for _, k, p in actions if k == "consolidate"), default=None)
        for when, kind, payload in actions:
            if kind == "session":
                log_session(cli, scenario, payload, when, per_message)
                if semantic:
                    done = when + timedelta(minutes=len(payload["messages"]) + 2)
                    cli.run(["--quiet", "index", "--embed", "--turns", "--format", "json"], done)
            elif kind == "consolidate":
                cli.run(["--quiet", "consolidate", "--format", "json"], when)
                if payload == last_night:  # a fixpoint: run again at once, nothing changes
                    again = cli.run(["--quiet", "consolidate", "--format", "json"], when)
                    second_run = changes(json.loads(again))
            else:
                night = payload
                probe = root / f"probe-night-{night}"
                shutil.copytree(cli.home, probe)
                baseline = store_items(probe, when)
                for check in scenario["checks"]:
                    if night not in check["nights"]:
                        continue
                    started = time.perf_counter()
                    hits = ask(cli, check["question"], when, extra, probe)
                    recall_seconds += time.perf_counter() - started
                    passed, reason = judge(check, hits)
                    plain = bm25_hits(baseline, check["question"])
                    ablated = (
                        {
                            name: _ask_ablated(cli, check, when, extra, probe, settings)
                            for name, settings in ABLATIONS.items()
                        }
                        if ablate
                        else {}
                    )
                    results.append(
                        {
                            "ablated": ablated,
                            "half": half,
                            "scenario": scenario["id"],
                            "check": check["id"],
                            "night": night,
                            "category": check["category"],
                            "cross_language": is_cross_language(check),
                            "passed": passed,
                            "reason": reason,
                            "bm25_passed": judge(check, plain)[0],
                            "first": first_answer(check, hits),
                            "bm25_first": first_answer(check, plain),
                            "question": check["question"],
                            "expected": check.get("expected"),
                            "absent_before": check.get("absent_before"),
                            "expect_absent": check.get("expect_absent"),
                            "hits": [
                                {
                                    "kind": h.get("kind"),
                                    "channel": h.get("channel"),
                                    "content": (h.get("content") or "")[:160],
                                }
                                for h in hits[:TOP]
                            ],
                        }
                    )
                shutil.rmtree(probe)
        if keep is not None:
            shutil.copytree(cli.home, keep / scenario["id"], dirs_exist_ok=True)
        if lexicons is not None:
            for path in (cli.home / "cache").glob("lexicon-*"):
                if not (lexicons / path.name).exists():
                    shutil.copy2(path, lexicons / path.name)
        checked, unsourced_ = unsourced(cli.home / "memory.db")
        timing: Timing = {
            "calls": cli.calls,
            "cli_seconds": cli.seconds,
            "recall_seconds": recall_seconds,
            "second_run": second_run,
            "checked": checked,
            "unsourced": unsourced_,
            "nights": last_night or 0,
        }
    return results, timing


def _ask_ablated(
    cli: Cli,
    check: dict[str, Any],
    when: datetime,
    extra: list[str],
    probe: Path,
    settings: Ablation,
) -> dict[str, Any]:
    """The check asked of ``probe`` with ``settings`` in its config.toml, then the
    config restored: whether it passed and where the first answer ranked."""
    config = probe / "config.toml"
    before = config.read_text(encoding="utf-8") if config.exists() else ""
    lines = "".join(f"\n{key} = {value}" for key, value in settings.items())
    config.write_text(before + lines + "\n", encoding="utf-8")
    try:
        hits = ask(cli, check["question"], when, extra, probe)
    finally:
        config.write_text(before, encoding="utf-8")
    return {"passed": judge(check, hits)[0], "first": first_answer(check, hits)}


# --- report --------------------------------------------------------------------------


def rate(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "—"
    passed = sum(r["passed"] for r in rows)
    return f"{passed}/{len(rows)} ({100 * passed / len(rows):.1f}%)"


def ablated_answer(name: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A check's answer with ablation ``name`` (``--ablate``)."""
    return lambda row: row["ablated"][name]


def _passed_and_first(
    rows: list[dict[str, Any]], answer: Callable[[dict[str, Any]], dict[str, Any]]
) -> tuple[str, str]:
    """The pass rate of ``rows`` and, among the checks of a corrected value, how often
    the current value ranks first, reading each row's ``passed``/``first`` through
    ``answer`` (recall's own, BM25's, or an ablation's)."""
    fixes = [r for r in rows if r["absent_before"]]
    return (
        rate([answer(r) for r in rows]),
        rate([{"passed": answer(r)["first"] == 0} for r in fixes]),
    )


def _cell(text: str, width: int = 120) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def report(
    results: list[dict[str, Any]],
    halves: list[str],
    sets: dict[str, list[dict[str, Any]]],
    show_heldout: bool,
) -> None:
    out("## Pass rate per half and night")
    out()
    header = ["half", "scenarios", "checks", "asked", *[f"night {n}" for n in NIGHTS], "all"]
    rows: list[Sequence[object]] = []
    for half in halves:
        mine = [r for r in results if r["half"] == half]
        checks = sum(len(s["checks"]) for s in sets[half])
        rows.append(
            [half, len(sets[half]), checks, len(mine)]
            + [rate([r for r in mine if r["night"] == n]) for n in NIGHTS]
            + [f"**{rate(mine)}**"]
        )
    out(table(header, rows))
    out()
    out("Beside it, a plain BM25 index over every item of the same stores (`_bm25.py`), and")
    out("the checks of a corrected value whose current value ranks first:")
    out()
    rows = []
    for half in halves:
        mine = [r for r in results if r["half"] == half]
        ours, fixed = _passed_and_first(mine, lambda r: r)
        plain, plain_fixed = _passed_and_first(
            mine, lambda r: {"passed": r["bm25_passed"], "first": r["bm25_first"]}
        )
        rows.append([half, ours, plain, fixed, plain_fixed])
    out(table(["half", "recall", "BM25", "correction first: recall", "BM25"], rows))
    out()
    ablations = sorted({name for r in results for name in r["ablated"]})
    if ablations:
        out("Each adjustment toggled (`--ablate`), the same probes: pass rate, and")
        out("the corrected value first:")
        out()
        rows = []
        for half in halves:
            mine = [r for r in results if r["half"] == half]
            rows.append([half, "default", *_passed_and_first(mine, lambda r: r)])
            for name in ablations:
                asked = _passed_and_first(mine, ablated_answer(name))
                rows.append([half, name, *asked])
        out(table(["half", "ranking", "recall", "correction first"], rows))
        out()
    out("By the question's length in characters (the buckets of every recall benchmark):")
    out()
    rows = []
    for half in halves:
        for bucket in ("<100", "100-299", ">=300"):
            mine = [
                r for r in results if r["half"] == half and length_bucket(r["question"]) == bucket
            ]
            if mine:
                bm25_rows = [{"passed": r["bm25_passed"]} for r in mine]
                rows.append([half, bucket, len(mine), rate(mine), rate(bm25_rows)])
    out(table(["half", "length", "asked", "recall", "BM25"], rows))
    out()
    out("## Per category (all nights)")
    out()
    cats = [c for c in CATEGORIES if any(r["category"] == c for r in results)]
    cats += sorted({r["category"] for r in results} - set(cats))
    rows = []
    for cat in cats:
        rows.append(
            [cat]
            + [
                rate([r for r in results if r["half"] == h and r["category"] == cat])
                for h in halves
            ]
        )
    rows.append(
        ["*question in the other language* (any category)"]
        + [rate([r for r in results if r["half"] == h and r["cross_language"]]) for h in halves]
    )
    out(table(["category", *halves], rows))
    out()
    out("## Per category and night")
    out()
    rows = []
    for cat in cats:
        row = [cat]
        for half in halves:
            for n in NIGHTS:
                row.append(
                    rate(
                        [
                            r
                            for r in results
                            if r["half"] == half and r["category"] == cat and r["night"] == n
                        ]
                    )
                )
        rows.append(row)
    out(table(["category", *[f"{h} n{n}" for h in halves for n in NIGHTS]], rows))
    out()
    out("## Per scenario")
    out()
    rows = []
    for half in halves:
        for scenario in sets[half]:
            mine = [r for r in results if r["scenario"] == scenario["id"]]
            rows.append(
                [half, scenario["id"], _cell(scenario.get("persona", ""), 70)]
                + [rate([r for r in mine if r["night"] == n]) for n in NIGHTS]
                + [rate(mine)]
            )
    out(table(["half", "scenario", "user", *[f"night {n}" for n in NIGHTS], "all"], rows))
    for half in halves:
        failures = [r for r in results if r["half"] == half and not r["passed"]]
        out()
        out(f"## Failures: {half} ({len(failures)})")
        out()
        if half.startswith("heldout") and not show_heldout:
            out(
                "Not shown: the held-out half is not tuned on. Counts per category are in the "
                "tables above; `--show-heldout` lists them."
            )
            continue
        if not failures:
            out("None.")
            continue
        rows = []
        for r in failures:
            want = (
                r["expected"]
                if r["expected"]
                else [f"absent: {s}" for s in (r["expect_absent"] or [])]
            )
            if r["absent_before"]:
                want = [*want, f"not above: {', '.join(r['absent_before'])}"]
            got = " ‖ ".join(
                f"{i + 1}.{h['kind'][0]}:{_cell(h['content'], 60)}"
                for i, h in enumerate(r["hits"][:3])
            )
            rows.append(
                [
                    r["check"],
                    r["night"],
                    r["category"],
                    _cell(r["question"], 60),
                    _cell(" / ".join(want), 50),
                    r["reason"],
                    f"{len(r['hits'])} hits: {got}" if r["hits"] else "no hits",
                ]
            )
        out(
            table(
                ["check", "night", "category", "question", "wanted", "why", "top 3 returned"], rows
            )
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--half",
        choices=(
            "tuned",
            "heldout",
            "dev",
            "dev2",
            "heldout2",
            "dev3",
            "heldout3",
            "dev4",
            "heldout4",
            "dev5",
            "heldout5",
            "dev6",
            "heldout6",
            "dev7",
            "heldout7",
            "dev8",
            "heldout8",
            "dev9",
            "heldout9",
            "dev10",
            "heldout10",
            "dev11",
            "heldout11",
            "both",
            "pair2",
            "pair3",
            "pair4",
            "pair5",
            "pair6",
            "pair7",
            "pair8",
            "pair9",
            "pair10",
            "pair11",
        ),
        default="both",
        help=(
            "both = tuned + heldout; pair2 = dev2 + heldout2; pair3 = dev3 + heldout3;"
            " pair4 = dev4 + heldout4; pair5 = dev5 + heldout5; pair6 = dev6 + heldout6;"
            " pair7 = dev7 + heldout7; pair8 = dev8 + heldout8; pair9 = dev9 + heldout9;"
            " pair10 = dev10 + heldout10; pair11 = dev11 + heldout11; dev is run on its own"
        ),
    )
    parser.add_argument("--quick", action="store_true", help="one scenario per half")
    parser.add_argument("--scenario", action="append", help="only this scenario id (repeatable)")
    parser.add_argument(
        "--extra-args", default="", help='extra recall arguments, e.g. "--limit 10"'
    )
    parser.add_argument(
        "--per-message", action="store_true", help="one log call per message, as a hook does"
    )
    parser.add_argument(
        "--show-heldout", action="store_true", help="also list the held-out half's failures"
    )
    parser.add_argument(
        "--semantic",
        action="store_true",
        help='search_backend = "hybrid" in every store, turns embedded after each session',
    )
    parser.add_argument(
        "--ablate", action="store_true", help="also ask each check with each adjustment toggled"
    )
    parser.add_argument("--json-out", type=Path, help="write every check's result here")
    parser.add_argument("--keep", type=Path, help="copy each scenario's final store here")
    parser.add_argument("--python", default=sys.executable, help="whose soloqueue-mem to run")
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="scenarios run at once (default 1: the machine is shared)",
    )
    args = parser.parse_args()

    pairs = {
        "both": ["tuned", "heldout"],
        "pair2": ["dev2", "heldout2"],
        "pair3": ["dev3", "heldout3"],
        "pair4": ["dev4", "heldout4"],
        "pair5": ["dev5", "heldout5"],
        "pair6": ["dev6", "heldout6"],
        "pair7": ["dev7", "heldout7"],
        "pair8": ["dev8", "heldout8"],
        "pair9": ["dev9", "heldout9"],
        "pair10": ["dev10", "heldout10"],
        "pair11": ["dev11", "heldout11"],
    }
    halves = pairs.get(args.half, [args.half])
    extra = shlex.split(args.extra_args)
    sets = {}
    for half in halves:
        scenarios = load(HALVES[half])
        if args.scenario:
            scenarios = [s for s in scenarios if s["id"] in args.scenario]
        if args.quick:
            scenarios = scenarios[:1]
        sets[half] = scenarios

    out("# Agent-memory scenarios")
    out()
    out(machine_line(args.python))
    out()
    logging = "one log call per message" if args.per_message else "one log --batch per session"
    out(
        f"recall: `{' '.join(['recall', 'QUESTION', '--format', 'json', *extra])}`; "
        f"logging: {logging}; semantic: {'hybrid' if args.semantic else 'off'}; "
        f"a check passes when an expected string is in the top {TOP} "
        "hits (see the script's docstring)."
    )
    out()
    started = time.perf_counter()
    jobs = [(half, scenario) for half in halves for scenario in sets[half]]
    with tempfile.TemporaryDirectory(prefix="sq-lexicon-") as lexicons:

        def one(job: tuple[str, dict[str, Any]]) -> tuple[list[dict[str, Any]], Timing]:
            half, scenario = job
            t0 = time.perf_counter()
            rows, timing = run_scenario(
                args.python,
                half,
                scenario,
                extra,
                args.per_message,
                Path(lexicons),
                args.keep,
                args.semantic,
                args.ablate,
            )
            passed = sum(r["passed"] for r in rows)
            note(
                f"{half}: {scenario['id']}: {passed}/{len(rows)} passed, {timing['calls']} CLI "
                f"calls, {time.perf_counter() - t0:.1f} s"
            )
            return rows, timing

        done = [one(jobs[0])] if jobs else []  # the first one leaves the lexicon for the others
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            done += list(pool.map(one, jobs[1:]))
    results = [row for rows, _ in done for row in rows]
    timings = [timing for _, timing in done]
    elapsed = time.perf_counter() - started
    report(results, halves, sets, args.show_heldout)
    calls = sum(t["calls"] for t in timings)
    out()
    out(
        f"Run: {elapsed:.1f} s wall, {calls} CLI processes "
        f"({sum(t['cli_seconds'] for t in timings):.1f} s in them, "
        f"{sum(t['recall_seconds'] for t in timings):.1f} s in recall)."
    )
    bad = [pair for t in timings for pair in t["unsourced"]]
    out(
        f"A second consolidate right after each scenario's last night (nights: "
        f"{sorted({t['nights'] for t in timings})}) changed "
        f"{sum(t['second_run'] for t in timings)} item(s). Rules memories whose text is "
        f"not in a turn they came from: {len(bad)} of {sum(t['checked'] for t in timings)}"
        f"{': ' + repr(bad[:3]) if bad else ''}."
    )
    if args.json_out:
        hidden = {"hits": None, "reason": "(held-out failure: not shown)"}
        shown = [
            r if r["half"] != "heldout" or args.show_heldout or r["passed"] else r | hidden
            for r in results
        ]
        args.json_out.write_text(
            "\n".join(json.dumps(r, ensure_ascii=False) for r in shown) + "\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
