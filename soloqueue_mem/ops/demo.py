"""``demo``: a throw-away store, a short bilingual agent session, shown back.

It exercises the real code paths (log, offloading of a large tool output into the
artifact store, the index, trace, export) on a temporary data directory, so
``pip install . && soloqueue-mem demo`` proves an installation works.
"""

from __future__ import annotations

import tempfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from soloqueue_mem.clock import iso
from soloqueue_mem.config import Config
from soloqueue_mem.home import Home
from soloqueue_mem.memory.recall import Request
from soloqueue_mem.sessions.events import SessionKey, parse_event
from soloqueue_mem.sessions.reader import openai_messages
from soloqueue_mem.sessions.turns import Scope
from soloqueue_mem.sessions.writer import LoggedTurn
from soloqueue_mem.storage.catalog import offloader as new_offloader
from soloqueue_mem.storage.sqlite.backend import SqliteBackend
from soloqueue_mem.text.lexicon import open_lexicon

DEMO_EVENTS: list[dict[str, Any]] = [
    {"role": "user", "content": "帮我看看为什么数据库连接总是超时？"},
    {
        "role": "assistant",
        "content": "I'll read the config file first.",
        "tool_calls": [{"id": "call_1", "name": "read_file", "input": {"path": "config.toml"}}],
    },
    {
        "role": "tool",
        "content": "",
        "tool_results": [
            {
                "tool_use_id": "call_1",
                "content": "busy_timeout_ms = 500\nretries = 0",
                "is_error": False,
            }
        ],
    },
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "call_2", "name": "run_shell", "input": {"cmd": "cat server.log"}}],
    },
    {
        "role": "tool",
        "content": "",
        "tool_results": [
            {
                "tool_use_id": "call_2",
                "content": "".join(
                    f"2026-11-26 03:{n // 60:02d}:{n % 60:02d} WARN db: connection wait "
                    f"{480 + n % 40} ms (busy_timeout=500)\n"
                    for n in range(120)
                ),
                "is_error": False,
            }
        ],
    },
    {"role": "assistant", "content": "busy_timeout 只有 500 毫秒，太短了。建议改成 5000 毫秒。"},
    {
        "role": "user",
        "content": "Great. I prefer timeouts of at least 5 seconds.",
    },
]
DEMO_QUERIES = ["数据库超时", "busy timeout config"]
RECALL_QUERY = "数据库超时应该设多少 timeout"


def run_demo(now: datetime, base: Path | None = None) -> dict[str, Any]:
    """Log the demo session into a fresh store; return what a user would look at."""
    with tempfile.TemporaryDirectory(prefix="soloqueue-demo-", dir=base) as tmp:
        home = Home(Path(tmp) / ".soloqueue")
        backend = SqliteBackend(home, Config())
        offloader = new_offloader(home, backend.config, now)
        try:
            items = [
                (n, parse_event({**e, "timestamp": iso(now + timedelta(seconds=n))}))
                for n, e in enumerate(DEMO_EVENTS, start=1)
            ]
            scope = ("default", "demo", "demo-session")
            logged = [
                t for t in backend.log(items, scope, now, offloader) if isinstance(t, LoggedTurn)
            ]
            lexicon = open_lexicon(home.cache_dir)
            searches = {q: backend.trace(q, Scope(), 3, lambda: lexicon) for q in DEMO_QUERIES}
            first = logged[0]
            key = SessionKey(first.group, first.agent, first.session)
            content = backend.session(key)
            ended = backend.session_end(key, now).digest
            recalled = backend.recall(Request(RECALL_QUERY), now, lambda: lexicon)
        finally:
            offloader.close()
            backend.close()
        return {
            "root": str(home.root),
            "logged": logged,
            "searches": searches,
            "openai": openai_messages(content.records),
            "episode": ended.episodes[0],
            "memories": [r.memory for r in ended.remembered],
            "recall": recalled.hits,
        }
