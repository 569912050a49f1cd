"""Write-time secret redaction (SPEC §5, ``redact = true``).

Every command that stores what a user or a tool said passes it through here first, so
no file of the store — JSONL, databases, blobs — ever holds the secret. A secret
becomes ``[REDACTED:kind]``; an assignment keeps its name (``password=[REDACTED:password]``).

``log`` runs once per agent turn, so the built-in patterns are compiled once per
process, and each runs only on text holding one of its literal markers (a lowercase
substring test, much cheaper than the regex on large tool output). Patterns from
config (``redact_patterns``) have no markers and always run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from soloqueue_mem.config import Config

REDACTED = "[REDACTED:{kind}]"
KIND = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
_NOT_DONE = r"(?!\[REDACTED:)"

# Secret names in assignments and in JSON keys: the value after them is a secret.
_PASSWORD_NAME = r"(?:password|passwd|passphrase|密码|口令)"
_SECRET_NAME = (
    r"(?:secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|auth[_-]?key"
    r"|credentials?)"
)
_ASSIGNED = r"""["']?[ \t]*[:=：][ \t]*["']?""" + _NOT_DONE + r"""(?P<secret>[^\s"',;&<>]{3,})"""

# (kind, expression, markers). Providers' keys first: a value that is one of them keeps
# that kind even when it is assigned to a name (OPENAI_API_KEY=sk-...). A provider's key
# may be glued to the word before it (``tokensk-…``, ``密钥sk-…``): see ``_glued_word``.
BUILTIN: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "private-key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?"
        r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----",
        ("private key-----",),
    ),
    ("anthropic-key", r"sk-ant-[A-Za-z0-9_-]{20,}", ("sk-ant-",)),
    ("openai-key", r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", ("sk-",)),
    (
        "github-token",
        r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    ("aws-access-key", r"(?:AKIA|ASIA)[0-9A-Z]{16}\b", ("akia", "asia")),
    ("google-api-key", r"AIza[0-9A-Za-z_-]{35}", ("aiza",)),
    ("slack-token", r"xox[abposr]-[A-Za-z0-9-]{10,}", ("xox",)),
    ("stripe-key", r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,}", ("k_live_", "k_test_")),
    ("huggingface-token", r"hf_[A-Za-z0-9]{30,}", ("hf_",)),
    ("jwt", r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", ("eyj",)),
    (
        "bearer-token",
        r"(?i:\bbearer)[ \t]+" + _NOT_DONE + r"(?P<secret>[A-Za-z0-9._~+/=-]{12,})",
        ("bearer",),
    ),
    (
        "connection-string",
        r"://[^\s:/@]+:" + _NOT_DONE + r"(?P<secret>[^\s@/]+)@",
        ("://",),
    ),
    ("password", r"(?i:" + _PASSWORD_NAME + r")" + _ASSIGNED, ("pass", "密码", "口令")),
    (
        "secret",
        r"(?i:" + _SECRET_NAME + r")" + _ASSIGNED,
        ("secret", "token", "key", "credential"),
    ),
)
# A key glued to a word must look like one: a run of 16+ letters and digits holding both.
# ``task-management-system-for-all`` and ``flask-sqlalchemy-extensions`` do not.
_KEY_LIKE = re.compile(r"(?=[A-Za-z0-9]*[0-9])(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{16,}")
# Longer than any provider's key: a glued match this long is a blob (base64url data).
_GLUED_MAX = 256
_JSON_NAME = re.compile(rf"(?i)(?:(?P<password>{_PASSWORD_NAME})|{_SECRET_NAME})$")


class Redactor:
    """Replaces secrets in text and in JSON values; built once per configuration."""

    def __init__(self, extra: Mapping[str, str]) -> None:
        self._builtin = [(kind, re.compile(expr), markers) for kind, expr, markers in BUILTIN]
        self._providers = [
            (kind, pattern)
            for kind, pattern, _ in self._builtin
            if pattern.groups == 0 and kind != "private-key"
        ]
        self._extra = [(kind, re.compile(expr)) for kind, expr in extra.items()]

    def text(self, text: str) -> str:
        """``text`` with every secret replaced by ``[REDACTED:kind]``."""
        for kind, pattern in self._extra:
            text = pattern.sub(REDACTED.format(kind=kind), text)
        lowered = text.lower()
        for kind, pattern, markers in self._builtin:
            if any(marker in lowered for marker in markers):
                text = self._sub(pattern, kind, text)
        return text

    def _sub(self, pattern: re.Pattern[str], kind: str, text: str) -> str:
        """``pattern.sub`` that skips a provider's prefix inside a word and searches on
        from the next character (a key may still start later in that word)."""
        parts, done, position = [], 0, 0
        while match := pattern.search(text, position):
            if pattern.groups == 0 and _glued_word(match):
                position = match.start() + 1
                continue
            parts += [text[done : match.start()], self._replace(match, kind)]
            done = position = match.end()
        return "".join(parts) + text[done:] if parts else text

    def value(self, value: Any) -> Any:
        """A JSON value with every string redacted; a string under a secret's name
        (``{"password": "..."}``) is replaced whole."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, dict):
            return {key: self._member(key, item) for key, item in value.items()}
        return value

    def _member(self, key: str, item: Any) -> Any:
        named = _JSON_NAME.search(key) if isinstance(item, str) and item else None
        if named is None or item.startswith("[REDACTED:"):
            return self.value(item)
        kind = self._provider(item) or ("password" if named["password"] else "secret")
        return REDACTED.format(kind=kind)

    def _replace(self, match: re.Match[str], kind: str) -> str:
        """The match with its secret (the ``secret`` group, else all of it) replaced."""
        if match.re.groups == 0:
            return REDACTED.format(kind=kind)
        if kind in ("password", "secret"):
            kind = self._provider(match.group("secret")) or kind
        start, end = match.start("secret") - match.start(), match.end("secret") - match.start()
        whole = match.group()
        return whole[:start] + REDACTED.format(kind=kind) + whole[end:]

    def _provider(self, value: str) -> str | None:
        """The provider whose key ``value`` is, if it is one."""
        return next((kind for kind, pattern in self._providers if pattern.fullmatch(value)), None)


