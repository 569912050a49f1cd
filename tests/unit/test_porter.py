"""The Porter stemmer of the PostgreSQL index gives the stems SQLite's FTS5 ``porter``
tokenizer gives (the oracle here), so both back ends match the same word forms."""

from __future__ import annotations

import sqlite3

from soloqueue_mem.text.porter import stem

# Porter's own examples for each step, plus short, long, digit-bearing words and
# FTS5's edge cases ("ies" keeps a letter before the suffix).
WORDS = """
caresses ponies ties caress cats feed agreed plastered bled motoring sing conflated
troubled sized hopping tanned falling hissing fizzed failing filing happy sky
relational conditional rational valenci hesitanci digitizer conformabli radicalli
differentli vileli analogousli vietnamization predication operator feudalism
decisiveness hopefulness callousness formaliti sensitiviti sensibiliti triplicate
formative formalize electriciti electrical hopeful goodness revival allowance
inference airliner gyroscopic adjustable defensible irritant replacement adjustment
dependent adoption homologou communism activate angulariti homologous effective
bowdlerize probate rate cease controlling rolls generalizations oscillators analogies
deploying deployed deploys compilers crashed queues syzygy yelling toy boys as is
ies sses mp3s covid19s h264 a ab abc xyzzy rhythm strength
""".split()


def sqlite_stems(words: list[str]) -> dict[str, str]:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61 remove_diacritics 0')"
    )
    conn.executemany("INSERT INTO t (rowid, x) VALUES (?, ?)", enumerate(words, 1))
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    return {words[doc - 1]: term for term, doc in conn.execute("SELECT term, doc FROM v")}


def test_stems_are_sqlite_fts5s() -> None:
    oracle = sqlite_stems(WORDS)
    assert {word: stem(word) for word in WORDS} == oracle
    assert stem("deploying") == stem("deployed") == stem("deploys") == "deploi"


def test_short_and_long_words_are_left_as_they_are() -> None:
    assert stem("is") == "is" and stem("ies") == "ie"
    assert stem("x" * 62 + "ing") == "x" * 62 + "ing"  # 65 bytes
    others = ["é" * 30 + "ing", "straße", "øres", "über", "façades", "x" * 60 + "éing"]
    assert {word: stem(word) for word in others} == sqlite_stems(others)  # bytes, as FTS5


def test_the_postgresql_index_words_are_sqlite_fts5s_tokens() -> None:
    """Outside CJK (and Hangul) runs, which both index as their own forms, the
    PostgreSQL lexemes are the SQLite index's tokens."""
    from soloqueue_mem.storage.postgres.text import lexemes

    text = (
        "Café naïve Zürich São Ångström øre Straße œuvre Łódź crème brûlée résumés "
        "mañana компиляторы ελληνικά deploys v2 MP3s the_compilers 'quoted'"
    )
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61 remove_diacritics 2')"
    )
    conn.execute("INSERT INTO t (rowid, x) VALUES (1, ?)", (text,))
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    tokens = [term for (term,) in conn.execute("SELECT term FROM v ORDER BY offset")]
    assert lexemes(text) == tokens
