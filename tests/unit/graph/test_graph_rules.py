"""The offline rules of seed 002 §6: pieces of at most 200 characters, the pronoun
heuristic, phrase and keywords, and extractive compression within the target."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from soloqueue_mem.graph import rules
from tests.unit.graph.helpers import rules_steps


def test_turns_and_sentences_are_pieces_and_a_leading_pronoun_is_resolved(home):
    lexicon = rules_steps(home).lexicon
    messages = [
        {"role": "system", "content": "You are helpful."},  # not part of the conversation
        {"role": "user", "content": "我们选了 PostgreSQL。它支持 JSONB。好的。"},
        {"role": "assistant", "content": "We met Alice in Berlin today. She leads the API team."},
    ]
    assert rules.segment(messages, lexicon) == [
        "我们选了 PostgreSQL。",
        "PostgreSQL 支持 JSONB。好的。",
        "We met Alice in Berlin today.",
        "Alice leads the API team.",  # the first name in the piece before
    ]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(min_size=1, max_size=900), st.integers(1, 300))
def test_pieces_stay_within_200_and_compression_within_the_target(home, text, target):
    lexicon = rules_steps(home).lexicon
    pieces = rules.segment([{"role": "user", "content": text}], lexicon)
    assert all(0 < len(p) <= rules.MAX_PIECE for p in pieces)
    processed = rules.process(text, lexicon, target)
    assert len(processed.content) <= max(target, 0) or processed.content == text
    assert len(processed.phrase) <= rules.PHRASE_CHARS and len(processed.keywords) <= 5


def test_compression_keeps_the_sentences_with_the_best_keywords(home):
    lexicon = rules_steps(home).lexicon
    text = "登录模块采用 JWT 方案。今天天气不错。JWT 的有效期是 15 分钟。"
    shorter = rules.process(text, lexicon, 20)
    assert shorter.content == "登录模块采用 JWT 方案。"
    assert "jwt" in shorter.keywords and shorter.phrase == "登录模块采用 JWT 方案"
