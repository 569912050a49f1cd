"""Write-time secret redaction (SPEC §5: on by default, ``redact = false`` opts out).

Every command that stores what a user or a tool said passes it through here first, so
no file of the store — JSONL, databases, blobs — ever holds the secret. A secret
becomes ``[REDACTED:kind]``; an assignment keeps its name (``password=[REDACTED:password]``).

The rules are the kinds public secret scanners look for (providers' keys by their
prefixes, private key blocks, credentials in URLs and headers, values assigned to a
secret's name in env, YAML, JSON and TOML, Kubernetes secrets' data). A text is read
through every layer it holds: JSON inside a JSON string (``cat config.json`` as a tool
result) and ``\\uXXXX`` escapes (``json.dumps`` of non-ASCII text) are decoded, and a
secret found in a decoded layer is erased from the text in every escaped form.

``log`` runs once per agent turn with redaction on, so the cost is kept off its path:
a rule's expression is compiled the first time a text holds one of its literal markers
(a lowercase substring test, much cheaper than the regex on large tool output), and
the layers are decoded only for text holding a backslash or shaped like JSON.
Patterns from config (``redact_patterns``) have no markers and always run.
"""

from __future__ import annotations

import json
import re
from functools import cache, lru_cache

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Any, BinaryIO

    from soloqueue_mem.config import Config

REDACTED = "[REDACTED:{kind}]"
KIND = r"^[a-z0-9][a-z0-9-]{0,39}$"
_NOT_DONE = r"(?!\[REDACTED:)"
_DONE = "[REDACTED:"

# Secret names in assignments and in JSON keys: the value after them is a secret. A
# name matches at the end of a longer one (DB_PASSWORD, STRIPE_SECRET_KEY), and must end
# there (max_tokens=4096, password_file=… are not secrets).
_PASSWORD_NAME = r"(?:password|passwd|passphrase|passcode|pwd|pswd|(?<=[_.-])pass|密码|口令)"
_SECRET_NAME = (
    r"(?:secret|token|api[_.-]?key|apikey|(?:access|private|secret|signing|encryption|master"
    r"|account|session|client|app|auth|license|webhook|ssh|deploy|storage|shared)[_.-]?key"
    r"|private[_.-]?key[_.-]?id|secret[_.-]?key[_.-]?base|credentials?|密钥|秘钥|令牌|私钥)"
)
# The value: up to the closing quote when it is quoted, else up to a space or delimiter;
# a reference to another value (${VAR}, {{ var }}, <placeholder>) or a path (PWD=/home/me)
# is not a secret.
_VALUE = (
    r"""(?P<open>["'])?""" + _NOT_DONE + r"(?!\$\{|\{\{|<[A-Za-z]|/)"
    r"""(?P<secret>(?(open)[^"'\n]{3,}|[^\s"',;&<>]{3,}))"""
)
_ASSIGNED = r"""["']?[ \t]*(?::=|=>|[:=：＝])[ \t]*""" + _VALUE
# 密码是 hunter22: a Chinese name then 是 or 为, with an ASCII value (密码是什么 is not one).
_ZH_IS = r"(?:是|为)[ \t]*" + _NOT_DONE + r"(?P<secret>[!-~]{4,})"

