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
from soloqueue_mem.graph import store
from soloqueue_mem.graph.compress import compress_node, compress_slice, target_length
from soloqueue_mem.graph.db import SqlGraph
from soloqueue_mem.graph.params import Params
from soloqueue_mem.graph.recall import recall
from soloqueue_mem.graph.remember import apply_task
from soloqueue_mem.graph.steps import Steps
from soloqueue_mem.home import Home
from soloqueue_mem.storage.sqlite.stores import open_graph
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
def fresh_graph() -> Iterator[SqlGraph]:
    with tempfile.TemporaryDirectory() as folder:
        db = SqlGraph(open_graph(Home(Path(folder) / ".soloqueue"), Config()))
        try:
            yield db
        finally:
            db.close()


def remember(db, contents: list[str]) -> list[int]:  # type: ignore[no-untyped-def]
    messages = [{"role": "user", "content": c} for c in contents]
    db.enqueue(SCOPE, messages, NOW, PARAMS.max_queue_size)
    task = db.head()
    return apply_task(db, task, Echo(), PARAMS, NOW)


@SETTINGS
@given(st.lists(st.integers(1, 7), min_size=1, max_size=8))
def test_focus_holds_the_newest_nodes_at_most_five_newest_first(batches):
    with fresh_graph() as db:
        created: list[int] = []
        for number, size in enumerate(batches):
            created += remember(db, [f"batch {number} piece {n}" for n in range(size)])
            focus = db.focus(SCOPE)
            assert len(focus) <= PARAMS.max_focus_count
            assert focus == list(reversed(created))[: PARAMS.max_focus_count]


@SETTINGS
@given(st.integers(2, 6), st.integers(1, 4))
def test_new_nodes_link_both_ways_to_every_focus_node_and_to_batch_neighbours(old, new):
    with fresh_graph() as db:
        before = remember(db, [f"old {n}" for n in range(old)])
        focus = db.focus(SCOPE)
        ids = remember(db, [f"new {n}" for n in range(new)])
        for node_id in ids:
            for focus_id in focus:
                out = {lk.to_id: lk.strength for lk in db.out_links(node_id)}
                back = {lk.to_id: lk.strength for lk in db.out_links(focus_id)}
                assert out[focus_id] == 1.0 and back[node_id] == 1.0
        for earlier, later in zip(ids, ids[1:], strict=False):
            links = {(lk.to_id, lk.relation, lk.strength) for lk in db.out_links(earlier)}
            assert (later, "下文", 0.5) in links
            links = {(lk.to_id, lk.relation, lk.strength) for lk in db.out_links(later)}
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
    with fresh_graph() as db:
        others = [add_node(db, "x" * 60 + f" other {n}") for n in range(4)]
        focus = [add_node(db, "y" * 60 + f" focus {n}") for n in range(focused)]
        set_focus(db, focus)
        for f in focus:
            link(db, f, others[0], 1.0)
        for a, b in zip(others, others[1:], strict=False):
            link(db, a, b, 0.4)
            link(db, b, a, 0.4)
        before = {f: db.get_node(f) for f in focus}
        for _ in range(slices):
            compress_slice(db, SCOPE, Echo(), PARAMS)
        for f in focus:
            assert db.get_node(f) == before[f]  # untouched, scan count too
            assert {lk.to_id: lk.strength for lk in db.out_links(f)}[others[0]] == 1.0
        assert db.importance(others[0], PARAMS.link_break_threshold) >= 1.0
        assert db.get_node(others[0]).content == "x" * 60 + " other 0"


@SETTINGS
@given(st.floats(0.05, 0.65), st.integers(1, 3))
def test_decay_is_asymmetric_when_one_end_is_a_focus(strength, times):
    with fresh_graph() as db:
        focus_id = add_node(db, "focus node content that is long enough")
        other = add_node(db, "z" * 2000)  # importance < 1: compressed each time
        set_focus(db, [focus_id])
        link(db, other, focus_id, strength)
        link(db, focus_id, other, strength)
        link(db, add_node(db, "w" * 50), other, 0.3)  # importance below 1
        for _ in range(times):
            compress_node(db, other, {focus_id}, Echo(), PARAMS)
        forward = {lk.to_id: lk.strength for lk in db.out_links(focus_id)}
        backward = {lk.to_id: lk.strength for lk in db.out_links(other)}
        assert forward[other] == strength  # from the focus: never decays
        expected = strength * PARAMS.decay_rate**times
        if expected >= PARAMS.link_break_threshold:
            assert abs(backward[focus_id] - expected) < 1e-9
        else:
            assert focus_id not in backward


