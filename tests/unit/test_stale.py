"""Which corrections make a memory the current value a question asks for."""

from __future__ import annotations

import sqlite3

import pytest

from soloqueue_mem.memory import stale
from soloqueue_mem.memory.model import Memory
from soloqueue_mem.text.lexicon import Lexicon
from soloqueue_mem.text.query import weigh_query

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


def said(key: str, text: str, day: int) -> stale.Said:
    return stale.Said(key, text, f"2026-11-{day:02d}T08:00:00.000Z")


LIGHTS_AND_SECURITY = [
    said("old", "灯光供应商光耀照明，安全负责人王建国（老王）", 1),
    said("lights", "北极星灯光明天下午来调试主塔的灯", 10),
    said("fix", "安全这块，以后别找老王了，老王调去管停车场了，交给刘冬梅", 12),
]


@pytest.mark.parametrize(
    ("question", "linked", "first"),
    [
        ("安全的事现在找谁？", frozenset(), "fix"),
        ("主塔的灯光现在是哪家做？", frozenset(), "old"),
        ("安全的事现在找谁？", frozenset({"old"}), "old"),
    ],
)
def test_a_named_value_moves_a_correction_above_what_it_corrects_for_its_question(
    lexicon, question, linked, first
):
    """The correction names 老王 as replaced: it jumps the older item stating 老王 when
    the two share a word of the question (安全), not for a question about the lights the
    older item also states; an item whose supersede link is known is left to it."""
    words = [term.text for term in weigh_query(question, lambda: lexicon).terms]
    order = stale.corrections_first(LIGHTS_AND_SECURITY, words, lambda: lexicon, linked)
    assert order[0] == first
