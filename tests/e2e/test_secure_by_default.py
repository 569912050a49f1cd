"""Issue 30, secrets: redaction is on by default, reads every layer a text holds (S1:
JSON inside a JSON string, ``\\uXXXX`` escapes in tool-call arguments) and knows the
common forms outside the first list (L5). Each test writes through the real program —
``log``, ``log --batch``, ``hook claude``, imports, ``remember``, artifacts,
attachments, kv, working memory, graph, scratchpad, session state — and then searches
every file under the store root, SQLite's ``-wal`` files included, for the secret."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from tests.cli.test_offload import write_config
from tests.conftest import run_process

SESSION = "7f3c2a9e-1b4d-4c8e-9a51-2d6f0e8b4c17"

# L5: every secret holds "fakel5" (case-insensitively) but the Basic credential, which
# is base64; the FTS index keeps lowercased words, so the search is case-insensitive.
BASIC = base64.b64encode(b"deploy:FAKEl5basicPw").decode()
L5_FORMS = {
    "authorization-basic": f"Authorization: Basic {BASIC}",
    "authorization-token": "Authorization: token FAKEl5tokenValue1234",
    "secret-key": "SECRET_KEY=FAKEl5djangoSecretKey",
    "pwd": "pwd=FAKEl5pwdValue",
    "gitlab": "glpat-FAKEl5glpat0000000000",
    "google-oauth": "ya29.FAKEl5ya29AccessToken000000",
    "slack-webhook": "https://hooks.slack.com/services/T0FAKEl50/B0FAKEl50/FAKEl5webhookPath000",
}
L5_NEEDLES = (b"fakel5", BASIC.rstrip("=").lower().encode())


def holders(root: Path, *needles: bytes) -> list[str]:
    """Files under ``root`` holding any needle (case-insensitively): every file, the
    databases' ``-wal`` files and blobs included."""
    found = []
    for path in sorted(root.rglob("*")):
        if path.is_file():
            data = path.read_bytes().lower()
            if any(needle in data for needle in needles):
                found.append(str(path.relative_to(root)))
    return found


def run(*args: str, stdin: bytes | None = None) -> bytes:
    done = run_process(*args, input=stdin, env={"SOLOQUEUE_SESSION": "s"})
    assert done.returncode == 0, (args, done.stderr.decode())
    return done.stdout


def hook(payload: dict) -> None:
    run("hook", "claude", stdin=json.dumps(payload).encode())


def post_tool_use(stdout: str) -> dict:
    return {
        "session_id": SESSION, "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "cat config.json"}, "tool_use_id": "toolu_1",
        "tool_response": {"stdout": stdout, "stderr": "", "interrupted": False},
    }  # fmt: skip


def tool_call(arguments: str) -> dict:
    """An OpenAI assistant message calling a tool with ``arguments`` (a JSON string)."""
    function = {"name": "connect", "arguments": arguments}
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": function}]}  # fmt: skip