# (kind, expression, markers). Providers' keys first: a value that is one of them keeps
# that kind even when it is assigned to a name (OPENAI_API_KEY=sk-...). A provider's key
# may be glued to the word before it (``tokensk-…``, ``密钥sk-…``): see ``_glued_word``.
# A rule without a ``secret`` group is a provider's key: the whole match is replaced.
BUILTIN: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "private-key",  # a truncated block (``head key.pem``) is redacted to the end
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
        r"(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        ("private key",),
    ),
    ("anthropic-key", r"sk-ant-[A-Za-z0-9_-]{20,}", ("sk-ant-",)),
    ("openai-key", r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", ("sk-",)),
    (
        "github-token",
        r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    (
        "gitlab-token",
        r"(?:gl(?:pat|dt|rt|ptt|ft|imt|agent|soat|cbt|ffct|oas)-[A-Za-z0-9_-]{20,}"
        r"|GR1348941[A-Za-z0-9_-]{20,})",
        (
            "glpat-",
            "gldt-",
            "glrt-",
            "glptt-",
            "glft-",
            "glimt-",
            "glagent-",
            "glsoat-",
            "glcbt-",
            "glffct-",
            "gloas-",
            "gr1348941",
        ),
    ),
    ("aws-access-key", r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b", ("akia", "asia", "abia", "acca")),
    ("google-api-key", r"AIza[0-9A-Za-z_-]{35}", ("aiza",)),
    (
        "google-oauth-token",
        r"(?:ya29\.[0-9A-Za-z_-]{20,}|1//0[0-9A-Za-z_-]{30,}|GOCSPX-[0-9A-Za-z_-]{20,})",
        ("ya29.", "1//0", "gocspx-"),
    ),
    ("azure-client-secret", r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}", ("q~",)),
    ("slack-token", r"(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,}", ("xox", "xapp-")),
    (
        "stripe-key",
        r"(?:[sr]k_(?:live|test)_|whsec_)[A-Za-z0-9]{16,}",
        ("k_live_", "k_test_", "whsec_"),
    ),
    ("huggingface-token", r"(?:hf_|api_org_)[A-Za-z0-9]{30,}", ("hf_", "api_org_")),
    ("npm-token", r"npm_[A-Za-z0-9]{36}", ("npm_",)),
    ("pypi-token", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}", ("pypi-ageichlwas5vcmc",)),
    ("sendgrid-key", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", ("sg.",)),
    ("twilio-key", r"\bSK[0-9a-f]{32}\b", ("sk",)),
    ("mailgun-key", r"\bkey-[0-9a-f]{32}\b", ("key-",)),
    (
        "shopify-token",
        r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
        ("shpat_", "shpca_", "shppa_", "shpss_"),
    ),
    ("digitalocean-token", r"do[opr]_v1_[a-f0-9]{64}", ("_v1_",)),
    ("databricks-token", r"dapi[a-f0-9]{32}(?:-\d)?", ("dapi",)),
    ("vault-token", r"hv[sbr]\.[A-Za-z0-9_-]{24,}", ("hvs.", "hvb.", "hvr.")),
    ("docker-token", r"dckr_pat_[A-Za-z0-9_-]{20,}", ("dckr_pat_",)),
    (
        "grafana-token",
        r"(?:glc_[A-Za-z0-9+/]{32,}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})",
        ("glc_", "glsa_"),
    ),
    ("newrelic-key", r"NRAK-[A-Z0-9]{27}", ("nrak-",)),
    ("sentry-token", r"sntry[su]_[A-Za-z0-9+/=_-]{30,}", ("sntrys_", "sntryu_")),
    ("postman-key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}", ("pmak-",)),
    ("telegram-token", r"\b\d{8,10}:AA[0-9A-Za-z_-]{33}", (":aa",)),
    (
        "ai-provider-key",  # Groq, xAI, Replicate, Perplexity
        r"(?:gsk_[A-Za-z0-9]{40,}|xai-[A-Za-z0-9]{40,}|r8_[A-Za-z0-9]{30,}|pplx-[A-Za-z0-9]{40,})",
        ("gsk_", "xai-", "r8_", "pplx-"),
    ),
    ("notion-token", r"(?:ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43})", ("ntn_", "secret_")),
    ("linear-key", r"lin_api_[A-Za-z0-9]{40}", ("lin_api_",)),
    ("atlassian-token", r"ATATT3[A-Za-z0-9_=-]{100,}", ("atatt3",)),
    ("age-secret-key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", ("age-secret-key-",)),
    ("square-token", r"sq0(?:atp|csp)-[0-9A-Za-z_-]{22,}", ("sq0atp-", "sq0csp-")),
    ("doppler-token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}", ("dp.",)),
    ("pulumi-token", r"pul-[a-f0-9]{40}", ("pul-",)),
    ("terraform-token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}", (".atlasv1.",)),
    ("planetscale-token", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,}", ("pscale_",)),
    ("jwt", r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", ("eyj",)),
    (
        "slack-webhook",
        r"hooks\.slack\.com/(?P<secret>(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{10,})",
        ("hooks.slack.com/",),
    ),
    (
        "webhook-url",  # Discord and Microsoft Teams incoming webhooks
        r"(?:discord(?:app)?\.com/api/webhooks/|\.webhook\.office\.com/webhookb2/)"
        r"(?P<secret>[A-Za-z0-9@/_-]{20,})",
        ("/api/webhooks/", "webhookb2/"),
    ),
    ("azure-sas", r"[?&]sig=" + _NOT_DONE + r"(?P<secret>[A-Za-z0-9%+/=]{20,})", ("sig=",)),
    (
        "bearer-token",
        r"(?i:\bbearer)[ \t]+" + _NOT_DONE + r"(?P<secret>[A-Za-z0-9._~+/=-]{12,})",
        ("bearer",),
    ),
    (
        "authorization",  # any scheme: Basic, token, Digest, a bare key
        r"(?i:\b(?:proxy-)?authorization)[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"(?:(?i:basic|token|bearer|digest|negotiate|ntlm|apikey|api-key|sso-key|key)[ \t]+)?+"
        + _NOT_DONE
        + r"""(?P<secret>[^\s"',;]{6,})""",
        ("authorization",),
    ),
    (
        "basic-auth",  # Basic dXNlcjpwYXNz outside a header: see _CHECKS
        r"\bBasic[ \t]+" + _NOT_DONE + r"(?P<secret>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])",
        ("basic",),
    ),
    (
        "connection-string",
        r"://[^\s:/@]+:" + _NOT_DONE + r"(?P<secret>[^\s@/]+)@",
        ("://",),
    ),
    (
        "password",  # curl -u user:pass, and a .netrc line
        r"(?:(?<![\w-])(?:-u|--user)[ \t]+[\"']?[^\s:\"']+:"
        r"|\bmachine[ \t]+\S+[ \t]+login[ \t]+\S+[ \t]+password[ \t]+)"
        + _NOT_DONE
        + r"""(?P<secret>[^\s"']{3,})""",
        ("-u", "--user", "machine"),
    ),
    (
        "password",  # --password X, mysql -pX
        r"(?:(?<![\w-])--(?i:password|passwd|pass|pwd)[ \t]+|\bmysql\S*[ \t][^\n]*?(?<=[ \t])-p)"
        + _NOT_DONE
        + r"""(?!-)(?P<secret>[^\s"']{3,})""",
        ("--pass", "--pwd", "mysql"),
    ),
    (
        "secret",  # --token X, --api-key X
        r"(?<![\w-])--(?i:token|api-key|apikey|secret|client-secret|access-token|auth-token)"
        r"[ \t]+" + _NOT_DONE + r"""(?!-)(?P<secret>[^\s"']{3,})""",
        (
            "--token",
            "--api-key",
            "--apikey",
            "--secret",
            "--client-secret",
            "--access-token",
            "--auth-token",
        ),
    ),
    (
        "password",
        r"(?i:" + _PASSWORD_NAME + r")" + _ASSIGNED,
        ("pass", "pwd", "pswd", "密码", "口令"),
    ),
    (
        "secret",
        r"(?i:" + _SECRET_NAME + r")" + _ASSIGNED,
        ("secret", "token", "key", "credential", "密钥", "秘钥", "令牌", "私钥"),
    ),
    ("password", r"(?:密码|口令)" + _ZH_IS, ("密码", "口令")),
    ("secret", r"(?:密钥|秘钥|令牌|私钥)" + _ZH_IS, ("密钥", "秘钥", "令牌", "私钥")),
)
# A key glued to a word must look like one: a run of 16+ letters and digits holding both.
# ``task-management-system-for-all`` and ``flask-sqlalchemy-extensions`` do not.
_KEY_LIKE = r"(?=[A-Za-z0-9]*[0-9])(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{16,}"
# Longer than any provider's key: a glued match this long is a blob (base64url data).
_GLUED_MAX = 256
_JSON_NAME = (
    rf"(?i)(?:(?P<password>{_PASSWORD_NAME})|(?P<authorization>(?:proxy-)?authorization)"
    rf"|{_SECRET_NAME})$"
)
# A Kubernetes Secret (``kubectl get secret -o yaml``): every value of its ``data:`` and
# ``stringData:`` blocks is a secret, whatever its name.
_KUBE_KIND = "kubernetes-secret"
_KUBE_MARKER = "kind: secret"
_KUBE_BLOCK = (
    r"(?m)^(?P<indent>[ \t]*)(?:data|stringData):[ \t]*\r?\n"
    r"(?:(?P=indent)[ \t]+\S[^\n]*(?:\n|\Z))+"
)
_KUBE_LINE = r"(?m)^[ \t]+(?:[^\s:]+:[ \t]*)?+" + _NOT_DONE + r"(?P<secret>[^\s|>][^\n]*?)[ \t]*$"
# How many escaped or JSON layers of a text are decoded.
_MAX_LAYERS = 4
_UNESCAPE = (
    r"\\(?:u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})"
    r"|u([0-9a-fA-F]{4})|([\"\\/bfnrt]))"
)
_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
Found = tuple[str, str, int, bool]  # value, kind, escaped how many times, a JSON string


@cache
def _compiled(expr: str) -> re.Pattern[str]:
    """``expr`` compiled the first time it is needed: ``log`` pays only for the rules
    whose markers its text holds."""
    return re.compile(expr)


def _is_basic_credentials(secret: str) -> bool:
    """``Basic X`` outside a header is a credential when X is base64 of ``user:password``."""
    import base64
    import binascii

    try:
        return b":" in base64.b64decode(secret + "=" * (-len(secret) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False


_CHECKS = {"basic-auth": _is_basic_credentials}


class Redactor:
    """Replaces secrets in text and in JSON values; built once per configuration."""

    def __init__(self, extra: Mapping[str, str]) -> None:
        self._extra = [(kind, re.compile(expr)) for kind, expr in extra.items()]
        # The last text and what it became: a logged message's content comes again in
        # its original message.
        self._last = ("", "")

    def text(self, text: str) -> str:
        """``text`` with every secret replaced by ``[REDACTED:kind]``, in every layer."""
        last = self._last
        if text == last[0]:
            return last[1]
        clean = self._redacted(text)
        self._last = (text, clean)
        return clean

    def _redacted(self, text: str) -> str:
        for kind, pattern in self._extra:
            text = pattern.sub(REDACTED.format(kind=kind), text)
        if _layered(text):
            found: list[Found] = []
            self._collect(text, 0, found)
            text = _erased(text, found)
        lowered = _lowered(text)
        for index in _rules_for(lowered):
            text = "".join(self._pieces(index, text))
        if _KUBE_MARKER in lowered:
            text = _kube_yaml(text)[0]
        return text

    def value(self, value: Any) -> Any:
        """A JSON value with every string redacted; a string under a secret's name
        (``{"password": "..."}``) or in a Kubernetes Secret's data is replaced whole."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, dict):
            return {key: self._member(item, kind) for key, item, kind in self._members(value)}
        return value

    def _member(self, item: Any, kind: str | None) -> Any:
        if kind is None:
            return self.value(item)
        if kind == _KUBE_KIND:
            return {
                key: REDACTED.format(kind=kind) if _secret(v) else self.value(v)
                for key, v in item.items()
            }
        return REDACTED.format(kind=kind)

    def _members(self, value: dict[str, Any]) -> Iterator[tuple[str, Any, str | None]]:
        """Each member of a JSON object with the kind of secret it is as a whole (None:
        not one; ``kubernetes-secret``: every string in it is one)."""
        kube = value.get("kind") == "Secret"
        for key, item in value.items():
            if kube and key in ("data", "stringData") and isinstance(item, dict):
                yield key, item, _KUBE_KIND
                continue
            named = _name_kind(key) if _secret(item) else None
            yield key, item, named and (self._provider(item) or named)

    def _pieces(self, index: int, text: str) -> Iterator[str]:
        """``text`` cut into its pieces, each secret rule ``index`` finds replaced."""
        kind, done = BUILTIN[index][0], 0
        for match in self._matches(index, text):
            yield text[done : match.start()]
            yield self._replace(match, kind, text)
            done = match.end()
        yield text[done:]

    def _matches(self, index: int, text: str) -> Iterator[re.Match[str]]:
        """The matches of rule ``index`` that are secrets, on ``text`` or, for a rule
        that ignores case, on ``text`` lowercased (the same length: the positions are
        ``text``'s). A provider's prefix inside a word that starts no key is skipped,
        and the search goes on from the next character (a key may still start later in
        that word); a rule with a check keeps what passes it."""
        pattern, caseless = _rule(index)
        subject = _lowered(text) if caseless else text
        check = _CHECKS.get(BUILTIN[index][0])
        position = 0
        while match := pattern.search(subject, position):
            if (pattern.groups == 0 and _glued_word(match)) or (
                check is not None and not check(match["secret"])
            ):
                position = match.start() + 1
                continue
            yield match
            position = match.end()

    def _replace(self, match: re.Match[str], kind: str, text: str) -> str:
        """The match with its secret (the ``secret`` group, else all of it) replaced."""
        if "secret" not in match.re.groupindex:
            return REDACTED.format(kind=kind)
        if kind in ("password", "secret"):
            kind = self._provider(text[match.start("secret") : match.end("secret")]) or kind
        return _with_secret_replaced(match, kind, text)

    def _provider(self, value: str) -> str | None:
        """The provider whose key ``value`` is, if it is one."""
        if len(value) < _RUN_LENGTH:
            return None
        lowered = value.lower()
        hits = {index for marker, index in _RUN_MARKERS if marker in lowered}
        for index in sorted(hits):
            if _rule(index)[0].fullmatch(value):
                return BUILTIN[index][0]
        return None

    def _collect(self, text: str, depth: int, found: list[Found]) -> None:
        """Add to ``found`` the secrets of ``text``'s decoded layers (``text`` is
        ``depth`` layers down). The outer text itself is left to the rules."""
        if depth > 0:
            for kind, pattern in self._extra:
                found += [(match.group(), kind, depth, False) for match in pattern.finditer(text)]
            lowered = _lowered(text)
            for index in _rules_for(lowered):
                for match in self._matches(index, text):
                    start, end = match.span("secret" if match.re.groups else 0)
                    found.append((text[start:end], BUILTIN[index][0], depth, False))
            if _KUBE_MARKER in lowered:
                found += [(value, _KUBE_KIND, depth, False) for value in _kube_yaml(text)[1]]
        if depth >= _MAX_LAYERS:
            return
        parsed = _json(text)
        values = [parsed[0]] if parsed else _embedded_json(text)
        plain: list[str] = []
        for value in values:
            self._walk(value, depth, found, plain)
        if plain:  # read in one pass, not one string at a time
            self._collect("\n".join(plain), depth + 1, found)
        if not parsed and "\\" in text:
            unescaped = _compiled(_UNESCAPE).sub(_unescaped, text)
            if unescaped != text:
                self._collect(unescaped, depth + 1, found)

    def _walk(self, value: Any, depth: int, found: list[Found], plain: list[str]) -> None:
        """Secrets of a JSON value parsed from a text ``depth`` layers down: a member's
        whole string (a JSON string in that layer), and what its strings hold, one
        layer further down (those not shaped like JSON go to ``plain``)."""
        if isinstance(value, str):
            if _json_shaped(value):
                self._collect(value, depth + 1, found)
            else:
                plain.append(value)
        elif isinstance(value, list):
            for item in value:
                self._walk(item, depth, found, plain)
        elif isinstance(value, dict):
            for _, item, kind in self._members(value):
                if kind == _KUBE_KIND:
                    found += [(v, kind, depth, True) for v in item.values() if _secret(v)]
                elif kind is not None:
                    found.append((item, kind, depth, True))
                else:
                    self._walk(item, depth, found, plain)


# The rules whose whole match is a provider's key (a private key block is not a key).
_PROVIDERS = frozenset(
    kind for kind, expr, _ in BUILTIN if "?P<secret>" not in expr and kind != "private-key"
)
# A provider's key is a run of 15 or more of these characters, so its markers are looked
# for only in such runs: most texts have none, and the many providers cost nothing there.
_RUN_LENGTH = 15
_LONG_RUN = rf"[a-z0-9_./+~:=-]{{{_RUN_LENGTH},}}"
# (marker, rule) of the providers' rules, and of the others (looked for in the whole text).
_RUN_MARKERS = tuple(
    (marker, index)
    for index, (kind, _, markers) in enumerate(BUILTIN)
    if kind in _PROVIDERS
    for marker in markers
)
_TEXT_MARKERS = tuple(
    (marker, index)
    for index, (kind, _, markers) in enumerate(BUILTIN)
    if kind not in _PROVIDERS
    for marker in markers
)


def _rules_for(lowered: str) -> list[int]:
    """The rules, in order, whose markers the lowercased text holds."""
    hits = {index for marker, index in _TEXT_MARKERS if marker in lowered}
    runs = " ".join(_compiled(_LONG_RUN).findall(lowered))
    if runs:
        hits.update(index for marker, index in _RUN_MARKERS if marker in runs)
    return sorted(hits)


@cache
def _rule(index: int) -> tuple[re.Pattern[str], bool]:
    """Rule ``index`` compiled (the first time it is needed), and whether it runs on
    the lowercased text: a rule whose names ignore case (``(?i:password)``) is ~5x
    faster written in lowercase on lowercased text than ignoring case."""
    expr = BUILTIN[index][1]
    caseless = "(?i:" in expr
    if caseless:
        expr = expr.replace("(?i:", "(?:").replace(_NOT_DONE, _NOT_DONE.lower())
    return _compiled(expr), caseless


def _lowered(text: str) -> str:
    """``text`` lowercased, character for character (the few characters whose lowercase
    is longer, like ``İ``, are kept), so positions in it are positions in ``text``."""
    lowered = text.lower()
    if len(lowered) != len(text):
        lowered = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    return lowered


@lru_cache(maxsize=4096)
def _name_kind(key: str) -> str | None:
    """The kind of secret a JSON member named ``key`` holds (None: not a secret's name).
    Cached: the objects of one array repeat their names."""
    named = _compiled(_JSON_NAME).search(key)
    if named is None:
        return None
    if named["authorization"]:
        return "authorization"
    return "password" if named["password"] else "secret"


def _secret(value: Any) -> bool:
    """True for a string that may be a secret as a whole (not empty, not redacted)."""
    return isinstance(value, str) and bool(value) and not value.startswith(_DONE)


def _with_secret_replaced(match: re.Match[str], kind: str, text: str) -> str:
    """The match's span of ``text`` with its ``secret`` group replaced."""
    start, end = match.span()
    secret_start, secret_end = match.span("secret")
    return text[start:secret_start] + REDACTED.format(kind=kind) + text[secret_end:end]


def _kube_yaml(text: str) -> tuple[str, list[str]]:
    """``text`` with the values of a Kubernetes Secret's data blocks replaced, and the
    values."""
    values: list[str] = []

    def line(match: re.Match[str]) -> str:
        values.append(match["secret"])
        return _with_secret_replaced(match, _KUBE_KIND, match.string)

    def block(match: re.Match[str]) -> str:
        head, newline, body = match.group().partition("\n")
        return head + newline + _compiled(_KUBE_LINE).sub(line, body)

    return _compiled(_KUBE_BLOCK).sub(block, text), values


def _layered(text: str) -> bool:
    """Whether ``text`` may hold layers to decode: an escape, or JSON."""
    return "\\" in text or "{" in text or _json_shaped(text)


def _json_shaped(text: str) -> bool:
    return text.lstrip()[:1] in ("{", "[", '"')


def _embedded_json(text: str) -> list[Any]:
    """The JSON objects inside a text that is not JSON as a whole (``Output: {"a": …}``):
    each ``{"`` starts one, decoded from there when it can be."""
    values: list[Any] = []
    start = _compiled(_OBJECT_START)
    decoder = json.JSONDecoder()
    position = 0
    while match := start.search(text, position):
        try:
            value, position = decoder.raw_decode(text, match.start())
        except (ValueError, RecursionError):
            position = match.start() + 1
            continue
        values.append(value)
    return values


_OBJECT_START = r'\{\s*"'


def _json(text: str) -> tuple[Any] | None:
    """``(value,)`` when ``text`` is a JSON object, array or string, else None."""
    stripped = text.strip()
    if len(stripped) < 2 or stripped[0] not in '{["' or stripped[-1] not in '}]"':
        return None
    try:
        return (json.loads(stripped),)
    except (ValueError, RecursionError):
        return None


def _unescaped(match: re.Match[str]) -> str:
    high, low, code, char = match.groups()
    if high:
        return chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + int(low, 16) - 0xDC00)
    if code:
        return chr(int(code, 16))
    return _ESCAPES.get(char, char)


def _erased(text: str, found: list[Found]) -> str:
    """``text`` with each secret found in a decoded layer replaced, in every form it may
    take there: escaped once per layer, non-ASCII as itself or as ``\\uXXXX``; a JSON
    string by a JSON string, so the layer stays valid JSON."""
    forms: dict[str, str] = {}
    for value, kind, depth, quoted in found:
        if len(value) < (1 if quoted else 3):
            continue
        redacted = REDACTED.format(kind=kind)
        for ascii_only in (False, True):
            form, replacement = (
                (json.dumps(value, ensure_ascii=ascii_only), json.dumps(redacted))
                if quoted
                else (value, redacted)
            )
            for _ in range(depth + 1):
                forms.setdefault(form, replacement)
                form, replacement = _escaped(form, ascii_only), _escaped(replacement, ascii_only)
    if not forms:
        return text
    pattern = re.compile("|".join(map(_bounded, sorted(forms, key=len, reverse=True))))
    return pattern.sub(lambda match: forms[match.group()], text)


def _escaped(text: str, ascii_only: bool) -> str:
    return json.dumps(text, ensure_ascii=ascii_only)[1:-1]


# Before a secret found in a decoded layer: no letter or digit, unless it ends an escape.
_AFTER_A_WORD_BREAK = r"(?:(?<![A-Za-z0-9])|(?<=\\[nrtbf])|(?<=\\u[0-9a-fA-F]{4}))"


def _bounded(form: str) -> str:
    """``form`` as an expression that does not match inside a longer word."""
    head = _AFTER_A_WORD_BREAK if form[0].isalnum() else ""
    tail = r"(?![A-Za-z0-9])" if form[-1].isalnum() else ""
    return head + re.escape(form) + tail


def _glued_word(match: re.Match[str]) -> bool:
    """True when a provider's prefix found inside a word (``task-…``) starts no key:
    the match is glued to a word character and is not key-like, or also runs into the
    next word, or is a blob's length."""
    text, start, end = match.string, match.start(), match.end()
    if start == 0 or not _word_char(text[start - 1]):
        return False
    if end < len(text) and _word_char(text[end]):
        return True
    return end - start > _GLUED_MAX or _compiled(_KEY_LIKE).search(match.group()) is None


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def redacted_bytes(data: bytes, redact: Redactor) -> bytes:
    """UTF-8 text with its secrets replaced; other bytes (binary files) as they are."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    return redact.text(text).encode("utf-8")


def redacted_stream(stream: BinaryIO, redact: Redactor | None, cap: int) -> BinaryIO:
    """The content with its secrets replaced (as given when redaction is off). Text is
    read whole (at most ``cap`` bytes, max_input_bytes); content that is not UTF-8 text
    (a NUL byte or bad UTF-8 in its first 64 KiB) is passed on as given, streamed, so
    storing a large binary file works with redaction on."""
    if redact is None:
        return stream
    import io
    from typing import cast

    from soloqueue_mem.errors import BadInput

    head = stream.read(_SNIFF_BYTES)
    if not _looks_like_text(head):
        return cast("BinaryIO", _Rejoined(head, stream))
    data = head + stream.read(max(cap + 1 - len(head), 0))
    if len(data) > cap:
        raise BadInput(f"with redact on, text is read whole: at most max_input_bytes ({cap})")
    return io.BytesIO(redacted_bytes(data, redact))


_SNIFF_BYTES = 64 * 1024


def _looks_like_text(head: bytes) -> bool:
    import codecs

    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return False
    return b"\0" not in head


class _Rejoined:
    """A stream of ``head`` and then the rest of ``stream``."""

    def __init__(self, head: bytes, stream: BinaryIO) -> None:
        self.head, self.stream = head, stream

    def read(self, size: int = -1) -> bytes:
        if not self.head:
            return self.stream.read(size)
        chunk, self.head = (
            (self.head, b"") if size < 0 or size >= len(self.head)
            else (self.head[:size], self.head[size:])
        )  # fmt: skip
        return chunk


@cache
def _redactor(extra: tuple[tuple[str, str], ...]) -> Redactor:
    return Redactor(dict(extra))


def redactor(config: Config) -> Redactor | None:
    """The process's redactor for ``config``; None when redaction is off (``redact =
    false``)."""
    return _redactor(tuple(config.redact_patterns.items())) if config.redact else None


def check_patterns(extra: Mapping[str, Any]) -> str | None:
    """Why ``redact_patterns`` is unusable (None when it is fine)."""
    for kind, expr in extra.items():
        if not _compiled(KIND).match(kind):
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
