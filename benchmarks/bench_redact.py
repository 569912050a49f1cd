#!/usr/bin/env python3
"""Secret redaction (issue 30): no secret stored in clear on any write path, and few
ordinary turns changed.

(1) A corpus of secret forms generated here (fake values from a seeded generator:
providers' keys by their prefixes, private key blocks, JWTs, credentials in URLs and
headers, assignments in env, YAML, JSON, TOML and code, Kubernetes secrets, command
lines, Chinese forms; and some of them again inside JSON inside a JSON string and as a
JSON string with ``\\uXXXX`` escapes) goes through every write path of the CLI, each
into its own store with the default config: ``log``, ``log --batch`` (as a tool-call's
arguments and a tool result), ``hook claude`` (UserPromptSubmit, PostToolUse, Stop
reading a transcript), ``import claude-code``, ``import`` of a dump written by a store
with ``redact = false``, ``remember``, ``artifact save``, ``attach``, ``kv set``,
``working add``, ``promote``, ``scratchpad set``, ``session set`` and ``graph remember``.
Commands run in process through the CLI's own entry (Typer's test runner; the
``--processes`` flag runs each as ``python -m soloqueue_mem`` instead, ~3x slower).
Then every file under each store root — JSONL, Markdown, databases and their ``-wal``
files, blobs — is searched (case-insensitively: the full-text index keeps lowercased
words) for every run of 12+ letters and digits of every secret, before and after a
checkpoint. The floor of the same run: the ``log --batch`` path into a store with
``redact = false``, where every form must be found (the search works).

(2) False positives: the share of turns whose text redaction changes, on LoCoMo
(English) and on the MemoryBank Chinese dialogues and the labelled Chinese evidence
set's questions and answers; the changed turns are listed. Goal <= 0.1%.

Run: ``/tmp/bench-venv/bin/python benchmarks/bench_redact.py [--quick] [--processes]``.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import re
import sqlite3
import string
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import _common as c

c.import_project()

ALNUM = string.ascii_letters + string.digits
SESSION = "7f3c2a9e-1b4d-4c8e-9a51-2d6f0e8b4c17"


class Form(NamedTuple):
    name: str
    text: str
    needles: tuple[str, ...]  # lowercased runs of 12+ letters and digits of its secrets


# --- the corpus -----------------------------------------------------------------------


class Secrets:
    """Fake secret values; each remembers its runs of 12+ letters and digits."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.runs: list[str] = []

    def alnum(self, n: int, alphabet: str = ALNUM) -> str:
        value = "".join(self.rng.choice(alphabet) for _ in range(n))
        self.runs += [r.lower() for r in re.findall(r"[A-Za-z0-9]{12,}", value)]
        return value

    def hex(self, n: int) -> str:
        return self.alnum(n, "0123456789abcdef")

    def upper(self, n: int) -> str:
        return self.alnum(n, string.ascii_uppercase + string.digits)

    def password(self) -> str:
        """A password: a random run with a symbol or two."""
        return self.alnum(14) + self.rng.choice("!#%*+-_.") + self.alnum(2, string.digits)

    def b64(self, raw: bytes) -> str:
        value = base64.b64encode(raw).decode()
        self.runs += [r.lower() for r in re.findall(r"[A-Za-z0-9]{12,}", value)]
        return value

    def take(self) -> tuple[str, ...]:
        runs, self.runs = tuple(self.runs), []
        return runs


