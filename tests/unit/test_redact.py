"""The redactor on its own: each kind is named, ordinary text is left alone, JSON
names mark secrets, and redacting twice changes nothing."""

from __future__ import annotations

import pytest

from soloqueue_mem.config import Config
from soloqueue_mem.redact import redacted_bytes, redactor
from tests.e2e.test_redaction import ASSIGNMENTS, PRIVATE_KEY, PROVIDER_KEYS

REDACT = redactor(Config(redact=True))


@pytest.mark.parametrize(("kind", "key"), PROVIDER_KEYS.items())
def test_each_provider_key_is_named(kind, key):
    assert REDACT.text(f"use {key} here") == f"use [REDACTED:{kind}] here"


# A glued key is taken only when it looks like one (a run of 16+ letters and digits):
# the fixtures' Slack key does not, a real one does.
GLUED_KEYS = {**PROVIDER_KEYS, "slack-token": "xoxb-0000000000-FAKEcanary000000006"}


@pytest.mark.parametrize(("kind", "key"), GLUED_KEYS.items())
def test_a_key_glued_to_the_word_before_it_is_still_a_secret(kind, key):
    assert REDACT.text(f"the token{key} works") == f"the token[REDACTED:{kind}] works"
    assert REDACT.text(f"我的密钥{key}。") == f"我的密钥[REDACTED:{kind}]。"
    assert REDACT.value({"note": f"x_{key}"}) == {"note": f"x_[REDACTED:{kind}]"}


def test_a_glued_key_after_a_long_word_or_inside_a_kebab_run_is_found():
    key = PROVIDER_KEYS["openai-key"]
    assert REDACT.text("x" * 300 + key) == "x" * 300 + "[REDACTED:openai-key]"
    assert REDACT.text("task-" + "a-" * 200 + key) == "task-" + "a-" * 200 + "[REDACTED:openai-key]"


@pytest.mark.parametrize(
    "text",
    [
        "see task-management-system-for-everyone and flask-sqlalchemy-extensions",
        "risk-2024-q3-planning-meeting-notes, desk_test_harness_for_the_lab",
        "pdf_renderer_and_friends_in_the_toolbox",
        # a base64 blob holding a provider's prefix: the match runs into the next character
        "data:image/png;base64,iVBORw0KGgo" + "AIza" + "Q1" * 30 + "==",
        # a base64url blob: a glued match longer than any key is not one
        "blob " + "Zm9v_YmFy" * 10 + "sk-" + "Zm9v-YmFy" * 40,
    ],
)
def test_a_provider_prefix_inside_ordinary_words_is_left_alone(text):
    assert REDACT.text(text) == text


def test_assignments_keep_their_name_and_a_provider_key_its_kind():
    assert REDACT.text(ASSIGNMENTS["password"]) == "db_password = '[REDACTED:password]'"
    assert REDACT.text("密码：hunter22") == "密码：[REDACTED:password]"
    assert (
        REDACT.text(ASSIGNMENTS["bearer-token"]) == "Authorization: Bearer [REDACTED:bearer-token]"
    )
    assert (
        REDACT.text(ASSIGNMENTS["connection-string"])
        == "postgres://app:[REDACTED:connection-string]@db.internal:5432/prod"
    )
    key = PROVIDER_KEYS["openai-key"]
    assert REDACT.text(f"OPENAI_API_KEY={key}") == "OPENAI_API_KEY=[REDACTED:openai-key]"
    assert REDACT.text(PRIVATE_KEY) == "[REDACTED:private-key]"


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens=4096, token_count: 12",
        "the key point: we pass the tests, passwordless login",
        "https://example.com:8080/path and user@host",
        "今天和产品团队开会，决定把搜索索引改成按字切分。",
    ],
)
def test_ordinary_text_is_left_alone(text):
    assert REDACT.text(text) == text


def test_json_values_under_secret_names_and_inside_strings():
    value = {
        "password": "hunter22",
        "auth_token": PROVIDER_KEYS["github-token"],
        "n": 3,
        "notes": ["key " + PROVIDER_KEYS["slack-token"]],
        "token_count": "12",
    }
    assert REDACT.value(value) == {
        "password": "[REDACTED:password]",
        "auth_token": "[REDACTED:github-token]",
        "n": 3,
        "notes": ["key [REDACTED:slack-token]"],
        "token_count": "12",
    }


def test_redacting_twice_changes_nothing_and_binary_is_kept():
    once = REDACT.text("\n".join([*ASSIGNMENTS.values(), *PROVIDER_KEYS.values()]))
    assert REDACT.text(once) == once
    binary = b"\xff\xfe password=hunter22"
    assert redacted_bytes(binary, REDACT) == binary


def test_configured_patterns_and_off():
    custom = redactor(Config(redact=True, redact_patterns={"corp": "CORP-[0-9]{4}"}))
    assert custom.text("id CORP-1234") == "id [REDACTED:corp]"
    assert redactor(Config()) is None
