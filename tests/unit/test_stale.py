"""Which corrections make a memory the current value a question asks for."""

from __future__ import annotations

import sqlite3

import pytest

from soloqueue_mem.memory import stale
from soloqueue_mem.memory.model import Memory
from soloqueue_mem.text.lexicon import Lexicon

SAID_AT = "2026-11-01T08:00:00.000Z"


@pytest.fixture(scope="module")
def lexicon(built_lexicon) -> Lexicon:
    return Lexicon(sqlite3.connect(f"file:{built_lexicon}?mode=ro", uri=True))


def memory(memory_id: str, content: str, superseded_by: str | None = None) -> Memory:
    return Memory(
        memory_id, "g", "a", "FACT", "LONG_TERM", content, "", "", "manual", None, [], 0.5,
        0.5, 0, 0.1, SAID_AT, SAID_AT, None, None, superseded_by,
    )  # fmt: skip


def test_a_correction_is_current_only_for_a_question_about_what_changed(lexicon):
    """A supersede link between statements of two different things (an introduction
    replaced by an incident report) shares no topic the question names: the question
    touching a word of each does not make the report its current value."""
    fixes = stale.replacements(
        [
            stale.Correction(
                memory("old", "Backups are kept for 14 days", "new"),
                memory("new", "Compliance asked for more: backups are kept for 30 days now"),
            ),
            stale.Correction(
                memory("intro", "Han runs the clinic schedule and the customer callbacks", "x"),
                memory("x", "The vaccine fridge alarm went off this morning"),
            ),
        ],
        lambda: lexicon,
    )
    assert len(fixes) == 2  # both replaced a value
    assert stale.current_values(fixes, ["long", "keep", "backups"]) == {"new": "old"}
    assert stale.current_values(fixes, ["customer", "vaccine", "fridge"]) == {}
