"""Write-time secret redaction (SPEC §5, on by default): a canary of every kind of
secret goes through every command that stores text, and afterwards no file under the
store root — JSONL, Markdown logs, databases and their write-ahead logs (before and
after a checkpoint), blobs of offloaded output and saved artifacts — holds any of them.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.cli.test_offload import jsonl_records, write_config
from tests.conftest import run_process

# Fake secrets, one per kind; each holds "FAKEcanary" (case-insensitively) except the
# configured kind, so one search finds any that survived.
PROVIDER_KEYS = {
    "openai-key": "sk-proj-FAKEcanary0000000000000001",
    "anthropic-key": "sk-ant-api03-FAKEcanary00000000000002",
    "github-token": "ghp_FAKEcanary" + "0" * 25 + "3",
    "aws-access-key": "AKIAFAKECANARY000004",
    "google-api-key": "AIzaFAKEcanary" + "0" * 24 + "5",
    "slack-token": "xoxb-FAKEcanary-000006",
    "stripe-key": "sk_live_FAKEcanary000007",
    "huggingface-token": "hf_FAKEcanary" + "0" * 20 + "8",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjYW5hcnkifQ.FAKEcanary0009",
}
CUSTOM = "CORP-0123456789abcd15"
PRIVATE_KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nFAKEcanaryPrivateKeyBody0014\n"
    "-----END OPENSSH PRIVATE KEY-----"
)
ASSIGNMENTS = {
    "bearer-token": "Authorization: Bearer FAKEcanaryBearer0010",
    "password": "db_password = 'FAKEcanaryPass0011'",
    "secret": "CLIENT_SECRET=FAKEcanarySecret0012",
    "connection-string": "postgres://app:FAKEcanaryConn0013@db.internal:5432/prod",
}
ALL_KINDS = [*PROVIDER_KEYS, *ASSIGNMENTS, "private-key", "corp-token"]


def secrets_text() -> str:
    lines = [f"{kind}: {key}" for kind, key in PROVIDER_KEYS.items()]
    # Keys glued to the word before them are secrets too.
    lines += ["token" + PROVIDER_KEYS["openai-key"], "密钥" + PROVIDER_KEYS["anthropic-key"] + "。"]
    return "\n".join([*lines, *ASSIGNMENTS.values(), PRIVATE_KEY, f"corp {CUSTOM}"])


def survivors(root: Path) -> list[str]:
    """Files under ``root`` that hold any canary."""
    found = []
    for path in sorted(root.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            if b"fakecanary" in data.lower() or CUSTOM.encode() in data:
                found.append(str(path.relative_to(root)))
    return found


def checkpoint(root: Path) -> None:
    for db in root.glob("*.db"):
        conn = sqlite3.connect(db)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()


def test_no_file_of_the_store_holds_a_secret(cli, home, tmp_path):
    write_config(
        home,
        "redact = true\noffload_threshold = 300\n"
        '[redact_patterns]\n"corp-token" = "CORP-[0-9a-f]{16}"\n',
    )
    text = secrets_text()
    env = {"SOLOQUEUE_SESSION": "s"}
    # log, in a real process: user text, an OpenAI tool call with a password in its
    # arguments, and a tool result big enough to be offloaded, with metadata.
    events = [
        {"role": "user", "content": "我更喜欢用 vim 写代码。以下是配置:\n" + text},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {
                        "name": "connect",
                        "arguments": json.dumps({"password": "FAKEcanaryJsonPw0016", "dsn": text}),
                    },
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": "x" * 400 + "\n" + text,
            "metadata": {"api_key": "FAKEcanaryMeta0017"},
        },
    ]
    batch = "\n".join(json.dumps(e) for e in events).encode()
    logged = run_process("log", "--batch", "--format", "json", input=batch, env=env)
    assert logged.returncode == 0, logged.stderr
    assert json.loads(logged.stdout)[2]["offloaded"]  # the tool result went to a blob
    memory = cli.json("remember", "deploy key " + PROVIDER_KEYS["openai-key"] + " and " + CUSTOM)
    cli.ok("memory", "edit", memory["id"], "--content", "rotated to " + PRIVATE_KEY)
    cli.ok("kv", "set", "db", json.dumps({"password": "FAKEcanaryKv0018", "notes": text}))
    cli.ok("session", "set", "s", "current_task", "rotate " + ASSIGNMENTS["password"])
    cli.ok("scratchpad", "set", "## 当前项目\n- rotate " + ASSIGNMENTS["secret"])
    cli.ok("working", "add", "staging uses " + ASSIGNMENTS["connection-string"])
    (tmp_path / "notes.txt").write_text(text, encoding="utf-8")
    cli.ok("promote", str(tmp_path / "notes.txt"))
    cli.ok("artifact", "save", str(tmp_path / "notes.txt"), "--title", "notes")
    cli.ok("attach", str(tmp_path / "notes.txt"), "--description", "notes " + text,
           "--transcription", text, "--tag", "notes")  # fmt: skip
    graph = [{"role": "user", "content": "我们的部署配置如下。" + text}]
    remembered = cli.json("graph", "remember", "--sync", input=json.dumps(graph))
    assert remembered["processed"]["tasks"] == 1  # graph.db holds its nodes
    history = json.dumps([{"role": "tool", "tool_call_id": "c9", "content": "y" * 400 + text}])
    cli.ok("context", "build", "--max-context", "100000", input=history)
    ended = cli.json("session", "end", "s")
    assert ended["memories"]  # extraction ran over the redacted turns

    assert survivors(home) == []
    checkpoint(home)
    assert survivors(home) == []
    # What was redacted says which kind it was.
    log = json.dumps(jsonl_records(home))
    for kind in ALL_KINDS:
        assert f"[REDACTED:{kind}]" in log, kind
    assert "db_password = '[REDACTED:password]'" in log  # the name stays


def test_a_bad_pattern_is_refused_before_anything_is_written(cli, home):
    write_config(home, 'redact = true\n[redact_patterns]\n"corp" = "CORP-("\n')
    result = cli("log", "-s", "s", "--role", "user", "hello")
    assert result.exit_code == 65
    assert result.stderr.startswith("error: ") and "redact_patterns.corp" in result.stderr
    assert not (home / "memory.db").exists()
