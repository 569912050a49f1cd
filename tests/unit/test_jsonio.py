"""Strict JSON input: the shortcut that skips the value walk never changes a verdict."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from soloqueue_mem import jsonio
from soloqueue_mem.errors import BadInput


def verdict(data: bytes | str):
    try:
        return "ok", jsonio.loads(data, line=7)
    except BadInput as exc:
        return "bad", exc.reason, exc.line


def walked(data: bytes):
    """The verdict with the value always walked (the behaviour before the shortcut)."""
    try:
        value = json.loads(data.decode("utf-8"), object_pairs_hook=jsonio._no_duplicates)
        jsonio.check_value(value, 7)
        return "ok", value
    except BadInput as exc:
        return "bad", exc.reason, exc.line


def nested(depth: int, inner: str = "1") -> bytes:
    return ("[" * depth + inner + "]" * depth).encode()


@pytest.mark.parametrize("depth", [62, 63, 64, 65])
@pytest.mark.parametrize("inner", ["1", '{"a": 1}', ""])
def test_the_depth_limit_is_the_same_at_its_edge(depth, inner):
    data = nested(depth, inner)
    assert verdict(data) == walked(data)
    assert verdict(data.decode()) == walked(data)


@pytest.mark.parametrize(
    "data",
    [b'{"content": "\\ud800"}', b'["a", {"k\\udfff": 1}]', b'"\\u00e9\\ud83d\\ude00"'],
)
def test_escaped_surrogates_are_still_checked(data):
    assert verdict(data) == walked(data)


def test_a_byte_order_mark_gets_json_loads_message():
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads("\ufeff{}")
    assert verdict("\ufeff{}".encode()) == ("bad", f"malformed JSON: {expected.value}", 7)


def test_text_of_unknown_origin_is_always_walked():
    assert verdict('{"content": "a\udc80b"}')[0] == "bad"  # an argv surrogate


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=80,
)


@settings(max_examples=300, deadline=None)
@given(json_values, st.integers(min_value=0, max_value=70))
def test_any_document_gets_the_walked_verdict(value, wrap):
    data = nested(wrap, json.dumps(value, ensure_ascii=wrap % 2 == 0))
    assert verdict(data) == walked(data)


def decoded(text: str):
    """The verdict of the decoder's own ``decode`` (the parse before the JSONL shortcut)."""
    try:
        value = jsonio._DECODER.decode(text)
    except ValueError as exc:
        return "bad", f"malformed JSON: {exc}"
    try:
        jsonio.check_value(value)
    except BadInput as exc:
        return "bad", exc.reason
    return "ok", value


@pytest.mark.parametrize(
    "text",
    ['{"a": 1}\n', '{"a": 1} \r\n', ' {"a": 1}', '{"a": 1} x', "", "\n", '{"a": 1}\x0b',
     '{"a": 1}\u00a0', "[1,", '{"a": 1}{"b": 2}', '"x"  ', "nul", '{"a": NaN}', "1 2"],
)  # fmt: skip
def test_the_shortcut_parse_gives_decode_value_and_error(text):
    got = verdict(text)
    assert (got[0], got[1]) == decoded(text)


@settings(max_examples=300, deadline=None)
@given(json_values, st.sampled_from(["", "\n", " \n", "\r\n", "\t", "x", "]", " 1", "\x0c"]),
       st.sampled_from(["", " ", "\n", "x"]))  # fmt: skip
def test_any_line_gets_decode_verdict(value, tail, head):
    text = head + json.dumps(value, ensure_ascii=False) + tail
    got = verdict(text)
    assert (got[0], got[1]) == decoded(text)
