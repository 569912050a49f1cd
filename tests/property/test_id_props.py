"""Group, agent and session ids are checked without a regular expression (its
compilation was on every ``log`` call's start-up): the check accepts exactly what the
documented pattern accepts."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from soloqueue_mem.errors import InvalidId
from soloqueue_mem.home import validate_id

DOCUMENTED = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
NEAR_IDS = st.text(
    alphabet=st.sampled_from("aZ09._-/ \n\x00é中"), min_size=0, max_size=130
) | st.from_regex(DOCUMENTED, fullmatch=True)


def accepted(value: str) -> bool:
    try:
        validate_id("session", value)
    except InvalidId:
        return False
    return True


@settings(max_examples=200, deadline=None)
@given(NEAR_IDS)
def test_an_id_is_valid_exactly_when_it_matches_the_documented_pattern(value):
    expected = DOCUMENTED.fullmatch(value) is not None and not value.endswith(".")
    assert accepted(value) == expected


def test_the_edges():
    assert accepted("a" * 128) and not accepted("a" * 129)
    assert not accepted("") and not accepted(".a") and not accepted("a.")
    assert not accepted("a\n") and not accepted("ａ")  # a full-width letter is not ASCII
    assert not accepted(None)  # type: ignore[arg-type]