def transcript(path: Path, text: str) -> Path:
    """A Claude Code transcript of one user prompt and one reply, both holding ``text``."""
    records = [
        {"type": role, "sessionId": SESSION, "uuid": f"u{n}", "timestamp": "2026-11-20T09:14:0"
         f"{n}Z", "message": {"role": role, "content": f"{role} said: {text}"}}
        for n, role in enumerate(("user", "assistant"))
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def write_on_every_path(text: str, tmp_path: Path) -> None:
    """``text`` through every command that stores what a user or a tool said."""
    run("log", "--role", "user", text)
    events = [{"role": "user", "content": text}, tool_call(json.dumps({"dsn": text})),
              {"role": "tool", "tool_call_id": "c1", "content": text}]  # fmt: skip
    run("log", "--batch", "--format", "jsonl",
        stdin="".join(json.dumps(e) + "\n" for e in events).encode())  # fmt: skip
    hook({"session_id": SESSION, "hook_event_name": "UserPromptSubmit", "prompt": text})
    hook(post_tool_use(text))
    stop = {"session_id": SESSION, "hook_event_name": "Stop",
            "transcript_path": str(transcript(tmp_path / "stop.jsonl", text))}  # fmt: skip
    hook(stop)
    run("import", "claude-code", str(transcript(tmp_path / f"{SESSION}.jsonl", text)))
    memory = json.loads(run("--format", "json", "remember", "ops note: " + text))
    run("memory", "edit", memory["id"], "--content", "rotated: " + text)
    (tmp_path / "notes.txt").write_text(text, encoding="utf-8")
    run("artifact", "save", str(tmp_path / "notes.txt"), "--title", "notes")
    run("attach", str(tmp_path / "notes.txt"), "--description", text, "--transcription", text)
    run("kv", "set", "config", json.dumps({"notes": text}))
    run("working", "add", "staging: " + text)
    run("promote", str(tmp_path / "notes.txt"))
    run("scratchpad", "set", "## 当前项目\n- " + text)
    run("session", "set", "s", "current_task", text)
    run(
        "graph",
        "remember",
        "--sync",
        stdin=json.dumps([{"role": "user", "content": text}]).encode(),
    )


def import_a_dump(text: str, tmp_path: Path, home: Path) -> None:
    """A dump from a store that does not redact, imported into one that does."""
    source = tmp_path / "plain" / ".soloqueue"
    write_config(source, "redact = false\n")
    done = run_process("--root", str(source), "log", "-s", "d", "--role", "user", text)
    assert done.returncode == 0, done.stderr.decode()
    dump = tmp_path / "dump.jsonl"
    done = run_process("--root", str(source), "export", "-o", str(dump))
    assert done.returncode == 0, done.stderr.decode()
    assert holders(source, *L5_NEEDLES)  # the plain store holds them: the search works
    run("import", str(dump))
    assert home.exists()


def test_redaction_on_by_default(home):
    key = "sk-proj-FAKEdefault00000000000001"
    run("log", "--role", "user", "deploy with " + key)
    assert holders(home, b"fakedefault") == []
    turn = json.loads(run("--format", "json", "session", "show", "s"))["turns"][0]
    assert turn["content"] == "deploy with [REDACTED:openai-key]"


def test_redaction_off_only_with_redact_false(home):
    write_config(home, "redact = false\n")
    key = "sk-proj-FAKEoptout00000000000001"
    run("log", "--role", "user", "deploy with " + key)
    assert holders(home, b"fakeoptout") != []


def test_s1_json_in_json_string_redacted(home):
    """``cat config.json`` as a tool's output: JSON inside the JSON string ``stdout``."""
    write_config(home, "redact = true\n")  # as on main, where it was off by default
    config = json.dumps({"db": {"password": "FAKEs1Pw"}, "api": {"token": "FAKEs1Tok"}})
    hook(post_tool_use(config))
    tool_message = {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"out": config})}
    run("log", "--batch", "--format", "jsonl", stdin=json.dumps(tool_message).encode())
    assert holders(home, b"fakes1") == []
    shown = json.loads(run("--format", "json", "session", "show", SESSION))["turns"][-1]
    stdout = json.loads(shown["tool_results"][0]["content"])["stdout"]
    assert json.loads(stdout)["db"] == {"password": "[REDACTED:password]"}  # still JSON


def test_s1_unicode_escaped_tool_call_arguments_redacted(home):
    """``json.dumps`` writes non-ASCII as ``\\uXXXX``: a password and a ``密码：`` line in
    such arguments are found once the escapes are decoded."""
    write_config(home, "redact = true\n")  # as on main, where it was off by default
    arguments = json.dumps(
        {"password": "FAKEs1Escaped", "note": "数据库配置", "cmd": "echo 密码：FAKEs1zhPw"}
    )
    assert "\\u5bc6\\u7801" in arguments  # 密码, escaped
    run("log", "--batch", "--format", "jsonl", stdin=json.dumps(tool_call(arguments)).encode())
    call = {"session_id": SESSION, "hook_event_name": "PreToolUse", "tool_name": "mcp__db",
            "tool_use_id": "toolu_2", "tool_input": {"args": arguments}}  # fmt: skip
    hook(call)
    assert holders(home, b"fakes1") == []
    logged = json.loads(run("--format", "json", "session", "show", "s"))["turns"][0]
    function = logged["openai_message"]["tool_calls"][0]["function"]
    for stored in (logged["tool_calls"][0]["input"], json.loads(function["arguments"])):
        assert stored == {"password": "[REDACTED:password]", "note": "数据库配置",
                          "cmd": "echo 密码：[REDACTED:password]"}  # fmt: skip


def test_l5_common_forms_redacted_on_every_write_path(home, tmp_path):
    write_config(home, "redact = true\n")  # as on main, where it was off by default
    write_on_every_path("\n".join(L5_FORMS.values()), tmp_path)
    import_a_dump("\n".join(L5_FORMS.values()), tmp_path, home)
    assert holders(home, *L5_NEEDLES) == []
    logged = json.loads(run("--format", "json", "session", "show", "s"))["turns"][0]["content"]
    assert "Authorization: Basic [REDACTED:authorization]" in logged
    assert "SECRET_KEY=[REDACTED:secret]" in logged and "pwd=[REDACTED:password]" in logged
    assert "https://hooks.slack.com/[REDACTED:slack-webhook]" in logged
    assert "[REDACTED:gitlab-token]" in logged and "[REDACTED:google-oauth-token]" in logged


def test_s1_escaped_layers_redacted_on_every_write_path(home, tmp_path):
    write_config(home, "redact = true\n")  # as on main, where it was off by default
    layered = json.dumps({"stdout": json.dumps({"db": {"password": "FAKEs1Deep x"}})})
    write_on_every_path(layered + "\n" + json.dumps({"cmd": "密码：FAKEs1Zh"}), tmp_path)
    assert holders(home, b"fakes1") == []
