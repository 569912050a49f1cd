"""A compact SQLite copy of jieba's dictionary and HMM tables, built once per store.

``import jieba`` plus its dictionary load costs ~1 s per process; a query needs only
the frequencies of the few hundred substrings it contains. The lexicon is a derived
cache file (``cache/lexicon-jieba-<dictionary size>-f<format>.sqlite3``), which also
lists every prefix of a word that is no word, so a segmenter looks up only substrings
that can still become a word (jieba's prefix dictionary): built from
the installed jieba package the first time a CJK query needs it, written to a temporary
file and renamed into place, so concurrent builders are harmless and a crash leaves no
half file.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from soloqueue_mem.home import StrPath

FORMAT = 2  # 2: the words table also holds each prefix of a word that is no word
MAX_WORD_LEN = 16  # longest entry in jieba 0.42.1's dict.txt
# Words looked up in SQLite before a process loads the whole dictionary into memory
# (~0.3 s, ~40 MB): a query never gets there, a consolidate of many sessions soon does,
# and then each lookup is a dict probe instead of a SQLite row.
BULK_AFTER = 200_000
PREFIX = -1  # the frequency of a prefix of a word that is itself no word


class Lexicon:
    """Read access to a built lexicon; owns its SQLite connection."""

    def __init__(
        self, conn: sqlite3.Connection, bulk_after: int = BULK_AFTER, cache_dir: str | None = None
    ) -> None:
        self._conn = conn
        self.cache_dir = cache_dir  # where it lives, beside the store's other derived files
        self._bulk_after = bulk_after
        meta = dict(conn.execute("SELECT key, value FROM meta"))
        self.total = int(meta["total"])
        self.start = json.loads(meta["start"])
        self.trans = json.loads(meta["trans"])
        self._looked_up = 0
        self._table: dict[str, int] | None = None  # the whole dictionary, once bulk
        # Han run -> its search-mode words (text.segment.segment_for_search's memo)
        self.searched: dict[str, tuple[Any, ...]] = {}

    def table(self) -> dict[str, int] | None:
        """Once the whole dictionary is in memory: each word with its frequency and
        each prefix of a word that is no word with ``PREFIX`` (-1), so a segmenter
        looks up only the substrings that can still become a word (jieba's prefix
        dictionary). None before."""
        return self._table

    def freqs(self, words: Iterable[str]) -> dict[str, int]:
        """Frequencies of those ``words`` that are dictionary entries."""
        return {word: f for word, f in self.entries(words).items() if f != PREFIX}

    def entries(self, words: Iterable[str]) -> dict[str, int]:
        """Those ``words`` that are dictionary entries, with their frequencies, or
        prefixes of an entry that are no entry, with ``PREFIX``."""
        batch = list(set(words))
        if self._table is None:
            self._looked_up += len(batch)
            if self._looked_up > self._bulk_after:
                self._load()
        if self._table is not None:
            table = self._table
            return {word: f for word in batch if (f := table.get(word)) is not None}
        found: dict[str, int] = {}
        for i in range(0, len(batch), 500):
            chunk = batch[i : i + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT word, freq FROM words WHERE word IN ({marks})"  # noqa: S608
            found.update(self._conn.execute(sql, chunk))
        return found

    def _load(self) -> None:
        self._table = dict(self._conn.execute("SELECT word, freq FROM words"))

    def emissions(self, chars: Iterable[str]) -> dict[str, tuple[float, float, float, float]]:
        """HMM emission log-probabilities (B, M, E, S) of the known ``chars``."""
        batch = list(set(chars))
        marks = ",".join("?" * len(batch))
        sql = f"SELECT ch, b, m, e, s FROM emit WHERE ch IN ({marks})"  # noqa: S608
        return {row[0]: tuple(row[1:]) for row in self._conn.execute(sql, batch)}

    def close(self) -> None:
        self._conn.close()


def jieba_dictionary() -> str:
    """The installed jieba's dict.txt, found without importing jieba (~1 s) or reading
    package metadata (~100 ms)."""
    from importlib.util import find_spec

    spec = find_spec("jieba")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("jieba is not installed")
    return os.path.join(os.path.dirname(spec.origin), "dict.txt")


def lexicon_name() -> str:
    """Cache file name, keyed by the dictionary's size so a jieba upgrade rebuilds it."""
    return f"lexicon-jieba-{os.stat(jieba_dictionary()).st_size}-f{FORMAT}.sqlite3"