def test_links_decay_when_the_focus_is_empty():
    with fresh_graph() as db:
        node = add_node(db, "z" * 2000)  # importance < 1: compressed, its links decay
        link(db, add_node(db, "w" * 50), node, 0.5)
        link(db, node, add_node(db, "v" * 50), 0.5)
        compress_node(db, node, set(), Echo(), PARAMS)
        decayed = 0.5 * PARAMS.decay_rate
        assert [lk.strength for lk in db.out_links(node)] == [decayed]
        assert db.importance(node, 0.0) == decayed


@SETTINGS
@given(st.floats(0.0, 3.0), st.integers(1, 120))
def test_compression_follows_importance_and_the_delete_threshold(importance, length):
    with fresh_graph() as db:
        node = add_node(db, "q" * length)
        if importance:
            for n in range(3):
                link(db, add_node(db, f"source {n} " * 3), node, importance / 3)
        target = target_length(length, db.importance(node, 0.01) or importance)
        outcome = compress_node(db, node, set(), Echo(), PARAMS)  # its links decay after
        after = db.get_node(node)
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

    db = graph_db(home)
    focus_id = add_node(db, "the deploy plan uses Kubernetes", ["deploy"])
    gone = add_node(db, "tiny")
    set_focus(db, [focus_id])
    link(db, focus_id, gone, 1.0, "提到")
    with db.transaction():
        db.delete_node(gone)
    assert db.dangling_from([focus_id]) == [store.Link(focus_id, gone, 1.0, "提到")]
    result = recall(db, SCOPE, ["deploy"], None, 2, 100, 0.01)
    assert [f.node.id for f in result.found] == [focus_id]
    assert result.dangling == [store.Link(focus_id, gone, 1.0, "提到")]


GRAPHS = st.lists(
    st.tuples(st.integers(0, 11), st.integers(0, 11), st.floats(0.0, 1.0), st.sampled_from("ab")),
    max_size=40,
)


@SETTINGS
@given(GRAPHS, st.lists(st.integers(0, 11), min_size=0, max_size=5, unique=True), st.integers(0, 3))
def test_recall_is_best_first_depth_bounded_each_node_once_and_reads_only(edges, focus, depth):
    with fresh_graph() as db:
        ids = [add_node(db, f"memory {n} apple") for n in range(12)]
        for a, b, strength, relation in edges:
            if a != b:
                link(db, ids[a], ids[b], strength, relation)
        set_focus(db, [ids[n] for n in focus])
        focus_before = db.focus(SCOPE)
        result = recall(db, SCOPE, ["APPLE"], None, depth, 0, 0.01)
        found = [f.node.id for f in result.found]
        assert len(found) == len(set(found))  # each node once
        strengths = [f.strength for f in result.found]
        assert strengths == sorted(strengths, reverse=True)  # strongest path first
        assert all(len(f.path) - 1 <= depth for f in result.found)
        assert db.focus(SCOPE) == focus_before  # recall never changes the focus
        if not focus:
            assert found == []
        for f in result.found:  # the path's strength is the product of its links
            product = 1.0
            for a, b in zip(f.path, f.path[1:], strict=False):
                link_strength = {lk.to_id: lk.strength for lk in db.out_links(a)}[b]
                assert link_strength >= 0.01
                product *= link_strength
            assert abs(product - f.strength) < 1e-5
        only_a = recall(db, SCOPE, ["apple"], ["a"], depth, 0, 0.01)
        assert all(f.relations and set(f.relations) == {"a"} for f in only_a.found)


