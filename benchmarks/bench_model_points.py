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
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_line, out, table  # noqa: E402
from bench_scenarios import HALVES, Cli, load, log_session, timeline  # noqa: E402

RELEASE = "The team ships the mobile app release every Friday at noon"
# The point a prompt belongs to (a phrase of its zh or en text), and the fixed answer;
# extraction alternates two near-duplicate facts (so dedup has a cluster to judge)
# and restates a preference (so it is promoted to the persona).
POINTS = {
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


class FakeModel:
    """Counts each request's point and answers with the point's fixed answer."""

    def __init__(self) -> None:
        self.requests: Counter[str] = Counter()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                point = point_of(body["messages"][0]["content"])
                fake.requests[point] += 1
                answer = POINTS[point][1] if point in POINTS else "NONE"
                if isinstance(answer, list):
                    answer = answer[fake.requests[point] % len(answer)]
                payload = json.dumps({"choices": [{"message": {"content": answer}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http.server_address[1]}/v1"

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


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
    fake = FakeModel()
    try:
        counted, with_model = run(args.python, scenario, fake.url)
    finally:
        fake.close()
    _, rules_only = run(args.python, scenario, None)
    out("# The model's calls per point (fake model on loopback)")
    out()
    out(machine_line(args.python))
    out()
    sessions = sum(1 for _, kind, _ in timeline(scenario) if kind == "session")
    out(f"Scenario `{scenario['id']}`: {sessions} sessions, nightly consolidate.")
    out()
    rows = [
        [point, fake.requests[point], counted[point]]
        for point in [*POINTS, "unknown"]
        if fake.requests[point] or point in POINTS
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