def _glued_word(match: re.Match[str]) -> bool:
    """True when a provider's prefix found inside a word (``task-…``) starts no key:
    the match is glued to a word character and is not key-like, or also runs into the
    next word, or is a blob's length."""
    text, start, end = match.string, match.start(), match.end()
    if start == 0 or not _word_char(text[start - 1]):
        return False
    if end < len(text) and _word_char(text[end]):
        return True
    return end - start > _GLUED_MAX or _KEY_LIKE.search(match.group()) is None


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def redacted_bytes(data: bytes, redact: Redactor) -> bytes:
    """UTF-8 text with its secrets replaced; other bytes (binary files) as they are."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    return redact.text(text).encode("utf-8")


@cache
def _redactor(extra: tuple[tuple[str, str], ...]) -> Redactor:
    return Redactor(dict(extra))


def redactor(config: Config) -> Redactor | None:
    """The process's redactor for ``config``; None when redaction is off."""
    return _redactor(tuple(config.redact_patterns.items())) if config.redact else None


def check_patterns(extra: Mapping[str, Any]) -> str | None:
    """Why ``redact_patterns`` is unusable (None when it is fine)."""
    for kind, expr in extra.items():
        if not KIND.match(kind):
            return f"redact_patterns: kind {kind!r} must be lowercase letters, digits and '-'"
        if not isinstance(expr, str):
            return f"redact_patterns.{kind} must be a regular expression string"
        try:
            pattern = re.compile(expr)
        except re.error as exc:
            return f"redact_patterns.{kind}: {exc}"
        if pattern.fullmatch(""):
            return f"redact_patterns.{kind} matches empty text"
    return None