def provider_keys(s: Secrets) -> list[tuple[str, str, tuple[str, ...]]]:
    """(name, key, the runs of its random part) of each provider's key shape."""
    keys: list[tuple[str, str, tuple[str, ...]]] = []

    def k(name: str, key: str) -> None:
        keys.append((name, key, s.take()))

    k("openai", "sk-" + s.alnum(48))
    k("openai-project", "sk-proj-" + s.alnum(40) + "_" + s.alnum(20))
    k("anthropic", "sk-ant-api03-" + s.alnum(60) + "-" + s.alnum(20) + "AA")
    k("github-classic", "ghp_" + s.alnum(36))
    k("github-oauth", "gho_" + s.alnum(36))
    k("github-app", "ghs_" + s.alnum(36))
    k("github-fine-grained", "github_pat_" + s.alnum(22) + "_" + s.alnum(59))
    k("gitlab-pat", "glpat-" + s.alnum(20))
    k("gitlab-deploy", "gldt-" + s.alnum(20))
    k("gitlab-runner", "glrt-" + s.alnum(20))
    k("aws-access-key-id", "AKIA" + s.upper(16))
    k("aws-sts-key-id", "ASIA" + s.upper(16))
    k("google-api-key", "AIza" + s.alnum(35))
    k("google-oauth-access", "ya29." + s.alnum(60) + "-" + s.alnum(30))
    k("google-oauth-refresh", "1//0" + s.alnum(40) + "-" + s.alnum(20))
    k("google-client-secret", "GOCSPX-" + s.alnum(28))
    k("azure-client-secret", s.alnum(3) + "8Q~" + s.alnum(34))
    k("slack-bot", "xoxb-" + s.alnum(12, string.digits) + "-" + s.alnum(24))
    k("slack-user", "xoxp-" + s.alnum(12, string.digits) + "-" + s.alnum(32))
    k("slack-app", "xapp-1-" + s.upper(12) + "-" + s.alnum(13, string.digits) + "-" + s.hex(64))
    k("stripe-live", "sk_live_" + s.alnum(24))
    k("stripe-restricted", "rk_live_" + s.alnum(24))
    k("stripe-webhook", "whsec_" + s.alnum(32))
    k("huggingface", "hf_" + s.alnum(34))
    k("npm", "npm_" + s.alnum(36))
    k("pypi", "pypi-AgEIcHlwaS5vcmc" + s.alnum(70))
    k("sendgrid", "SG." + s.alnum(22) + "." + s.alnum(43))
    k("twilio", "SK" + s.hex(32))
    k("mailgun", "key-" + s.hex(32))
    k("shopify", "shpat_" + s.hex(32))
    k("digitalocean", "dop_v1_" + s.hex(64))
    k("databricks", "dapi" + s.hex(32))
    k("vault", "hvs." + s.alnum(90))
    k("docker-hub", "dckr_pat_" + s.alnum(27))
    k("grafana-cloud", "glc_" + s.alnum(60))
    k("newrelic", "NRAK-" + s.upper(27))
    k("sentry", "sntrys_" + s.alnum(60))
    k("postman", "PMAK-" + s.hex(24) + "-" + s.hex(34))
    k("telegram", s.alnum(10, string.digits) + ":AA" + s.alnum(33))
    k("groq", "gsk_" + s.alnum(52))
    k("xai", "xai-" + s.alnum(80))
    k("replicate", "r8_" + s.alnum(37))
    k("perplexity", "pplx-" + s.alnum(48))
    k("notion", "ntn_" + s.alnum(46))
    k("linear", "lin_api_" + s.alnum(40))
    k("atlassian", "ATATT3" + s.alnum(180))
    k("age", "AGE-SECRET-KEY-1" + s.upper(58))
    k("square", "sq0atp-" + s.alnum(22))
    k("doppler", "dp.pt." + s.alnum(43))
    k("pulumi", "pul-" + s.hex(40))
    k("terraform", s.alnum(14) + ".atlasv1." + s.alnum(67))
    k("planetscale", "pscale_tkn_" + s.alnum(43))
    k("jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ" + s.alnum(40) + "." + s.alnum(43))
    return keys


def private_key(s: Secrets, label: str) -> str:
    body = "\n".join(s.alnum(64) for _ in range(4))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


NAMES = [
    "DB_PASSWORD", "password", "passwd", "pwd", "SECRET_KEY", "API_KEY", "api_key",
    "CLIENT_SECRET", "access_token", "AUTH_TOKEN", "aws_secret_access_key", "ENCRYPTION_KEY",
    "JWT_SECRET", "DB_PASS", "signing_key", "GITHUB_TOKEN", "refresh_token", "passphrase",
    "STRIPE_SECRET_KEY", "SECRET_KEY_BASE", "private_key_id", "credentials", "app_secret",
    "MASTER_KEY",
]  # fmt: skip
SYNTAXES = [
    ("env", "{n}={v}"),
    ("export", "export {n}={v}"),
    ("env-quoted", '{n}="{v}"'),
    ("yaml", "  {n}: {v}"),
    ("yaml-quoted", "{n}: '{v}'"),
    ("json", '{{"{n}": "{v}"}}'),
    ("toml", '{n} = "{v}"'),
    ("python", "{n} = '{v}'"),
    ("go", '{n} := "{v}"'),
    ("compose", "      - {n}={v}"),
    ("php", "'{n}' => '{v}',"),
]


