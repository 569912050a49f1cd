"""Chinese word segmentation: jieba's algorithm driven by the SQLite lexicon.

The same three steps as ``jieba.cut(text, HMM=True)``: a DAG of the dictionary words
at each position, the maximum-probability route through it, and an HMM (Viterbi over
B/M/E/S states) for runs of characters the dictionary does not know. Only the
substrings of the text are looked up, so a query costs milliseconds instead of the
second jieba needs to load its dictionary.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from math import log

from soloqueue_mem.text.cjk import han_run
from soloqueue_mem.text.lexicon import MAX_WORD_LEN, PREFIX, Lexicon
from soloqueue_mem.tuples import NamedTuple

_MIN = -3.14e100
_PREV = {"B": "ES", "M": "MB", "S": "SE", "E": "BM"}
_STATE_INDEX = {"B": 0, "M": 1, "E": 2, "S": 3}
_SKIP = re.compile(r"([a-zA-Z0-9]+(?:\.\d+)?%?)")


def segment(text: str, lexicon: Lexicon) -> list[str]:
    """Split ``text`` into words; Han runs are segmented, the rest kept as it is."""
    words: list[str] = []
    position = 0
    for run in han_run().finditer(text):
        if run.start() > position:
            words.append(text[position : run.start()])
        words.extend(segment_han(run.group(), lexicon))
        position = run.end()
    if position < len(text):
        words.append(text[position:])
    return words


def segment_han(run: str, lexicon: Lexicon) -> list[str]:
    """Segment a run of Han characters exactly as jieba's default mode does."""
    return _cut(run, lexicon)[0]


class SearchWord(NamedTuple):
    """A word of jieba's search mode, with dictionary frequencies (0: not a word)."""

    text: str
    freq: int
    subwords: tuple[tuple[str, int], ...]  # its 2- and 3-character dictionary words


SEARCHED_CAP = 4096  # Han runs whose search-mode words a lexicon keeps


def segment_for_search(run: str, lexicon: Lexicon) -> list[SearchWord]:
    """A Han run as ``jieba.cut_for_search`` sees it: each word of the default mode with
    the dictionary words of two characters inside it (when it is longer than two) and
    of three (when longer than three), in jieba's order.

    Kept in ``lexicon.searched``: one recall weighs the query and the texts of many
    hits, the same runs several times over (the lexicon never changes)."""
    found = lexicon.searched.get(run)
    if found is None:
        found = _keep(lexicon, run, _search_words(run, lexicon, _dictionary_words(run, lexicon)))
    return list(found)


def prepare_for_search(texts: Iterable[str], lexicon: Lexicon) -> None:
    """Segment the Han runs of ``texts`` for :func:`segment_for_search` all at once:
    from the lexicon file, the substrings of one length of every run are looked up
    together, rather than run by run (a recall weighs the texts of a dozen hits)."""
    if lexicon.table() is not None:
        return  # lookups are dictionary probes: nothing to share
    runs = list(dict.fromkeys(m.group() for text in texts for m in han_run().finditer(text)))
    runs = [run for run in runs if run not in lexicon.searched]
    if len(lexicon.searched) + len(runs) > SEARCHED_CAP:
        return
    for run, inside in zip(runs, _words_by_length(runs, lexicon), strict=True):
        _keep(lexicon, run, _search_words(run, lexicon, inside))


def _keep(lexicon: Lexicon, run: str, words: list[SearchWord]) -> tuple[SearchWord, ...]:
    if len(lexicon.searched) >= SEARCHED_CAP:
        lexicon.searched.clear()
    found = lexicon.searched[run] = tuple(words)
    return found


Dag = list[list[tuple[int, int]]]  # per position: (end index, frequency) of its words
Inside = tuple[dict[str, int], Dag]  # the dictionary words inside a run, and its DAG


def _search_words(run: str, lexicon: Lexicon, inside: Inside) -> list[SearchWord]:
    words, freq = _cut(run, lexicon, inside)
    found = []
    for word in words:
        grams = [word[i : i + 2] for i in range(len(word) - 1)] if len(word) > 2 else []
        grams += [word[i : i + 3] for i in range(len(word) - 2)] if len(word) > 3 else []
        subwords = tuple((gram, freq[gram]) for gram in grams if freq.get(gram))
        found.append(SearchWord(word, freq.get(word, 0), subwords))
    return found


