"""``config.flat_toml`` reads flat config files without tomllib (and the ``typing``
import it brings to every ``log`` call): whatever it reads, tomllib reads the same
way; whatever it declines goes to tomllib."""

from __future__ import annotations

import tomllib

from hypothesis import given, settings
from hypothesis import strategies as st

from soloqueue_mem.config import flat_toml

KEYS = st.sampled_from(["redact", "busy_timeout_ms", "a-b_c", "a.b", '"q"', "", "k k", "é"])
VALUES = st.sampled_from(
    [
        "true", "false", "True", "1", "-0", "+7", "007", "1_000", "0x1f", "1.5", "-0.25",
        "1.", ".5", "1e3", "inf", "nan", "+-1", "99999999999999999999", '"plain"', '""',
        "'literal \\\\ kept'", '"with \\\\ escape"', '"""multi"""', "'''multi'''", '"a#b"',
        '"tab\there"', '"bell\x07"', '"unclosed', "[1, 2]", "{ a = 1 }", "", "2024-01-01",
    ]
)  # fmt: skip
TAILS = st.sampled_from(["", " ", "\t", " # note", "#note", " junk", " # bell\x07", "\r"])
LINES = st.one_of(
    st.builds(
        lambda k, v, t, sp: f"{k}{sp}={sp}{v}{t}",
        KEYS,
        VALUES,
        TAILS,
        st.sampled_from(["", " ", "\t"]),
    ),
    st.sampled_from(["", "  ", "# comment", "# a = 1", "[table]", "junk", "\r", " \t# x"]),
)
DOCUMENTS = st.lists(LINES, max_size=6).map("\n".join)


def parsed_by_tomllib(text: str) -> object:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return "error"


@settings(max_examples=500, deadline=None)
@given(DOCUMENTS)
def test_what_flat_toml_reads_tomllib_reads_the_same(text):
    mine = flat_toml(text)
    if mine is not None:
        expected = parsed_by_tomllib(text)
        assert mine == expected
        assert [type(v) for v in mine.values()] == [type(v) for v in expected.values()]


def test_the_usual_config_files_are_read_without_tomllib():
    text = (
        '# settings\nredact = true\r\ndurability = "full"  # power loss\n\n'
        "busy_timeout_ms = 5000\nrecall_recency_weight = 0.5\nlanguage = 'zh'\n"
    )
    assert flat_toml(text) == tomllib.loads(text)
    assert flat_toml("[redact_patterns]\nx = 'y'\n") is None  # tables: tomllib