def test_a_stronger_path_is_returned_before_a_weaker_and_newer_focus_wins_ties(home):
    from tests.unit.graph.helpers import graph_db

    db = graph_db(home)
    old_focus, new_focus = add_node(db, "old focus"), add_node(db, "new focus")
    weak, strong, far = (
        add_node(db, "weak pear"),
        add_node(db, "strong pear"),
        add_node(db, "far pear"),
    )
    tie_old, tie_new = add_node(db, "tie pear one"), add_node(db, "tie pear two")
    set_focus(db, [old_focus, new_focus])
    link(db, old_focus, weak, 0.3)
    link(db, new_focus, strong, 0.9)
    link(db, strong, far, 0.9)  # 0.81 beats the direct 0.3
    link(db, old_focus, tie_old, 0.5)
    link(db, new_focus, tie_new, 0.5)
    found = [f.node.id for f in recall(db, SCOPE, ["pear"], None, 2, 0, 0.01).found]
    assert found == [strong, far, tie_new, tie_old, weak]
    assert far not in [f.node.id for f in recall(db, SCOPE, ["pear"], None, 1, 0, 0.01).found]
    assert [f.node.id for f in recall(db, SCOPE, ["pear"], None, 2, 2, 0.01).found] == [
        strong,
        far,
    ]


def test_an_old_node_is_forgotten_in_the_normal_flow_once_it_leaves_the_focus(home):
    from tests.unit.graph.helpers import graph_db

    db = graph_db(home)
    (first,) = remember(db, ["the very first thing that was said, long ago " * 3])
    for n in range(10):  # its five successors link it at 1.0, then leave the focus too
        remember(db, [f"later topic number {n} " * 4])
    assert first not in db.focus(SCOPE)
    assert db.importance(first, 0.01) >= 5.0
    outcomes = []
    for _ in range(200):
        node = db.get_node(first)
        if node is None:
            break
        outcomes.append(compress_node(db, first, set(db.focus(SCOPE)), Echo(), PARAMS))
        compress_slice(db, SCOPE, Echo(), PARAMS)
    assert outcomes[0] == "kept" and "compressed" in outcomes  # shorter each time …
    assert db.get_node(first) is None  # … until it is gone
    assert {link.from_id for link in db.in_links(first)} == {2, 3, 4, 5, 6}  # dangling


def reference_recall(db, keywords, relations, depth, limit, floor):  # type: ignore[no-untyped-def]
    """Seed §4.2's search written plainly: a query per node, whole nodes, every keyword
    parsed. The batched recall must give exactly its answer."""
    import heapq

    wanted = [k.lower() for k in keywords]
    focus_ids = db.focus(SCOPE)
    nodes = db.get_nodes(focus_ids)
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
        for lk in db.out_links(node_id, floor):
            if lk.to_id in taken or (relations is not None and lk.relation not in relations):
                continue
            nodes.update(db.get_nodes([lk.to_id]))
            if lk.to_id in nodes:
                step = (negative * lk.strength, rank, hops + 1, lk.to_id)
                heapq.heappush(heap, (*step, [*path, lk.to_id], [*names, lk.relation]))
    dangling = [lk for f in found for lk in db.dangling_from([f[0]], floor)]
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
    with fresh_graph() as db:
        ids = [
            add_node(db, f"memory {n}" + (" kiwi" if n % 4 == 0 else ""), keywords[n])
            for n in range(12)
        ]
        for a, b, strength, relation in edges:
            if a != b:
                link(db, ids[a], ids[b], strength, relation)
        set_focus(db, [ids[n] for n in focus])
        with db.transaction():
            for n in range(1, 12, 2):  # JSON written with \\u escapes reads the same
                escaped = json.dumps(keywords[n], ensure_ascii=True)
                db.conn.execute(
                    "UPDATE graph_nodes SET keywords_json = ? WHERE node_id = ?", (escaped, ids[n])
                )
            for n in deleted - set(focus):
                db.delete_node(ids[n])
        result = recall(db, SCOPE, words, relations, depth, limit, 0.01)
        found, dangling = reference_recall(db, words, relations, depth, limit, 0.01)
        got = [(f.node.id, f.matched, f.path, f.relations, f.strength) for f in result.found]
        assert got == found
        assert result.dangling == dangling