def base_forms(s: Secrets) -> list[Form]:
    """Every form, its values drawn from ``s``."""
    forms: list[Form] = []

    def add(name: str, text: str) -> None:
        forms.append(Form(name, text, s.take()))

    for name, key, needles in provider_keys(s):
        forms.append(Form(f"key/{name}", f"the {name} key is {key} (rotate it monthly)", needles))
    for label in (
        "RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY", "PRIVATE KEY",
        "ENCRYPTED PRIVATE KEY", "DSA PRIVATE KEY", "PGP PRIVATE KEY BLOCK",
    ):  # fmt: skip
        add(f"private-key/{label}", f"$ cat id\n{private_key(s, label)}\n")
    add(
        "private-key/truncated",
        "$ head -3 key.pem\n-----BEGIN RSA PRIVATE KEY-----\n" + s.alnum(64),
    )
    for i, name in enumerate(NAMES):
        for syntax, template in (SYNTAXES[i % len(SYNTAXES)], SYNTAXES[(i + 4) % len(SYNTAXES)]):
            add(f"assign/{syntax}/{name}", template.format(n=name, v=s.password()))
    user = "deploy"
    basic = s.b64(f"{user}:{s.password()}".encode())
    add("header/basic", f"Authorization: Basic {basic}")
    add("header/basic-curl", f"curl -H 'Basic {s.b64(f'ci:{s.password()}'.encode())}' https://x")
    add("header/token", f"Authorization: token {s.alnum(40)}")
    add("header/bearer", f"Authorization: Bearer {s.alnum(48)}")
    add("header/proxy", f"Proxy-Authorization: Basic {s.b64(f'p:{s.password()}'.encode())}")
    add("header/apikey", f"Authorization: ApiKey {s.alnum(32)}")
    add("header/x-api-key", f"X-API-Key: {s.alnum(32)}")
    add("header/private-token", f"PRIVATE-TOKEN: {s.alnum(20)}")
    add("header/json", json.dumps({"headers": {"Authorization": f"Basic {s.alnum(24)}"}}))
    for scheme in ("postgres", "mysql", "redis", "mongodb+srv", "amqp", "https", "ftp"):
        add(f"url/{scheme}", f"connecting to {scheme}://app:{s.password()}@db.internal:5432/x")
    add("url/git", f"git clone https://oauth2:{s.alnum(30)}@gitlab.example.com/g/p.git")
    add("url/pip", f"pip install --index-url https://u:{s.alnum(20)}@pypi.corp/simple x")
    add(
        "url/slack-webhook",
        f"https://hooks.slack.com/services/T{s.upper(10)}/B{s.upper(10)}/{s.alnum(24)}",
    )
    add(
        "url/discord-webhook",
        f"https://discord.com/api/webhooks/{s.alnum(18, string.digits)}/{s.alnum(68)}",
    )
    add(
        "url/teams-webhook",
        f"https://corp.webhook.office.com/webhookb2/{s.hex(32)}@{s.hex(32)}/IncomingWebhook/x",
    )
    add("url/azure-sas", f"https://a.blob.core.windows.net/c/f?sv=2022&sr=b&sig={s.alnum(44)}%3D")
    add("netrc", f"machine api.example.com login me password {s.password()}")
    add("curl-u", f"curl -u admin:{s.password()} https://api.example.com")
    add("mysql-p", f"mysql -h db -u root -p{s.alnum(16)} shop")
    add("flag/password", f"deploy --password {s.password()} --host x")
    add("flag/token", f"gh auth login --token {s.alnum(40)}")
    add("flag/api-key", f"tool --api-key={s.alnum(32)}")
    add("npmrc", f"//registry.npmjs.org/:_authToken={s.alnum(36)}")
    add(
        "azure-connection",
        f"DefaultEndpointsProtocol=https;AccountName=x;AccountKey={s.alnum(86)}==;"
        "EndpointSuffix=core.windows.net",
    )
    add(
        "servicebus",
        f"Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=R;SharedAccessKey={s.alnum(43)}=",
    )
    add(
        "gcp-service-account",
        json.dumps(
            {
                "type": "service_account",
                "private_key_id": s.hex(40),
                "private_key": private_key(s, "PRIVATE KEY") + "\n",
                "client_email": "x@p.iam.gserviceaccount.com",
            },
            indent=2,
        ),
    )
    add(
        "kube-secret-yaml",
        f"apiVersion: v1\ndata:\n  password: {s.b64(s.password().encode())}\n"
        f"  tls.key: {s.b64(s.alnum(30).encode())}\nkind: Secret\nmetadata:\n  name: db\n"
        "type: Opaque\n",
    )
    add(
        "kube-secret-stringdata",
        f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\nstringData:\n"
        f"  DATABASE_URL: {s.alnum(24)}\n  config.yaml: |\n    apiUrl: {s.alnum(20)}\n",
    )
    add(
        "kube-secret-json",
        json.dumps(
            {"apiVersion": "v1", "kind": "Secret", "data": {"user": s.b64(s.alnum(18).encode())}}
        ),
    )
    add("docker-env", f"docker run -e POSTGRES_PASSWORD={s.password()} postgres")
    add("zh/colon", f"数据库密码：{s.password()}")
    add("zh/is", f"我的密码是{s.alnum(14)}，别告诉别人")
    add("zh/key", f"API 密钥={s.alnum(32)}")
    add("zh/token", f"访问令牌: {s.alnum(24)}")
    add("zh/kouling", f"口令：{s.password()}")
    add("zh/secret-key", f"私钥：{s.alnum(40)}")
    add("zh/mixed", f"服务器配置如下 password={s.password()} 请保管好")
    return forms


