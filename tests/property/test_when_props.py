"""The cheap gate of :func:`soloqueue_mem.text.when.parse_when`: any text that one of
the time-expression rules matches also holds the gate's hint, so skipping the rules
when the hint is absent never loses a time expression."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from soloqueue_mem.text.when import HINT, RULES

GATE = re.compile(HINT, re.IGNORECASE)


@pytest.mark.parametrize("pattern", [pattern for pattern, _ in RULES])
def test_every_rule_match_holds_the_hint(pattern):
    @settings(max_examples=30, deadline=None)
    @given(st.from_regex(re.compile(pattern, re.IGNORECASE)))
    def check(text):
        match = re.search(pattern, text, re.IGNORECASE)
        assert match is not None
        assert GATE.search(match.group()), (pattern, match.group())

    check()
