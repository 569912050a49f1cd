"""Event validation and the lossless OpenAI round trip."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from soloqueue_mem.errors import BadInput
from soloqueue_mem.sessions.events import from_record, parse_event, to_openai, to_record

text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
ids = st.text(alphabet="abcdefghij0123456789_", min_size=1, max_size=12)
arguments = st.dictionaries(
    st.text(alphabet="abcxyz", min_size=1, max_size=5), st.integers() | text, max_size=3
)

openai_message = st.one_of(
    st.builds(
        lambda r, c: {"role": r, "content": c},
        st.sampled_from(["system", "user", "assistant", "developer"]),
        text,
    ),
    st.builds(lambda i, c: {"role": "tool", "tool_call_id": i, "content": c}, ids, text),
    st.builds(
        lambda i, n, a, c: {
            "role": "assistant",
            "content": c,
            "tool_calls": [{"id": i, "type": "function", "function": {"name": n, "arguments": a}}],
        },
        ids,
        ids,
        st.builds(lambda d: __import__("json").dumps(d), arguments) | text,
        st.none() | text,
    ),
    st.builds(
        lambda c: {
            "role": "user",
            "content": [
                {"type": "text", "text": c},
                {"type": "image_url", "image_url": {"url": "x"}},
            ],
        },
        text,
    ),
)


@given(openai_message)
def test_openai_messages_survive_log_and_export(message):
    event = parse_event(message)
    record = to_record(event, 0, "2026-01-01T00:00:00.000Z")
    assert to_openai(from_record(record)) == [message]


def test_own_format_is_not_stored_twice():
    event = parse_event(
        {
            "role": "assistant",
            "content": "x",
            "tool_calls": [{"id": "c", "name": "ls", "input": {"d": 1}}],
        }
    )
    assert event.openai_message is None
    assert "openai_message" not in to_record(event, 0, "t")


@pytest.mark.parametrize(
    ("obj", "reason"),
    [
        ([], "expected a JSON object"),
        ({"content": "x"}, "missing 'role'"),
        ({"role": "robot", "content": "x"}, "unknown role"),
        ({"role": "user"}, "has no 'content'"),
        ({"role": "user", "content": {"a": 1}}, "'content' must be"),
        ({"role": "user", "content": "x", "tool_calls": {}}, "'tool_calls' must be a list"),
        ({"role": "user", "content": "x", "tool_calls": [{"input": {}}]}, "needs a 'name'"),
        (
            {"role": "user", "content": "x", "tool_results": [{"is_error": "no"}]},
            "'is_error' must be",
        ),
        ({"role": "user", "content": "x", "timestamp": "yesterday"}, "not an ISO 8601"),
        ({"role": "user", "content": "x", "metadata": [1]}, "'metadata' must be a JSON object"),
        ({"role": "user", "content": "x", "event_id": ""}, "'event_id' must be"),
        ({"role": "user", "content": "x", "event_id": "a\nb"}, "control characters"),
        ({"role": "user", "content": "x", "session": "../etc"}, "invalid session id"),
    ],
)
def test_invalid_events_are_rejected_with_a_reason(obj, reason):
    with pytest.raises(BadInput) as caught:
        parse_event(obj, line=7)
    assert caught.value.line == 7 and reason in caught.value.reason


def _outcome(parse, obj):
    try:
        return parse(obj)
    except BadInput as exc:
        return ("rejected", type(exc).__name__, exc.reason)


# Plain events and near misses: every routing key, good and bad values, other roles.
plain_values = {
    "role": st.sampled_from(["user", "assistant", "system", "tool", "thought", "developer", "x"])
    | st.integers(),
    "content": text | st.none() | st.integers() | st.just([{"type": "text", "text": "a"}]),
    "timestamp": st.sampled_from(["2025-01-02T03:04:05Z", "2025-01-02", "nope", 1.5e9, True]),
    "metadata": st.none() | st.just({"k": [1]}) | st.just([1]),
    "event_id": st.none() | ids | st.just("") | st.just("a\nb") | st.integers(),
    "group": ids | st.just("../x") | st.integers(),
    "agent": ids | st.just(".x"),
    "session": ids | st.just("a/b") | st.none(),
    "tool_call_id": ids,
    "turn_index": st.integers(min_value=0, max_value=3),
}


@given(
    st.fixed_dictionaries(
        {"role": plain_values["role"]},
        optional={k: v for k, v in plain_values.items() if k != "role"},
    )
)
def test_the_plain_shortcut_parses_as_the_full_parse(obj):
    """parse_event's shortcut for the common event gives what every check gives."""
    from soloqueue_mem.sessions.events import _parse, parse_full

    assert _outcome(_parse, obj) == _outcome(parse_full, obj)