def open_lexicon(cache_dir: StrPath | None) -> Lexicon:
    """Open the lexicon in ``cache_dir``, building it first if needed.

    Trigger: ``cache_dir`` is None or cannot be written (a read-only store).
    Why: a search must still work. Outcome: the lexicon is built in memory for this
    process only, which costs about a second.
    """
    if cache_dir is not None:
        path = os.path.join(cache_dir, lexicon_name())
        if not os.path.exists(path):
            try:
                _build_file(path)
            except OSError:
                path = None  # type: ignore[assignment]
        if path is not None:
            # read-only, and a Store's lock serialises its users: any thread may read
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            return Lexicon(conn, cache_dir=os.fspath(cache_dir))
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    _fill(conn)
    return Lexicon(conn)


def _build_file(path: str) -> None:
    write_derived_file(path, _fill)
    remove_other_versions(path, "lexicon-jieba-")


def write_derived_file(path: str, fill: Callable[[sqlite3.Connection], None]) -> None:
    """Write a derived SQLite cache file that ``fill`` fills: to a temporary file
    renamed into place, so concurrent builders are harmless and a crash leaves no half
    file."""
    from soloqueue_mem.home import make_private_dirs

    folder, name = os.path.split(path)
    make_private_dirs(folder)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        os.close(fd)
        conn = sqlite3.connect(tmp)
        try:
            conn.execute("PRAGMA journal_mode = OFF")  # a throw-away file until renamed
            fill(conn)
            conn.commit()
        finally:
            conn.close()
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def remove_other_versions(path: str, prefix: str) -> None:
    """Delete the cache files beside ``path`` named ``prefix…`` but for ``path``: those
    of another package version or format (the lexicon ~7 MB, the dictionary ~3 MB),
    which no process of this version reads again. A reader that has one open keeps its
    file until it closes it."""
    folder, name = os.path.split(path)
    for other in os.listdir(folder):
        if other.startswith(prefix) and other.endswith(".sqlite3") and other != name:
            try:
                os.unlink(os.path.join(folder, other))
            except OSError:
                pass  # removed by another builder meanwhile


def _fill(conn: sqlite3.Connection) -> None:
    """Copy jieba's dictionary and HMM model into ``conn`` (imports jieba: ~1 s)."""
    import jieba.finalseg as finalseg  # the model's tables, loaded from jieba's pickles

    dict_path = jieba_dictionary()
    conn.executescript(
        """
        CREATE TABLE words (word TEXT PRIMARY KEY, freq INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE emit (ch TEXT PRIMARY KEY, b REAL, m REAL, e REAL, s REAL) WITHOUT ROWID;
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
        """
    )
    entries: dict[str, int] = {}
    with open(dict_path, encoding="utf-8") as lines:
        for line in lines:
            word, freq = line.split(" ")[:2]
            entries[word] = int(freq)
    prefixes = dict.fromkeys((w[:i] for w in entries for i in range(1, len(w))), PREFIX)
    prefixes.update(entries)
    conn.executemany("INSERT INTO words VALUES (?, ?)", sorted(prefixes.items()))
    emit = finalseg.emit_P
    chars = set().union(*(emit[state] for state in "BMES"))
    floor = -3.14e100
    conn.executemany(
        "INSERT INTO emit VALUES (?, ?, ?, ?, ?)",
        sorted((ch, *(emit[state].get(ch, floor) for state in "BMES")) for ch in chars),
    )
    meta = {
        "total": str(sum(entries.values())),
        "start": json.dumps(finalseg.start_P),
        "trans": json.dumps(finalseg.trans_P),
        "dictionary_bytes": str(os.stat(dict_path).st_size),
    }
    conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
