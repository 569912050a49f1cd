#!/usr/bin/env python3
"""Check that two installs rank alike: every hit of ``recall`` byte-identical.

A speed change on the recall path must not change what recall returns. Each
interpreter given with ``--python`` (the installs of two branches, or one install and
``--pythonpath`` a checkout) recalls the same requests in one process on the same
store, with the clock pinned: bench_trace.py's 20 queries and a few long ones (pasted
messages of 300-600 characters, a bare time expression), each plainly, with
``limit=30``, with ``recent=3`` and on the ``traces`` channel alone. The hits' JSON
(``--explain`` form) is compared, leaving out what a recall itself changes (each
returned memory counts as accessed, which renews its expiry; the access signal weighs 0
by default).

Run: ``python benchmarks/check_recall_same.py --python OLD --python NEW [--store DIR]``
(default store: bench_recall.py's 1,000,000-turn one; ~1 min per install there).
Exit status 1 and the first difference when the answers differ.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import _common as c
import bench_trace

LONG = [
    "我们上个月讨论过数据库迁移的问题，当时大家觉得服务器的性能不够，需要换一个更大的机器。后来北京"
    "的同事说他们公司最近在研究新的技术方案，可能会用分布式的存储。我想知道这个项目现在的进度怎么样"
    "了，有没有遇到什么新的问题？另外，我妹妹下周要坐飞机去上海开会，她说航班可能会延误，你还记得她"
    "说过什么吗？还有，周五可以上线吗？",
    "今天天气很好，我们一家人去了山里的村子，看到了很多樱花和松鼠。孩子们非常开心，一直在跑来跑去。"
    "晚上回来以后，我想起来之前说过要整理一下照片。你能帮我回忆一下上次我们去博物馆看画展是什么时候"
    "吗？那个画廊的名字我忘了，好像是在市中心附近。",
    "I have been thinking about the project deadline all week. The database server error we "
    "saw on Monday came back again yesterday, and the team is not sure whether it is the new "
    "configuration or the old hardware. My sister called to say her flight was delayed, and "
    "she wanted to know if the meeting could move to Thursday. Can you remind me what we "
    "decided about the schedule, and what did we say about the painting for the gallery?",
    "Tell me about the weather in the mountain village last time we went there. I remember it "
    "rained for three days, and we spent most of the time in the small cafe near the station, "
    "talking about dance classes. There was a man who played the xylophone in the square "
    "every evening. Please find anything we wrote about hotels, trains and prices.",
    "what happened last week",
    "上周五我们开会说了什么",
]
VARIANTS = [{}, {"limit": 30}, {"recent": 3}, {"channels": ["traces"]}]
CHANGED_BY_RECALL = ("access", "expires_at")  # keys holding these: the access signal too

DUMP = """
import json, sys
from soloqueue_mem import Store
from soloqueue_mem.api.shapes import recall_hit_json
from soloqueue_mem.clock import parse_timestamp

store_dir, now, changed = sys.argv[1], parse_timestamp(sys.argv[2]), json.loads(sys.argv[3])


def without(value):
    if isinstance(value, dict):
        return {k: without(v) for k, v in value.items() if not any(c in k for c in changed)}
    return [without(v) for v in value] if isinstance(value, list) else value


queries, variants = json.load(sys.stdin)
store = Store(store_dir, clock=lambda: now)
answers = []
for query in queries:
    for variant in variants:
        result = store.recall(query, **variant)
        hits = [without(recall_hit_json(hit, True, store.config)) for hit in result.hits]
        answers.append({"query": query, "variant": variant, "notes": result.notes,
                        "left_out": result.left_out, "shortened": result.shortened,
                        "hits": hits})
json.dump(answers, sys.stdout, ensure_ascii=False, sort_keys=True)
"""


def answers(python: str, pythonpath: str | None, store: str, now: str) -> list[dict]:
    env = c.timing_env(**({"PYTHONPATH": pythonpath} if pythonpath else {}))
    queries = [query for _, query in bench_trace.queries()] + LONG
    proc = subprocess.run(
        [python, "-c", DUMP, store, now, json.dumps(CHANGED_BY_RECALL)],
        input=json.dumps([queries, VARIANTS]).encode(),
        capture_output=True,
        env=env,
        cwd=c.neutral_cwd(),
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{python}: {proc.stderr.decode(errors='replace')[-2000:]}")
    return json.loads(proc.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python", action="append", required=True, help="interpreter (twice)")
    parser.add_argument("--pythonpath", action="append", help="PYTHONPATH of each, in order")
    parser.add_argument("--store", default=str(c.CACHE / "recall-store-1000000-100000-seed7"))
    args = parser.parse_args()
    if len(args.python) != 2:
        parser.error("give --python twice: the old install and the new one")
    paths = args.pythonpath or [None, None]
    if len(paths) != 2:
        parser.error("give --pythonpath twice (an empty one for an install), or not at all")
    now = json.loads((Path(args.store) / "bench-build.json").read_text())["now"]
    old, new = (
        answers(py, path or None, args.store, now)
        for py, path in zip(args.python, paths, strict=True)
    )
    for before, after in zip(old, new, strict=True):
        if before != after:
            c.out(f"DIFFERENT: {before['query'][:60]!r} {before['variant']}")
            c.out(json.dumps(before, ensure_ascii=False)[:1500])
            c.out(json.dumps(after, ensure_ascii=False)[:1500])
            return 1
    hits = sum(len(answer["hits"]) for answer in new)
    c.out(f"same: {len(new)} recalls, {hits} hits, identical JSON (store {args.store}, now {now})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