def json_in_json(form: Form) -> Form:
    """The form as a tool's output of ``cat config.json``: JSON inside a JSON string."""
    text = json.dumps({"stdout": json.dumps({"config": form.text}), "code": 0})
    return Form("json-in-json/" + form.name, text, form.needles)


def escaped(form: Form) -> Form:
    """The form in a JSON string with non-ASCII escaped (what ``json.dumps`` writes)."""
    text = json.dumps({"cmd": "配置：" + form.text}, ensure_ascii=True)
    return Form("escaped/" + form.name, text, form.needles)


def corpus(seed: int, quick: bool) -> list[Form]:
    """Every base form, and every other one again in each decoded layer (with values of
    its own, so a form found in clear is told apart from the others)."""
    forms = base_forms(Secrets(seed))
    for wrap, offset in ((json_in_json, 1), (escaped, 2)):
        forms += [wrap(form) for form in base_forms(Secrets(seed + offset))[::2]]
    for form in forms:
        assert form.needles, form.name
    assert len({n for f in forms for n in f.needles}) == sum(len(f.needles) for f in forms)
    return forms[::4] if quick else forms


# --- the write paths ------------------------------------------------------------------


class Writer:
    """Runs CLI commands into one store: in process (the CLI's entry under Typer's test
    runner) or as ``python -m soloqueue_mem``."""

    def __init__(self, home: Path, processes: bool) -> None:
        self.home = home
        self.processes = processes
        self.env = {"SOLOQUEUE_HOME": str(home), "SOLOQUEUE_SESSION": "s"}
        self.calls = 0
        self.holders: dict[Path, sqlite3.Connection] = {}

    def __call__(self, *argv: str, stdin: str | None = None) -> str:
        self.calls += 1
        try:
            return self._run(argv, stdin)
        finally:
            self.hold()

    def hold(self) -> None:
        """Keep a connection on each database, so the writers' ``-wal`` files stay
        (the last connection to close would fold them in and remove them)."""
        for db in self.home.glob("*.db"):
            if db not in self.holders:
                self.holders[db] = sqlite3.connect(db)
                self.holders[db].execute("SELECT count(*) FROM sqlite_master").fetchall()

    def close(self) -> None:
        for conn in self.holders.values():
            conn.close()

    def _run(self, argv: tuple[str, ...], stdin: str | None) -> str:
        if self.processes:
            done = subprocess.run(
                [sys.executable, "-m", "soloqueue_mem", *argv],
                input=None if stdin is None else stdin.encode(),
                capture_output=True,
                env={**os.environ, **self.env},
                cwd=c.neutral_cwd(),
                check=False,
            )
            if done.returncode != 0:
                raise RuntimeError(f"{argv[:2]}: {done.stderr.decode()[-500:]}")
            return done.stdout.decode()
        from typer.testing import CliRunner

        from soloqueue_mem.cli.app import build_app, command_named

        result = CliRunner().invoke(
            build_app(command_named(list(argv))), list(argv), input=stdin, env=self.env
        )
        if result.exit_code != 0:
            raise RuntimeError(f"{argv[:2]}: exit {result.exit_code}: {result.stderr[-500:]}")
        return result.stdout


