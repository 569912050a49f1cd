"""The redactor on its own: each kind is named, ordinary text is left alone, JSON
names mark secrets, and redacting twice changes nothing."""

from __future__ import annotations

import json

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
    staff = redactor(Config(redact=True, redact_patterns={"staff-id": "工号-[0-9]{4}"}))
    escaped = json.dumps({"cmd": "查询 工号-5678"}, ensure_ascii=True)  # \u5de5\u53f7-5678
    assert "5678" not in staff.text(json.dumps({"out": escaped}))
    assert redactor(Config(redact=False)) is None
    assert redactor(Config()) is not None  # on by default


# Issue 30: the forms of public secret scanners' rule sets (fake values made here).
MORE_KINDS = {
    "gitlab-token": "glpat-FAKEl5glpat0000000000",
    "google-oauth-token": "ya29.FAKEa0AfH6SMBx0000000000",
    "azure-client-secret": "abc8Q~FAKEazureSecret000000000000000000",
    "npm-token": "npm_" + "F" * 36,
    "sendgrid-key": "SG." + "F" * 22 + "." + "k" * 43,
    "shopify-token": "shpat_" + "0f" * 16,
    "vault-token": "hvs.FAKEvaultToken000000000000",
    "docker-token": "dckr_pat_FAKEdockerToken000000000",
    "age-secret-key": "AGE-SECRET-KEY-1" + "Q" * 58,
    "stripe-key": "whsec_FAKEstripeWebhook000000",
}


@pytest.mark.parametrize(("kind", "key"), MORE_KINDS.items())
def test_scanner_kinds_are_named(kind, key):
    assert REDACT.text(f"use {key} here") == f"use [REDACTED:{kind}] here"


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic [REDACTED:authorization]"),
        ("Authorization: token abcdef123456", "Authorization: token [REDACTED:authorization]"),
        ('-H "Basic ZGVwbG95OnMzY3JldA=="', '-H "Basic [REDACTED:basic-auth]"'),
        ("SECRET_KEY=django-insecure-x1", "SECRET_KEY=[REDACTED:secret]"),
        ("pwd=hunter22 DB_PASS=s3cr3t!", "pwd=[REDACTED:password] DB_PASS=[REDACTED:password]"),
        (
            "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXX",
            "https://hooks.slack.com/[REDACTED:slack-webhook]",
        ),
        ('password: "correct horse battery"', 'password: "[REDACTED:password]"'),
        ("stripe_secret_key = 'k1234567'", "stripe_secret_key = '[REDACTED:secret]'"),
        ("我的密码是abc12345，别告诉别人", "我的密码是[REDACTED:password]，别告诉别人"),
        ("访问令牌：tok-9f8e7d", "访问令牌：[REDACTED:secret]"),
        ("curl -u deploy:s3cret https://x", "curl -u deploy:[REDACTED:password] https://x"),
        ("mysql -u root -ps3cret db", "mysql -u root -p[REDACTED:password] db"),
        ("gh auth login --token abc123def", "gh auth login --token [REDACTED:secret]"),
        (
            "machine api.example.com login me password s3cret",
            "machine api.example.com login me password [REDACTED:password]",
        ),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEow (cut by head)",
            "[REDACTED:private-key]",
        ),
    ],
)
def test_common_forms_outside_the_first_list(text, redacted):
    assert REDACT.text(text) == redacted


def test_a_kubernetes_secret_keeps_its_names_and_loses_its_values():
    yaml = (
        "apiVersion: v1\ndata:\n  tls.crt: TFMwdExTMUNSVWRK\n  username: YWRtaW4=\n"
        "kind: Secret\nmetadata:\n  name: db\ntype: Opaque\n"
    )
    assert REDACT.text(yaml) == yaml.replace(
        "TFMwdExTMUNSVWRK", "[REDACTED:kubernetes-secret]"
    ).replace("YWRtaW4=", "[REDACTED:kubernetes-secret]")
    as_json = {"kind": "Secret", "data": {"username": "YWRtaW4="}, "metadata": {"name": "db"}}
    assert REDACT.value(as_json)["data"] == {"username": "[REDACTED:kubernetes-secret]"}
    assert json.loads(REDACT.text(json.dumps(as_json)))["metadata"] == {"name": "db"}


def test_every_layer_is_decoded_and_stays_valid_json():
    inner = json.dumps({"db": {"password": "pw with spaces"}, "user": "app"})
    outer = json.dumps({"stdout": inner, "note": "缓存"}, ensure_ascii=True)
    clean = REDACT.text(outer)
    assert "pw with spaces" not in clean
    assert json.loads(json.loads(clean)["stdout"]) == {
        "db": {"password": "[REDACTED:password]"},
        "user": "app",
    }
    three_deep = json.dumps(json.dumps(json.dumps({"api_key": "k-FAKE-3deep"})))
    assert "FAKE-3deep" not in REDACT.text(three_deep)
    escaped = json.dumps({"cmd": "export 密码=FAKEzh1 令牌：FAKEzh2"}, ensure_ascii=True)
    assert "FAKEzh" not in REDACT.text(escaped)
    not_json = 'log line: {\\"token\\": \\"FAKEinline9\\"} and C:\\new\\table'
    assert REDACT.text(not_json) == (
        'log line: {\\"token\\": \\"[REDACTED:secret]\\"} and C:\\new\\table'
    )


@pytest.mark.parametrize(
    "text",
    [
        "Basic understanding of Python is enough; pass: yes",
        "PWD=/home/me/project OLDPWD=/tmp",
        "password=${DB_PASSWORD} token: {{ vault_token }} api_key=<your-key>",
        "密码是什么？我忘了。",
        'C:\\Users\\me\\new folder and "quoted \\"text\\""',
        '{"tokens": 12, "max_tokens": 4096, "session_id": "s1", "bypass": "yes"}',
        "[1] first point [2] second point",
    ],
)
def test_more_ordinary_text_is_left_alone(text):
    assert REDACT.text(text) == text


def test_json_inside_ordinary_text_is_read():
    secret = {"apiVersion": "v1", "kind": "Secret", "data": {"user": "YWRtaW4="}}
    text = "ops note: " + json.dumps(secret) + ' and {\n  "db": {"password": "two words"}\n}'
    clean = REDACT.text(text)
    assert "YWRtaW4=" not in clean and "two words" not in clean
    assert clean.startswith("ops note: {")
