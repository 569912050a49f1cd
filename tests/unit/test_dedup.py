"""Near-duplicate clustering (``lifecycle.dedup``): what merges, what stays apart,
and that the work grows like n, not n²."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from soloqueue_mem.lifecycle import dedup

SCOPE = ("default", "default", "FACT")


def item(id_: str, content: str, scope=SCOPE, rank=(0.5, 0.5, 0, "")) -> dedup.Item:
    return dedup.Item(id_, scope, content, rank)


def clustered(*contents: str) -> list[list[str]]:
    found = dedup.clusters(item(str(i), text) for i, text in enumerate(contents))
    return [[m.content for m in cluster] for cluster in found]


def test_keywords_split_latin_words_out_of_chinese_text():
    spaced = dedup.keywords("用户喜欢在周末用 Rust 写代码")
    assert dedup.keywords("用户喜欢在周末用Rust写代码！") == spaced
    assert {"rust", "写代", "代码", "用户"} <= spaced


def test_wording_and_punctuation_variants_merge():
    english = [
        "The user prefers dark mode in every editor",
        "User prefers dark mode in every editor.",
        "the user prefers dark mode in every editor!!",
    ]
    chinese = [
        "用户每天早上九点在公司用 Rust 写后端服务代码",
        "用户每天早上九点在公司用Rust写后端服务的代码。",
    ]
    found = clustered(*english, *chinese)
    assert sorted(map(sorted, found)) == sorted([sorted(english), sorted(chinese)])


def test_distinct_facts_that_share_words_stay_apart():
    assert clustered("User likes Python", "User likes Rust") == []
    assert clustered("The deploy window is 3 hours long", "The deploy window is 5 hours long") == []
    assert clustered("项目的端口号是 8080", "项目的端口号是 9090") == []
    assert clustered("用户住在杭州西湖区", "用户住在杭州滨江区") == []


def test_the_best_of_a_cluster_comes_first():
    ranks = {
        "low": (0.5, 0.9, 9, "2026-11-30"),
        "best": (0.9, 0.1, 0, "2026-01-01"),  # confidence first
        "mid": (0.5, 0.9, 9, "2026-12-01"),
    }
    text = "Backups run every night at two"
    items = [item(k, text + "!" * n, rank=r) for n, (k, r) in enumerate(ranks.items())]
    (cluster,) = dedup.clusters(items)
    assert [m.id for m in cluster] == ["best", "mid", "low"]


def test_scopes_never_merge():
    text = "User prefers dark mode in every editor"
    scopes = [
        ("default", "default", "FACT"),
        ("default", "default", "PREFERENCE"),
        ("other", "default", "FACT"),
        ("default", "coder", "FACT"),
    ]
    assert dedup.clusters(item(str(i), text, scope) for i, scope in enumerate(scopes)) == []


WORDS = "user likes prefers dark light mode editor rust python 用户 喜欢 深色 模式 编辑器".split()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(WORDS), min_size=1, max_size=6),
            st.sampled_from(["g1", "g2"]),
            st.sampled_from(["a1", "a2"]),
            st.sampled_from(["FACT", "RULE"]),
        ),
        max_size=60,
    )
)
def test_clusters_never_mix_scopes_and_every_member_is_close_to_another(rows):
    items = [item(str(i), " ".join(w), (g, a, t)) for i, (w, g, a, t) in enumerate(rows)]
    found = dedup.clusters(items)
    seen: set[str] = set()
    for cluster in found:
        assert len(cluster) >= 2
        assert len({m.scope for m in cluster}) == 1
        ids = {m.id for m in cluster}
        assert not ids & seen  # an item is in one cluster at most
        seen |= ids
        words = {m.id: dedup.keywords(m.content) for m in cluster}
        for member in cluster:
            assert any(
                dedup.jaccard(words[member.id], words[other.id]) >= dedup.THRESHOLD
                for other in cluster
                if other.id != member.id
            )
        assert cluster == sorted(cluster, key=lambda m: m.rank, reverse=True)


def _counting(monkeypatch) -> list[int]:
    calls = [0]
    original = dedup.jaccard

    def counting(a, b):
        calls[0] += 1
        return original(a, b)

    monkeypatch.setattr(dedup, "jaccard", counting)
    return calls


def test_comparisons_grow_linearly_with_the_number_of_memories(monkeypatch):
    calls = _counting(monkeypatch)
    rng = random.Random(7)
    vocabulary = [f"w{i}" for i in range(300)]
    for n in (500, 2000, 8000):
        calls[0] = 0
        contents = [" ".join(rng.sample(vocabulary, 6)) for _ in range(n)]
        contents += [c + " again" for c in contents[: n // 20]]  # 5% near-duplicates
        dedup.clusters(item(str(i), c) for i, c in enumerate(contents))
        assert calls[0] <= len(contents) * dedup.BUCKET_CAP, (n, calls[0])


def test_a_crowded_bucket_is_bounded_and_still_merged_whole(monkeypatch):
    """Hundreds of memories with the same keywords share every bucket: the comparisons
    stay bounded and they still end up in one cluster (a second pass finds nothing)."""
    calls = _counting(monkeypatch)
    contents = ["backup runs nightly" + " really" * k + " at two" for k in range(300)]
    found = dedup.clusters(item(str(i), c) for i, c in enumerate(contents))
    assert calls[0] <= len(contents) * dedup.BUCKET_CAP
    assert [len(c) for c in found] == [300]
