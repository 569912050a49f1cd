#!/usr/bin/env python3
"""The model's calls per point on an agent scenario, with a fake model on loopback.

A chat-completions server on 127.0.0.1, started here, replays fixed answers per
point, telling the point by its prompt: per-turn ``extraction`` (a restated preference
and one of two near-duplicate facts, in turn), the episode ``summary``, the
``scratchpad`` rewrite, the ``dedup`` judgment (the first memory is best, the others
duplicates), the ``identity`` compile and the ``persona`` of promoted traits. A
scenario of ``data/agent_scenarios_tuned.jsonl`` is driven through the real CLI as
``bench_scenarios.py`` drives it (``log --batch`` and ``session end`` per session,
``consolidate`` every night), once with the model configured and once without it (the
floor: the rules alone, no call). The report gives the requests per point, the calls
``consolidate`` counted in its reports, and the memories each run left.

Run: ``python benchmarks/bench_model_points.py [--scenario ID] [--python PATH]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_line, out, table  # noqa: E402
from _fake_model import FakeChat  # noqa: E402
from bench_scenarios import HALVES, Cli, load, log_session, timeline  # noqa: E402

RELEASE = "The team ships the mobile app release every Friday at noon"
# The point a prompt belongs to (a phrase of its zh or en text), and the fixed answer;
# extraction alternates two near-duplicate facts (so dedup has a cluster to judge)
# and restates a preference (so it is promoted to the persona).
POINTS: dict[str, tuple[tuple[str, ...], str | list[str]]] = {
    "extraction": (
        ('"update_hint"',),
        [
            json.dumps(
                [
                    {
                        "type": "PREFERENCE",
                        "subject": "user",
                        "predicate": "answers",
                        "content": "User prefers short answers",
                    },
                    {"type": "FACT", "content": fact},
                ]
            )
            for fact in (RELEASE, RELEASE + " UTC")
        ],
    ),  # fmt: skip
    "summary": (("概括下面这段对话", "say what happened in this"), "The user worked on the app."),
    "scratchpad": (("工作记忆草稿本", "working-memory scratchpad"), "## 近期进展\n- worked\n"),
    "dedup": (('"duplicates"',), json.dumps({"best": 1, "duplicates": [2]})),
    "persona": (("用户画像", "user persona"), "- Likes short answers\n"),
    "identity": (("精简为", "从以下用户档案", "Condense", "Extract what is known"), "- known\n"),
}


def point_of(prompt: str) -> str:
    for point, (phrases, _) in POINTS.items():
        if any(phrase in prompt for phrase in phrases):
            return point
    return "unknown"


def fixed_answer(body: dict[str, Any], asked: Counter[str]) -> tuple[int, str]:
    """The fixed answer to a request, by the point its prompt belongs to."""
    point = point_of(body["messages"][0]["content"])
    asked[point] += 1
    answer = POINTS[point][1] if point in POINTS else "NONE"
    if isinstance(answer, list):  # answers taken in turn
        answer = answer[(asked[point] - 1) % len(answer)]
    return 200, answer


def run(python: str, scenario: dict[str, Any], url: str | None) -> tuple[Counter[str], int]:
    """The scenario through the CLI: consolidate's model calls per point, and the
    active memories it ends with."""
    counted: Counter[str] = Counter()
    with tempfile.TemporaryDirectory(prefix="sq-model-points-") as folder:
        cli = Cli(python, scenario, Path(folder))
        if url is not None:
            cli.base.update(SOLOQUEUE_LLM_URL=url, SOLOQUEUE_LLM_MODEL="fake")
        last = None
        for when, kind, payload in timeline(scenario):
            last = when
            if kind == "session":
                log_session(cli, scenario, payload, when, False)
            elif kind == "consolidate":
                report = json.loads(cli.run(["consolidate", "--format", "json"], when))
                counted.update(report["model"].get("points", {}))
        assert last is not None
        memories = json.loads(cli.run(["memory", "list", "--format", "json"], last))
    return counted, len(memories)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", help="a scenario id of the tuned half (default: first)")
    parser.add_argument("--python", default=sys.executable, help="whose soloqueue-mem to run")
    args = parser.parse_args()
    scenarios = load(HALVES["tuned"])
    scenario = next(s for s in scenarios if args.scenario in (None, s["id"]))
    asked: Counter[str] = Counter()
    with FakeChat(lambda body: fixed_answer(body, asked)) as fake:
        counted, with_model = run(args.python, scenario, fake.url)
    _, rules_only = run(args.python, scenario, None)
    out("# The model's calls per point (fake model on loopback)")
    out()
    out(machine_line(args.python))
    out()
    sessions = sum(1 for _, kind, _ in timeline(scenario) if kind == "session")
    out(f"Scenario `{scenario['id']}`: {sessions} sessions, nightly consolidate.")
    out()
    rows = [
        [point, asked[point], counted[point]]
        for point in [*POINTS, "unknown"]
        if asked[point] or point in POINTS
    ]
    out(table(["point", "requests to the fake", "counted by consolidate"], rows))
    out()
    out(
        f"Active memories at the end: {with_model} with the model, "
        f"{rules_only} with the rules alone (the floor: no call)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
