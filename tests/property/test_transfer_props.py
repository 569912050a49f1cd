"""Export → import into an empty store → export gives the same bytes, for random
memories (any Unicode text, chains, counters, expiry), kv values (any JSON), logged
sessions, graphs (nodes, links dangling or not, focus, queued tasks) and vectors
(STYLE §2.11's round-trip property)."""

from __future__ import annotations

import struct
import tempfile
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from soloqueue_mem.config import Config
from soloqueue_mem.graph.db import SqlGraph
from soloqueue_mem.graph.dump import NodeRecord, put_back_node
from soloqueue_mem.graph.store import Scope as GraphScope
from soloqueue_mem.home import Home
from soloqueue_mem.memory import store
from soloqueue_mem.memory.model import Memory
from soloqueue_mem.ops.dump_file import write_dump
from soloqueue_mem.ops.export import Scope, export
from soloqueue_mem.ops.import_dump import import_dump
from soloqueue_mem.semantic import dump as vectors
from soloqueue_mem.sessions.events import Event
from soloqueue_mem.sessions.writer import log_events
from soloqueue_mem.state import values
from soloqueue_mem.storage.sqlite.stores import open_graph, open_memory, open_state
from soloqueue_mem.storage.transfer import open_sources, target_opener

NOW = datetime(2026, 11, 26, 8, tzinfo=UTC)
SETTINGS = settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)
STAMP = st.sampled_from(["2026-01-01T00:00:00.000Z", "2026-11-26T07:59:59.999Z", None])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)


@st.composite
def memories(draw: st.DrawFn) -> list[Memory]:
    count = draw(st.integers(0, 5))
    ids = [f"{n:032x}" for n in range(1, count + 1)]
    found = []
    for number, memory_id in enumerate(ids):
        later = ids[number + 1 :]
        found.append(
            Memory(
                id=memory_id,
                group=draw(st.sampled_from(["default", "g1"])),
                agent="default",
                type=draw(st.sampled_from(["FACT", "PREFERENCE", "RULE", "SKILL", "ERROR"])),
                priority=draw(st.sampled_from(["TRANSIENT", "LONG_TERM", "PERMANENT"])),
                content=draw(TEXT),
                subject=draw(TEXT),
                predicate=draw(TEXT),
                source="manual",
                source_episode_id=None,
                tags=draw(st.lists(TEXT, max_size=2)),
                importance=draw(st.floats(0, 1)),
                confidence=draw(st.floats(0, 1)),
                access_count=draw(st.integers(0, 100)),
                decay_rate=0.1,
                created_at="2026-01-01T00:00:00.000Z",
                updated_at="2026-01-02T00:00:00.000Z",
                last_accessed_at=draw(STAMP),
                expires_at=draw(STAMP),
                superseded_by=draw(st.sampled_from([None, *later])) if later else None,
                archived_at=draw(STAMP),
                fixed_expiry=draw(st.booleans()),
            )
        )
    return found


@st.composite
def graphs(draw: st.DrawFn) -> list[NodeRecord]:
    """Nodes 1..n of two agents, links to any id up to n + 2 (past n: dangling)."""
    count = draw(st.integers(0, 4))
    nodes = []
    for node_id in range(1, count + 1):
        targets = draw(st.lists(st.integers(1, count + 2), max_size=3, unique=True))
        links = [
            {"to_id": to_id, "strength": draw(st.floats(0, 1)),
             "relation": draw(st.sampled_from([None, "下文", "上文"]))}
            for to_id in sorted(targets)
        ]  # fmt: skip
        nodes.append(
            NodeRecord(node_id, "default", draw(st.sampled_from(["default", "bob"])),
                       draw(TEXT), draw(TEXT), draw(st.lists(TEXT, max_size=3)),
                       "2026-01-01T00:00:00.000Z", draw(st.integers(0, 9)), links)
        )  # fmt: skip
    return nodes


def add_graph(home: Home, config: Config, nodes: list[NodeRecord], task: str | None) -> None:
    graph = SqlGraph(open_graph(home, config))
    try:
        for node in nodes:
            assert put_back_node(graph, node) == "added"
        for agent in ("default", "bob"):
            held = [n.id for n in nodes if n.agent == agent]
            with graph.transaction():
                graph.push_focus(GraphScope("default", agent), held, 2)
        if task is not None:
            message = [{"role": "user", "content": task}]
            graph.enqueue(GraphScope("default", "bob"), message, "2026-01-01", 9)
    finally:
        graph.close()


def add_vectors(memory, rows: list[Memory], values: list[float]) -> None:
    vector = struct.pack(f"<{len(values)}f", *values)
    for number, row in enumerate(rows):
        digest = f"{number % 2:064x}"  # two items may share a vector
        cached = vectors.Cached("m", digest, len(values), vector, "2026-01-01T00:00:00.000Z")
        vectors.put_back_cached(memory, cached)
        link = vectors.Linked("m", "memory", row.id, row.group, row.agent, digest)
        assert vectors.put_back_linked(memory, link) == "added"


def dump_of(root: Path) -> bytes:
    home = Home(root)
    with ExitStack() as stack:
        sources = open_sources(stack, home, Config())
        lines: list[str] = []
        write_dump(export(home, sources, Scope(), with_blobs=True), lines.append)
        return "".join(lines).encode()


def load(root: Path, dump: bytes) -> dict:
    with ExitStack() as stack:
        targets = target_opener(stack, Home(root), Config())
        return import_dump(lambda: dump.splitlines(keepends=True), targets)


@SETTINGS
@given(
    rows=memories(),
    kv=st.dictionaries(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), JSON, max_size=3),
    turns=st.lists(TEXT, max_size=4),
    nodes=graphs(),
    task=st.none() | TEXT,
    vector=st.lists(st.floats(-1, 1, width=32), min_size=1, max_size=4),
)
def test_export_import_export_is_byte_identical(rows, kv, turns, nodes, task, vector):
    with tempfile.TemporaryDirectory() as scratch:
        source, target = Path(scratch) / "a", Path(scratch) / "b"
        home, config = Home(source), Config()
        memory = open_memory(home, config)
        for row in rows:
            assert store.put_back(memory, row) == "added"
        events = [(None, Event("user", text, [], [], NOW, session="s1")) for text in turns]
        list(log_events(home, memory, events, ("default", "default", None), config, NOW))
        add_vectors(memory, rows, vector)
        memory.close()
        add_graph(home, config, nodes, task)
        state = open_state(home, config)
        for key, value in kv.items():
            values.put(state, "kv_store", ("default", "default"), key, value, NOW)
        state.close()
        first = dump_of(source)
        report = load(target, first)
        assert report["conflicts"] == []
        assert dump_of(target) == first
        again = load(target, first)
        assert again["added"] == {} and again["conflicts"] == []
