"""Near-duplicate memories in O(n log n) (seed 003 §5.7); a model, when there is one,
judges each candidate cluster (:func:`settled`).

Each memory becomes a set of keywords (words, and character pairs of CJK text) and a
MinHash signature of four values (one cheap hash per keyword, permuted by XOR with
fixed masks). Memories of the same scope and type that agree on both halves of the
signature land in the same bucket (locality-sensitive hashing: a pair with keyword
overlap J shares a bucket with probability 1 − (1 − J²)²); only pairs inside a bucket
are compared, by exact Jaccard similarity, and pairs at or above ``THRESHOLD`` are
joined into clusters. Bucketing is a sort, so the whole pass is O(n log n) plus the
bounded comparisons (each member against at most ``BUCKET_CAP // 2`` before it in each
of its two buckets: at most n·``BUCKET_CAP`` in all).

The same fact in two languages shares few keywords ("My editor is Helix", "我的编辑器是
Helix"). With the ``semantic`` extra, :func:`clusters` is given ``same`` (see
``lifecycle.consolidate``): a Chinese and a non-Chinese memory of one scope whose
names and numbers agree (each Latin word or number of the Chinese one is in the other,
and both have the same numbers: :func:`translations`) join when their embeddings'
cosine is at least ``SAME_MEANING``. The names keep apart what a vector alone would
join ("I'm allergic to shellfish" / "我对花生过敏" score 0.84; see docs/extraction.md).
Both read the user's own words: a plan's generated prefix ("Plan for 2026-11-26: ")
is neither a name in common nor embedded (two plans of one day shared only it, and it
lifted their cosine above the bar); their days must agree instead.

One pass is not a fixpoint: the keepers of two clusters can be near-duplicates that
no bucket paired (or whose keywords stop being common once the rest is gone), so
:func:`settled` clusters the keepers again until nothing is left to join, and a second
``consolidate`` right after the first finds nothing.
"""

from __future__ import annotations

import re
import sys
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable
from functools import cache
from typing import NamedTuple

from soloqueue_mem.lifecycle.own_words import plan_day

THRESHOLD = 0.8  # the seed's cluster distance 0.15, as a similarity (with margin)
# Cosine of multilingual-e5-small for a translation pair: above the highest pair of
# different facts whose names agree on the labelled set's tuned half (0.833).
SAME_MEANING = 0.85
PARTNERS = 8  # translation candidates compared per memory, at most
BUCKET_CAP = 50
COMMON_SHARE, COMMON_MIN = 0.01, 50
MASKS = (0x5BD1E995, 0x1B873593, 0xCC9E2D51, 0x85EBCA6B)


class Item(NamedTuple):
    id: str
    scope: tuple[str, str, str]  # group, agent, type
    content: str
    rank: tuple[float, float, int, str]  # confidence, importance, access_count, updated_at


@cache
def _tokens_re() -> re.Pattern[str]:
    # CJK runs, and words without CJK characters (CJK counts as \w: "用Rust写代码"
    # must give "rust" plus the pairs of 写代码, as "用 Rust 写代码" does).
    cjk = "\u3400-\u9fff\uf900-\ufaff"
    return re.compile(f"[{cjk}]+|[^\\W_{cjk}]+")


def keywords(text: str) -> frozenset[str]:
    found: set[str] = set()
    for run in _tokens_re().findall(text.casefold()):
        if "\u3400" <= run[0] <= "\ufaff":
            found.update(run[i : i + 2] for i in range(max(1, len(run) - 1)))
        else:
            found.add(run)
    return frozenset(found)