def _cut(
    run: str, lexicon: Lexicon, inside: Inside | None = None
) -> tuple[list[str], dict[str, int]]:
    """The words of ``run`` and the frequencies of every dictionary word inside it
    (``inside``, when they have been looked up already)."""
    n = len(run)
    freq, dag = inside or _dictionary_words(run, lexicon)
    route = _best_route(dag, lexicon.total)
    words: list[str] = []
    pending = ""  # consecutive single characters, handed to the HMM together
    x = 0
    while x < n:
        y = route[x] + 1
        if y - x == 1:
            pending += run[x]
        else:
            words.extend(_resolve_pending(pending, freq, lexicon))
            pending = ""
            words.append(run[x:y])
        x = y
    words.extend(_resolve_pending(pending, freq, lexicon))
    return words, freq


def _dictionary_words(run: str, lexicon: Lexicon) -> Inside:
    """Every dictionary word inside ``run`` with its frequency, and for each position
    the words (of a frequency above 0) that start there. Only substrings that extend a
    word or a prefix of one are looked at (jieba's DAG): with the whole dictionary in
    memory one by one, otherwise a length at a time (:func:`_words_by_length`)."""
    table = lexicon.table()
    if table is None:
        return _words_by_length([run], lexicon)[0]
    n = len(run)
    freq = {}
    dag = []
    for i in range(n):
        ends = []
        for j in range(i + 1, min(n, i + MAX_WORD_LEN) + 1):
            word = run[i:j]
            f = table.get(word)
            if f is None:
                break  # no word starts with it
            if f != PREFIX:
                freq[word] = f
                if f:
                    ends.append((j - 1, f))
        dag.append(ends)
    return freq, dag


def _words_by_length(runs: list[str], lexicon: Lexicon) -> list[Inside]:
    """:func:`_dictionary_words` of each of ``runs`` from the lexicon file: the
    substrings of each length that extend a word or a prefix of the length before, in
    every run, looked up together."""
    inside: list[Inside] = [({}, [[] for _ in run]) for run in runs]
    starts = [(r, i) for r, run in enumerate(runs) for i in range(len(run))]
    for length in range(1, MAX_WORD_LEN + 1):
        starts = [(r, i) for r, i in starts if i + length <= len(runs[r])]
        found = lexicon.entries(runs[r][i : i + length] for r, i in starts)
        starts = [(r, i) for r, i in starts if runs[r][i : i + length] in found]
        for r, i in starts:
            word = runs[r][i : i + length]
            f = found[word]
            if f != PREFIX:
                freq, dag = inside[r]
                freq[word] = f
                if f:
                    dag[i].append((i + length - 1, f))
        if not starts:
            break
    return inside


def _best_route(dag: Dag, total: int) -> list[int]:
    """For each position, the end index of the word on the most probable route (a
    position that starts no word is a word of frequency 1)."""
    n = len(dag)
    log_total = log(total)
    score = [0.0] * (n + 1)
    end = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        best = (-log_total + score[i + 1], i)  # log(1) - log_total + ...: no word here
        for count, (j, f) in enumerate(dag[i]):
            option = (log(f) - log_total + score[j + 1], j)
            if count == 0 or option > best:
                best = option
        score[i], end[i] = best
    return end


def _resolve_pending(pending: str, freq: dict[str, int], lexicon: Lexicon) -> list[str]:
    """jieba's rule: a known word stays split into characters, an unknown run goes to
    the HMM, a single character is itself."""
    if len(pending) <= 1:
        return [pending] if pending else []
    if freq.get(pending):
        return list(pending)
    return _hmm_cut(pending, lexicon)


def _hmm_cut(run: str, lexicon: Lexicon) -> list[str]:
    emit = lexicon.emissions(run)
    states = _viterbi(run, emit, lexicon.start, lexicon.trans)
    words: list[str] = []
    begin = nexti = 0
    for i, state in enumerate(states):
        if state == "B":
            begin = i
        elif state == "E":
            words.append(run[begin : i + 1])
            nexti = i + 1
        elif state == "S":
            words.append(run[i])
            nexti = i + 1
    if nexti < len(run):
        words.append(run[nexti:])
    return words


def _viterbi(
    run: str,
    emit: dict[str, tuple[float, float, float, float]],
    start: dict[str, float],
    trans: dict[str, dict[str, float]],
) -> list[str]:
    def emission(state: str, ch: str) -> float:
        row = emit.get(ch)
        return row[_STATE_INDEX[state]] if row else _MIN

    prob = {s: start[s] + emission(s, run[0]) for s in "BMES"}
    path = {s: [s] for s in "BMES"}
    for ch in run[1:]:
        new_prob: dict[str, float] = {}
        new_path: dict[str, list[str]] = {}
        for s in "BMES":
            best, prev = max(
                (prob[p] + trans[p].get(s, _MIN) + emission(s, ch), p) for p in _PREV[s]
            )
            new_prob[s] = best
            new_path[s] = path[prev] + [s]
        prob, path = new_prob, new_path
    _, last = max((prob[s], s) for s in "ES")
    return path[last]
