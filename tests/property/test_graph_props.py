"""Seed 002's invariants, on real graph.db files: the focus LRU, focus protection,
asymmetric decay, importance and target length, dangling links, and best-first recall."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from soloqueue_mem.config import Config
from soloqueue_mem.db.connect import write_tx
from soloqueue_mem.db.stores import open_graph
from soloqueue_mem.graph import queue, store
from soloqueue_mem.graph.compress import compress_node, compress_slice, target_length
from soloqueue_mem.graph.params import Params
from soloqueue_mem.graph.recall import recall
from soloqueue_mem.graph.remember import apply_task
from soloqueue_mem.graph.steps import Steps
from soloqueue_mem.home import Home
from tests.unit.graph.helpers import NOW, SCOPE, add_node, link, set_focus

PARAMS = Params()
SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


class Echo(Steps):
    """Steps without the lexicon: each message is one piece, its words the keywords."""

    def __init__(self) -> None:
        super().__init__(lambda: None)  # type: ignore[arg-type, return-value]

    def segment(self, messages):  # type: ignore[no-untyped-def]
        return [m["content"] for m in messages]

    def process(self, text, target=None):  # type: ignore[no-untyped-def]
        from soloqueue_mem.graph.rules import Processed

        content = text if target is None else text[:target]
        return Processed(content, content[:20], content.split()[:5])

    def relation(self, node, focus):  # type: ignore[no-untyped-def]
        return None


@contextmanager
def fresh_graph() -> Iterator:
    with tempfile.TemporaryDirectory() as folder:
        conn = open_graph(Home(Path(folder) / ".soloqueue"), Config())
        try:
            yield conn
        finally:
            conn.close()


def remember(conn, contents: list[str]) -> list[int]:  # type: ignore[no-untyped-def]
    messages = [{"role": "user", "content": c} for c in contents]
    queue.enqueue(conn, SCOPE, messages, NOW, PARAMS.max_queue_size)
    task = queue.head(conn)
    return apply_task(conn, task, Echo(), PARAMS, NOW)


@SETTINGS
@given(st.lists(st.integers(1, 7), min_size=1, max_size=8))
def test_focus_holds_the_newest_nodes_at_most_five_newest_first(batches):
    with fresh_graph() as conn:
        created: list[int] = []
        for number, size in enumerate(batches):
            created += remember(conn, [f"batch {number} piece {n}" for n in range(size)])
            focus = store.focus(conn, SCOPE)
            assert len(focus) <= PARAMS.max_focus_count
            assert focus == list(reversed(created))[: PARAMS.max_focus_count]


@SETTINGS
@given(st.integers(2, 6), st.integers(1, 4))
def test_new_nodes_link_both_ways_to_every_focus_node_and_to_batch_neighbours(old, new):
    with fresh_graph() as conn:
        before = remember(conn, [f"old {n}" for n in range(old)])
        focus = store.focus(conn, SCOPE)
        ids = remember(conn, [f"new {n}" for n in range(new)])
        for node_id in ids:
            for focus_id in focus:
                out = {lk.to_id: lk.strength for lk in store.out_links(conn, node_id)}
                back = {lk.to_id: lk.strength for lk in store.out_links(conn, focus_id)}
                assert out[focus_id] == 1.0 and back[node_id] == 1.0
        for earlier, later in zip(ids, ids[1:], strict=False):
            links = {(lk.to_id, lk.relation, lk.strength) for lk in store.out_links(conn, earlier)}
            assert (later, "下文", 0.5) in links
            links = {(lk.to_id, lk.relation, lk.strength) for lk in store.out_links(conn, later)}
            assert (earlier, "上文", 0.5) in links
        assert set(before) >= set(focus)


@given(st.integers(0, 400), st.floats(0, 5, allow_nan=False))
def test_target_length_is_length_times_importance_capped_at_one(length, importance):
    target = target_length(length, importance)
    assert target == int(length * min(importance, 1.0))
    assert 0 <= target <= length
    if importance >= 1:
        assert target == length


@SETTINGS
@given(st.integers(1, 5), st.integers(1, 6))
def test_focus_nodes_are_never_compressed_and_their_links_never_decay(focused, slices):
    with fresh_graph() as conn:
        others = [add_node(conn, "x" * 60 + f" other {n}") for n in range(4)]
        focus = [add_node(conn, "y" * 60 + f" focus {n}") for n in range(focused)]
        set_focus(conn, focus)
        for f in focus:
            link(conn, f, others[0], 1.0)
        for a, b in zip(others, others[1:], strict=False):
            link(conn, a, b, 0.4)
            link(conn, b, a, 0.4)
        before = {f: store.get_node(conn, f) for f in focus}
        for _ in range(slices):
            compress_slice(conn, SCOPE, Echo(), PARAMS)
        for f in focus:
            assert store.get_node(conn, f) == before[f]  # untouched, scan count too
            assert {lk.to_id: lk.strength for lk in store.out_links(conn, f)}[others[0]] == 1.0
        assert store.importance(conn, others[0], PARAMS.link_break_threshold) >= 1.0
        assert store.get_node(conn, others[0]).content == "x" * 60 + " other 0"


@SETTINGS
@given(st.floats(0.05, 0.65), st.integers(1, 3))
def test_decay_is_asymmetric_when_one_end_is_a_focus(strength, times):
    with fresh_graph() as conn:
        focus_id = add_node(conn, "focus node content that is long enough")
        other = add_node(conn, "z" * 2000)  # importance < 1: compressed each time
        set_focus(conn, [focus_id])
        link(conn, other, focus_id, strength)
        link(conn, focus_id, other, strength)
        link(conn, add_node(conn, "w" * 50), other, 0.3)  # importance below 1
        for _ in range(times):
            compress_node(conn, other, {focus_id}, Echo(), PARAMS)
        forward = {lk.to_id: lk.strength for lk in store.out_links(conn, focus_id)}
        backward = {lk.to_id: lk.strength for lk in store.out_links(conn, other)}
        assert forward[other] == strength  # from the focus: never decays
        expected = strength * PARAMS.decay_rate**times
        if expected >= PARAMS.link_break_threshold:
            assert abs(backward[focus_id] - expected) < 1e-9
        else:
            assert focus_id not in backward


@SETTINGS
@given(st.floats(0.0, 3.0), st.integers(1, 120))
def test_compression_follows_importance_and_the_delete_threshold(importance, length):
    with fresh_graph() as conn:
        node = add_node(conn, "q" * length)
        if importance:
            for n in range(3):
                link(conn, add_node(conn, f"source {n} " * 3), node, importance / 3)
        outcome = compress_node(conn, node, set(), Echo(), PARAMS)
        target = target_length(length, store.importance(conn, node, 0.01) or importance)
        after = store.get_node(conn, node)
        if importance / 3 < PARAMS.link_break_threshold or importance == 0:
            assert outcome == "deleted" and after is None
        elif target < PARAMS.delete_threshold:
            assert outcome == "deleted" and after is None
        elif target >= length:
            assert outcome == "kept" and after.content == "q" * length and after.scan_count == 1
        else:
            assert outcome == "compressed" and len(after.content) <= target


def test_a_deleted_node_leaves_dangling_links_that_recall_reports(home):
    from tests.unit.graph.helpers import graph_db

    conn = graph_db(home)
    focus_id = add_node(conn, "the deploy plan uses Kubernetes", ["deploy"])
    gone = add_node(conn, "tiny")
    set_focus(conn, [focus_id])
    link(conn, focus_id, gone, 1.0, "提到")
    with write_tx(conn):
        store.delete_node(conn, gone)
    assert store.dangling_from(conn, [focus_id]) == [store.Link(focus_id, gone, 1.0, "提到")]
    result = recall(conn, SCOPE, ["deploy"], None, 2, 100, 0.01)
    assert [f.node.id for f in result.found] == [focus_id]
    assert result.dangling == [store.Link(focus_id, gone, 1.0, "提到")]


GRAPHS = st.lists(
    st.tuples(st.integers(0, 11), st.integers(0, 11), st.floats(0.0, 1.0), st.sampled_from("ab")),
    max_size=40,
)


@SETTINGS
@given(GRAPHS, st.lists(st.integers(0, 11), min_size=0, max_size=5, unique=True), st.integers(0, 3))
def test_recall_is_best_first_depth_bounded_each_node_once_and_reads_only(edges, focus, depth):
    with fresh_graph() as conn:
        ids = [add_node(conn, f"memory {n} apple") for n in range(12)]
        for a, b, strength, relation in edges:
            if a != b:
                link(conn, ids[a], ids[b], strength, relation)
        set_focus(conn, [ids[n] for n in focus])
        focus_before = store.focus(conn, SCOPE)
        result = recall(conn, SCOPE, ["APPLE"], None, depth, 0, 0.01)
        found = [f.node.id for f in result.found]
        assert len(found) == len(set(found))  # each node once
        strengths = [f.strength for f in result.found]
        assert strengths == sorted(strengths, reverse=True)  # strongest path first
        assert all(len(f.path) - 1 <= depth for f in result.found)
        assert store.focus(conn, SCOPE) == focus_before  # recall never changes the focus
        if not focus:
            assert found == []
        for f in result.found:  # the path's strength is the product of its links
            product = 1.0
            for a, b in zip(f.path, f.path[1:], strict=False):
                link_strength = {lk.to_id: lk.strength for lk in store.out_links(conn, a)}[b]
                assert link_strength >= 0.01
                product *= link_strength
            assert abs(product - f.strength) < 1e-5
        only_a = recall(conn, SCOPE, ["apple"], ["a"], depth, 0, 0.01)
        assert all(f.relations and set(f.relations) == {"a"} for f in only_a.found)


def test_a_stronger_path_is_returned_before_a_weaker_and_newer_focus_wins_ties(home):
    from tests.unit.graph.helpers import graph_db

    conn = graph_db(home)
    old_focus, new_focus = add_node(conn, "old focus"), add_node(conn, "new focus")
    weak, strong, far = (
        add_node(conn, "weak pear"),
        add_node(conn, "strong pear"),
        add_node(conn, "far pear"),
    )
    tie_old, tie_new = add_node(conn, "tie pear one"), add_node(conn, "tie pear two")
    set_focus(conn, [old_focus, new_focus])
    link(conn, old_focus, weak, 0.3)
    link(conn, new_focus, strong, 0.9)
    link(conn, strong, far, 0.9)  # 0.81 beats the direct 0.3
    link(conn, old_focus, tie_old, 0.5)
    link(conn, new_focus, tie_new, 0.5)
    found = [f.node.id for f in recall(conn, SCOPE, ["pear"], None, 2, 0, 0.01).found]
    assert found == [strong, far, tie_new, tie_old, weak]
    assert far not in [f.node.id for f in recall(conn, SCOPE, ["pear"], None, 1, 0, 0.01).found]
    assert [f.node.id for f in recall(conn, SCOPE, ["pear"], None, 2, 2, 0.01).found] == [
        strong,
        far,
    ]


def test_an_old_node_is_forgotten_in_the_normal_flow_once_it_leaves_the_focus(home):
    from tests.unit.graph.helpers import graph_db

    conn = graph_db(home)
    (first,) = remember(conn, ["the very first thing that was said, long ago " * 3])
    for n in range(10):  # its five successors link it at 1.0, then leave the focus too
        remember(conn, [f"later topic number {n} " * 4])
    assert first not in store.focus(conn, SCOPE)
    assert store.importance(conn, first, 0.01) >= 5.0
    outcomes = []
    for _ in range(200):
        node = store.get_node(conn, first)
        if node is None:
            break
        outcomes.append(compress_node(conn, first, set(store.focus(conn, SCOPE)), Echo(), PARAMS))
        compress_slice(conn, SCOPE, Echo(), PARAMS)
    assert outcomes[0] == "kept" and "compressed" in outcomes  # shorter each time …
    assert store.get_node(conn, first) is None  # … until it is gone
    assert {link.from_id for link in store.in_links(conn, first)} == {2, 3, 4, 5, 6}  # dangling


def reference_recall(conn, keywords, relations, depth, limit, floor):  # type: ignore[no-untyped-def]
    """Seed §4.2's search written plainly: a query per node, whole nodes, every keyword
    parsed. The batched recall must give exactly its answer."""
    import heapq

    wanted = [k.lower() for k in keywords]
    focus_ids = store.focus(conn, SCOPE)
    nodes = store.get_nodes(conn, focus_ids)
    heap = [(-1.0, rank, 0, node_id, [node_id], []) for rank, node_id in enumerate(focus_ids)]
    heapq.heapify(heap)
    taken, found = set(), []
    while heap and (not limit or len(found) < limit):
        negative, rank, hops, node_id, path, names = heapq.heappop(heap)
        if node_id in taken or node_id not in nodes:
            continue
        taken.add(node_id)
        node = nodes[node_id]
        own = {k.lower() for k in node.keywords}
        matched = [w for w in wanted if w in node.content.lower() or w in own]
        if matched and (relations is None or hops > 0):
            found.append((node_id, matched, path, names, round(-negative, 6)))
        if hops >= depth:
            continue
        for lk in store.out_links(conn, node_id, floor):
            if lk.to_id in taken or (relations is not None and lk.relation not in relations):
                continue
            nodes.update(store.get_nodes(conn, [lk.to_id]))
            if lk.to_id in nodes:
                step = (negative * lk.strength, rank, hops + 1, lk.to_id)
                heapq.heappush(heap, (*step, [*path, lk.to_id], [*names, lk.relation]))
    dangling = [lk for f in found for lk in store.dangling_from(conn, [f[0]], floor)]
    return found, dangling


# keywords that only equal a wanted word once lowered, or hide in JSON escapes
KEYWORDS = st.lists(st.sampled_from(["Pear", "\u212aiwi", "梨", 'pe"ar', "kiwi", "other"]))


@SETTINGS
@example([], [['pe"ar'], ["\u212aiwi"], *[[]] * 10], [0, 1], set(), 0, 0, None)
@given(
    GRAPHS,
    st.lists(KEYWORDS, min_size=12, max_size=12),
    st.lists(st.integers(0, 11), min_size=1, max_size=5, unique=True),
    st.sets(st.integers(0, 11), max_size=3),
    st.integers(0, 3),
    st.integers(0, 4),
    st.sampled_from([None, ["a"]]),
)
def test_recall_gives_exactly_the_node_at_a_time_searchs_answer(
    edges, keywords, focus, deleted, depth, limit, relations
):
    words = ["kiwi", "梨", "pear", 'pe"ar']
    with fresh_graph() as conn:
        ids = [
            add_node(conn, f"memory {n}" + (" kiwi" if n % 4 == 0 else ""), keywords[n])
            for n in range(12)
        ]
        for a, b, strength, relation in edges:
            if a != b:
                link(conn, ids[a], ids[b], strength, relation)
        set_focus(conn, [ids[n] for n in focus])
        with write_tx(conn):
            for n in range(1, 12, 2):  # JSON written with \\u escapes reads the same
                escaped = json.dumps(keywords[n], ensure_ascii=True)
                conn.execute(
                    "UPDATE graph_nodes SET keywords_json = ? WHERE node_id = ?", (escaped, ids[n])
                )
            for n in deleted - set(focus):
                store.delete_node(conn, ids[n])
        result = recall(conn, SCOPE, words, relations, depth, limit, 0.01)
        found, dangling = reference_recall(conn, words, relations, depth, limit, 0.01)
        got = [(f.node.id, f.matched, f.path, f.relations, f.strength) for f in result.found]
        assert got == found
        assert result.dangling == dangling