def signature(words: Collection[str], known: dict[str, tuple[int, ...]]) -> tuple[int, ...]:
    """The MinHash of ``words``; ``known`` caches each keyword's permuted hashes (a
    vocabulary repeats across memories, so most lookups hit)."""
    if not words:
        return (0,) * len(MASKS)
    rows = []
    for word in words:
        hashed = known.get(word)
        if hashed is None:
            base = zlib.crc32(word.encode("utf-8"))
            hashed = known[word] = tuple(base ^ mask for mask in MASKS)
        rows.append(hashed)
    return tuple(map(min, zip(*rows, strict=True)))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def _held(text: str) -> tuple[str, ...]:
    """The keywords of ``text`` as :func:`clusters` holds them for every memory at once:
    a sorted tuple of interned strings (a tenth of a frozenset's size; a vocabulary
    repeats across memories), made a set only for the pairs compared. A plan counts
    its day as one keyword and not its generated prefix's words: "Plan for 2026-11-26:"
    would give two plans of one day five keywords in common, enough to join "… migrate
    the database" with "… migrate the cache"."""
    day, said = plan_day(text)
    return tuple(sorted(map(sys.intern, keywords(said) | ({day} if day else set()))))


def _jaccard_of(
    i: int, j: int, words: list[tuple[str, ...]], sets: dict[int, frozenset[str]]
) -> float:
    """:func:`jaccard` of memories ``i`` and ``j``, their sets kept in ``sets``."""
    for index in (i, j):
        if index not in sets:
            sets[index] = frozenset(words[index])
    return jaccard(sets[i], sets[j])


def _could_match(a: Collection[str], b: Collection[str]) -> bool:
    """Jaccard can reach THRESHOLD only if the smaller set is that share of the larger."""
    return min(len(a), len(b)) >= THRESHOLD * max(len(a), len(b))


def _common_keywords(words: list[tuple[str, ...]]) -> frozenset[str]:
    """Keywords in more than ``COMMON_SHARE`` of the memories (at least ``COMMON_MIN``):
    they say little about which memories are alike, and as the signature's minimum
    they would pour thousands of memories into one bucket."""
    counts = Counter(word for kw in words for word in kw)
    limit = max(COMMON_MIN, COMMON_SHARE * len(words))
    return frozenset(word for word, count in counts.items() if count > limit)


# Whether each pair of texts says the same thing (the semantic extra's embeddings).
SameMeaning = Callable[[list[tuple[str, str]]], list[bool]]
_CJK = re.compile("[\u3400-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z0-9][\w.+#-]*")


def _own_words(item: Item) -> str:
    """What ``same`` embeds: the user's words, without a plan's generated prefix (the
    same day's prefix would lift the cosine of two plans that share nothing else)."""
    return plan_day(item.content)[1]


def names(text: str) -> frozenset[str]:
    """The Latin words and numbers of ``text``, casefolded: what must agree between a
    fact and its translation (:func:`names_agree`)."""
    return frozenset(word.casefold() for word in _LATIN.findall(text))


def names_agree(chinese: frozenset[str], other: frozenset[str]) -> bool:
    """Whether a Chinese text's :func:`names` agree with another text's: each of its
    Latin words or numbers is in the other, and both have the same numbers."""
    return chinese <= other and _numbers(chinese) == _numbers(other)


def _numbers(words: frozenset[str]) -> frozenset[str]:
    return frozenset(word for word in words if any(c.isdigit() for c in word))


def translations(items: list[Item]) -> list[tuple[int, int]]:
    """Index pairs (Chinese, other) of one scope that could be one fact in two
    languages: in the user's own words (a plan's generated prefix aside, its day must
    be the same), every Latin word or number of the Chinese one is in the other, at
    least one, and their numbers are the same; at most ``PARTNERS`` per Chinese memory."""
    others: dict[tuple[tuple[str, str, str], str], list[int]] = defaultdict(list)
    split = [plan_day(item.content) for item in items]
    days, said = [day for day, _ in split], [text for _, text in split]
    held = [names(text) for text in said]
    for index, item in enumerate(items):
        if not _CJK.search(said[index]):
            for word in held[index]:
                others[(item.scope, word)].append(index)
    pairs = []
    for index, item in enumerate(items):
        if not (_CJK.search(said[index]) and held[index]):
            continue
        rarest = min(held[index], key=lambda w: len(others.get((item.scope, w), ())))
        partners = [
            other
            for other in others.get((item.scope, rarest), ())
            if names_agree(held[index], held[other]) and days[index] == days[other]
        ]
        pairs += [(index, other) for other in partners[:PARTNERS]]
    return pairs