def each(
    write: Callable[[Writer, Form, Path], object],
) -> Callable[[Writer, list[Form], Path], None]:
    """A path that stores one form a call."""

    def run(writer: Writer, forms: list[Form], scratch: Path) -> None:
        for form in forms:
            write(writer, form, scratch)

    return run


def hook(writer: Writer, payload: dict) -> None:
    writer("hook", "claude", stdin=json.dumps({"session_id": SESSION, **payload}))


def transcript(path: Path, texts: list[str]) -> Path:
    records = [
        {
            "type": role,
            "sessionId": SESSION,
            "uuid": f"u{n}-{role}",
            "timestamp": f"2026-11-20T09:{n // 60 % 60:02d}:{n % 60:02d}Z",
            "message": {"role": role, "content": text},
        }
        for n, text in enumerate(texts)
        for role in ("user", "assistant")
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def log_batch(writer: Writer, forms: list[Form], scratch: Path) -> None:
    lines = []
    for n, form in enumerate(forms):
        arguments = json.dumps({"config": form.text, "note": "部署"})
        function = {"name": "apply", "arguments": arguments}
        call = {"id": f"c{n}", "type": "function", "function": function}
        lines.append({"role": "assistant", "content": None, "tool_calls": [call]})
        lines.append({"role": "tool", "tool_call_id": f"c{n}", "content": form.text})
    writer(
        "log", "--batch", "--format", "jsonl", stdin="".join(json.dumps(x) + "\n" for x in lines)
    )


def stop_hook(writer: Writer, form: Form, scratch: Path) -> None:
    path = transcript(scratch / "stop.jsonl", [form.text])
    hook(writer, {"hook_event_name": "Stop", "transcript_path": str(path)})


def import_claude(writer: Writer, forms: list[Form], scratch: Path) -> None:
    path = transcript(scratch / f"{SESSION}.jsonl", [f.text for f in forms])
    writer("import", "claude-code", str(path))


def import_dump(writer: Writer, forms: list[Form], scratch: Path) -> None:
    """A dump written by a store with ``redact = false``, imported."""
    plain = Writer(scratch / "plain" / ".soloqueue", writer.processes)
    plain.home.mkdir(parents=True, mode=0o700)
    (plain.home / "config.toml").write_text("redact = false\n")
    for form in forms:
        plain("remember", "note: " + form.text)
    log_batch(plain, forms, scratch)
    dump = scratch / "dump.jsonl"
    plain("export", "-o", str(dump))
    plain.close()
    writer("import", str(dump))


def a_file(scratch: Path, form: Form) -> str:
    path = scratch / "notes.txt"
    path.write_text(form.text, encoding="utf-8")
    return str(path)


PATHS: dict[str, Callable[[Writer, list[Form], Path], object]] = {
    "log": each(lambda w, f, _: w("log", "--role", "user", f.text)),
    "log --batch": log_batch,
    "hook UserPromptSubmit": each(
        lambda w, f, _: hook(w, {"hook_event_name": "UserPromptSubmit", "prompt": f.text})
    ),
    "hook PostToolUse": each(
        lambda w, f, _: hook(
            w,
            {
                "hook_event_name": "PostToolUse",
                "tool_name": "Bash",
                "tool_use_id": f"toolu_{zlib.crc32(f.name.encode())}",
                "tool_input": {"command": f.text},
                "tool_response": {"stdout": f.text, "stderr": "", "interrupted": False},
            },
        )
    ),
    "hook Stop (transcript)": each(stop_hook),
    "import claude-code": import_claude,
    "import (dump)": import_dump,
    "remember": each(lambda w, f, _: w("remember", "ops note: " + f.text)),
    "artifact save": each(lambda w, f, s: w("artifact", "save", a_file(s, f), "--title", "n")),
    "attach": each(
        lambda w, f, s: w(
            "attach", a_file(s, f), "--description", f.text, "--transcription", f.text
        )
    ),
    "kv set": each(lambda w, f, _: w("kv", "set", "config", "--text", f.text)),
    "working add": each(lambda w, f, _: w("working", "add", "staging: " + f.text)),
    "promote": each(lambda w, f, s: w("promote", a_file(s, f))),
    "scratchpad set": each(lambda w, f, _: w("scratchpad", "set", "## 当前项目\n- " + f.text)),
    "session set": each(lambda w, f, _: w("session", "set", "s", "current_task", f.text)),
    "graph remember": lambda w, forms, _: w(
        "graph",
        "remember",
        "--sync",
        stdin=json.dumps([{"role": "user", "content": f.text} for f in forms]),
    ),
}


# --- the search -----------------------------------------------------------------------


def store_files(root: Path) -> list[Path]:
    return [p for p in sorted(root.rglob("*")) if p.is_file()]


def found_in_clear(root: Path, forms: list[Form]) -> tuple[set[str], int, int]:
    """Names of the forms one of whose secrets some file under ``root`` holds, the
    number of files and their bytes."""
    owner = {needle: form.name for form in forms for needle in form.needles}
    pattern = re.compile("|".join(map(re.escape, sorted(owner, key=len, reverse=True))).encode())
    found: set[str] = set()
    files = size = 0
    for path in store_files(root):
        data = path.read_bytes().lower()
        files, size = files + 1, size + len(data)
        found |= {owner[m.group().decode()] for m in pattern.finditer(data)}
    return found, files, size


def checkpoint(root: Path) -> None:
    for db in root.glob("*.db"):
        conn = sqlite3.connect(db)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()


def run_paths(forms: list[Form], processes: bool, work: Path) -> list[list[object]]:
    rows = []
    for name, path in PATHS.items():
        home = work / name.replace(" ", "_").replace("(", "").replace(")", "") / ".soloqueue"
        scratch = home.parent / "scratch"
        scratch.mkdir(parents=True)
        writer = Writer(home, processes)
        writer("init")  # memory.db exists and is held before the first write
        writer.calls = 0
        started = time.perf_counter()
        path(writer, forms, scratch)
        wal = [p.name for p in home.glob("*-wal") if p.stat().st_size]
        before, files, size = found_in_clear(home, forms)
        writer.close()
        checkpoint(home)
        after, _, _ = found_in_clear(home, forms)
        leaked = before | after
        seconds = time.perf_counter() - started
        c.note(f"{name}: {writer.calls} calls, {seconds:.1f} s, {len(leaked)} leaked")
        rows.append(
            [name, len(forms), writer.calls, files, f"{size / 1e6:.1f}", len(wal), len(leaked),
             ", ".join(sorted(leaked)[:5]) or "—"]
        )  # fmt: skip
    return rows


def floor_row(forms: list[Form], processes: bool, work: Path) -> list[object]:
    """``log --batch`` into a store with ``redact = false``: every form is found."""
    home = work / "floor" / ".soloqueue"
    home.mkdir(parents=True, mode=0o700)
    (home / "config.toml").write_text("redact = false\n")
    writer = Writer(home, processes)
    log_batch(writer, forms, home.parent)
    found, files, size = found_in_clear(home, forms)
    writer.close()
    wal = len([p for p in home.glob("*-wal") if p.stat().st_size])
    name = "log --batch, `redact = false` (floor)"
    return [name, len(forms), writer.calls, files, f"{size / 1e6:.1f}", wal, len(found), "(all)"]


# --- false positives ------------------------------------------------------------------


def locomo_turns(data: Path) -> list[str]:
    turns = []
    for conversation in json.loads((data / "locomo10.json").read_text()):
        for key, session in conversation["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                for turn in session:
                    text = turn.get("text", "")
                    caption = turn.get("blip_caption")
                    turns.append(f"{text} [image: {caption}]" if caption else text)
    return turns


def memorybank_turns(data: Path) -> list[str]:
    turns = []
    users = json.loads((data / "memorybank" / "memory_bank_cn.json").read_text())
    for user in users.values():
        for day in user["history"].values():
            for turn in day:
                turns += [turn["query"], turn["response"]]
    return turns


def evidence_turns() -> list[str]:
    path = c.REPO / "benchmarks" / "data" / "memorybank_zh_evidence.jsonl"
    turns = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        turns += [record[k] for k in ("question", "answer") if isinstance(record.get(k), str)]
    return turns


def false_positives(data: Path) -> tuple[list[list[object]], list[tuple[str, str, str]]]:
    from soloqueue_mem.config import Config
    from soloqueue_mem.redact import redactor

    redact = redactor(Config())
    assert redact is not None
    rows, changed_turns = [], []
    sets = {
        "LoCoMo (en)": locomo_turns(data),
        "MemoryBank dialogues (zh)": memorybank_turns(data),
        "MemoryBank evidence set (zh)": evidence_turns(),
    }
    for name, turns in sets.items():
        started = time.perf_counter()
        changed = [(t, redact.text(t)) for t in turns]
        seconds = time.perf_counter() - started
        changed = [(t, r) for t, r in changed if r != t]
        changed_turns += [(name, t, r) for t, r in changed]
        share = len(changed) / len(turns)
        per_turn = f"{1e6 * seconds / len(turns):.0f} µs"
        goal = c.verdict(share <= 0.001)
        rows.append([name, len(turns), len(changed), f"{100 * share:.3f}%", goal, per_turn])
    return rows, changed_turns


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a quarter of the corpus")
    parser.add_argument("--processes", action="store_true", help="each command its own process")
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("--data", type=Path, default=c.BENCH_DATA)
    args = parser.parse_args()

    forms = corpus(args.seed, args.quick)
    c.out("# Secret redaction (issue 30)\n")
    c.out(c.machine_line(sys.executable) + "\n")
    layered = sum(f.name.startswith(("json-in-json/", "escaped/")) for f in forms)
    title = f"{len(forms)} secret forms ({layered} of them in decoded layers, seed {args.seed})"
    c.out(f"## (1) {title} x {len(PATHS)} write paths, default config\n")
    with tempfile.TemporaryDirectory(prefix="bench-redact-", dir=c.neutral_cwd()) as tmp:
        work = Path(tmp)
        rows = [floor_row(forms, args.processes, work), *run_paths(forms, args.processes, work)]
    headers = ["write path", "forms", "calls", "files searched", "MB", "-wal files (not empty)",
               "forms found in clear", "first of them"]  # fmt: skip
    c.out(c.table(headers, rows))
    leaks = sum(int(str(r[6])) for r in rows[1:])
    c.out(f"\nStored in clear over every path: {leaks} (goal 0: {c.verdict(leaks == 0)}); "
          f"the floor found {rows[0][6]} of {len(forms)}.\n")  # fmt: skip

    c.out("## (2) False positives: turns whose text redaction changes\n")
    fp_rows, changed = false_positives(args.data)
    c.out(c.table(["set", "turns", "changed", "share", "goal <= 0.1%", "per turn"], fp_rows))
    for name, before, after in changed[:20]:
        c.out(f"\n- {name}: `{before[:160]}` -> `{after[:160]}`")
    floor_ok = rows[0][6] == len(forms)
    return 0 if leaks == 0 and floor_ok else 1


if __name__ == "__main__":
    sys.exit(main())