def clusters(items: Iterable[Item], same: SameMeaning | None = None) -> list[list[Item]]:
    """Groups of near-duplicates (two or more each), best first within a group; with
    ``same``, translations of one another too."""
    items = list(items)
    words = [_held(item.content) for item in items]
    common = _common_keywords(words)
    buckets: dict[tuple, list[int]] = defaultdict(list)
    known: dict[str, tuple[int, ...]] = {}
    for index, (item, kw) in enumerate(zip(items, words, strict=True)):
        sig = signature([w for w in kw if w not in common] or kw, known)
        buckets[(item.scope, 0, sig[0], sig[1])].append(index)
        buckets[(item.scope, 1, sig[2], sig[3])].append(index)
    parent = list(range(len(items)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    identical: dict[tuple, int] = {}  # the same keywords: one cluster, no comparison
    for index, (item, kw) in enumerate(zip(items, words, strict=True)):
        first = identical.setdefault((item.scope, kw), index)
        if first != index:
            parent[root(index)] = root(first)
    # Each member is compared with the WINDOW members before it in its bucket: a
    # crowded bucket (hundreds of memories with the same keywords) still chains into
    # one cluster, at most WINDOW comparisons per member and band (2 bands: n·BUCKET_CAP).
    window = BUCKET_CAP // 2
    sets: dict[int, frozenset[str]] = {}  # the keywords of memories that share a bucket
    for members in buckets.values():
        for position, j in enumerate(members):
            for i in members[max(0, position - window) : position]:
                if (
                    root(i) != root(j)
                    and _could_match(words[i], words[j])
                    and (_jaccard_of(i, j, words, sets) >= THRESHOLD)
                ):
                    parent[root(j)] = root(i)
    if same is not None:
        candidates = [(i, j) for i, j in translations(items) if root(i) != root(j)]
        texts = [(_own_words(items[i]), _own_words(items[j])) for i, j in candidates]
        for (i, j), alike in zip(candidates, same(texts) if texts else [], strict=True):
            if alike:
                parent[root(j)] = root(i)
    grouped: dict[int, list[Item]] = defaultdict(list)
    for index, item in enumerate(items):
        grouped[root(index)].append(item)
    found = [sorted(group, key=lambda m: m.rank, reverse=True) for group in grouped.values()]
    return sorted((g for g in found if len(g) > 1), key=lambda g: g[0].id)


# A model's judgment of a cluster (best first by the rules): (best, duplicates) as
# positions in it, or None to keep the rules' (the best supersedes all the others).
Judge = Callable[[list[Item]], tuple[int, list[int]] | None]


def settled(
    items: Iterable[Item], judge: Judge | None = None, same: SameMeaning | None = None
) -> tuple[int, list[tuple[str, str]]]:
    """``clusters`` run again over the keepers until none remain: how many clusters
    were found, and each ``(superseded, keeper)`` pair. With a ``judge`` (seed 003
    §5.7), the model picks each cluster's best and its duplicates; the members it
    judged distinct leave the next passes (asking again would get the same answer)."""
    items = list(items)
    found, pairs = 0, []
    while groups := clusters(items, same):
        found += len(groups)
        apart: set[str] = set()
        for group in groups:
            best, duplicates = (judge(group) if judge else None) or (0, range(1, len(group)))
            pairs += [(group[n].id, group[best].id) for n in duplicates]
            apart |= {m.id for n, m in enumerate(group) if n != best and n not in duplicates}
        gone = {other for other, _ in pairs} | apart
        items = [item for item in items if item.id not in gone]
    return found, pairs
