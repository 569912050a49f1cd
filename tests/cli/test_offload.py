"""Context offloading in `log` (seed 000 §3.1): huge tool output goes to the artifact store.

The JSONL keeps the complete record (plus an ``offloaded`` list); the L1 view (the printed
turn, the index that `trace` searches, `session export --as openai`) holds the
reference with a 500-character head and a 200-character tail; `artifact read` gives the
original bytes back; the ephemeral artifact's row goes in gc phase 1 after 3 days and its
blob in the next deep phase.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from soloqueue_mem.clock import parse_timestamp
from tests.conftest import NOW, table_rows

ZH = (
    "[输出过大 ({size})。已保存为制品: {id}。预览: {head}...{tail} "
    "使用 read_artifact('{id}') 查看完整内容。]"
)
EN = (
    "[Output too large ({size}). Saved as artifact: {id}. Preview: {head}...{tail} "
    "Use read_artifact('{id}') to see the full content.]"
)


def big_output(chars: int = 50_000, tag: str = "") -> str:
    """ASCII text of exactly ``chars`` characters with a distinct start and end."""
    head = f"BEGIN{tag} first line of the tool output\n"
    lines = []
    i = 0
    while sum(map(len, lines)) < chars:
        lines.append(f"line {i:05d}: value={i * 7919 % 10007} status=ok\n")
        i += 1
    body = head + "".join(lines)
    tail = f"\nEND{tag} of the tool output"
    return body[: chars - len(tail)] + tail


def expected_reference(text: str, artifact_id: str, size: str, template: str = ZH) -> str:
    return template.format(size=size, id=artifact_id, head=text[:500], tail=text[-200:])


def jsonl_records(home: Path, session: str = "s") -> list[dict]:
    path = home / "groups" / "default" / "sessions" / "default" / f"{session}.jsonl"
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def log_event(cli, event: dict, *options: str, session: str = "s") -> dict:
    return cli.json("log", "-s", session, *options, input=json.dumps(event).encode())


def write_config(home: Path, text: str) -> None:
    home.mkdir(parents=True, mode=0o700)
    os.chmod(home, 0o700)
    (home / "config.toml").write_text(text)


def age_blobs_to(home: Path, when: str) -> None:
    """Pin every blob's mtime to ``when`` (GC compares it with SOLOQUEUE_NOW)."""
    stamp = parse_timestamp(when).timestamp()
    for path in (home / "artifacts" / "blobs").rglob("*"):
        if path.is_file():
            os.utime(path, (stamp, stamp))


def message_text(message: dict) -> str:
    """The text of an OpenAI message's content (a string or a list of text parts)."""
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(part["text"] for part in content)


def tool_event(*contents: str) -> dict:
    return {
        "role": "tool",
        "tool_results": [
            {"tool_use_id": f"call_{n}", "content": c, "is_error": False}
            for n, c in enumerate(contents)
        ],
    }


# --- the 50 KB tool result ------------------------------------------------------------


def test_a_50kb_tool_result_is_offloaded_and_recoverable(cli, home):
    output = big_output()
    assert len(output) == 50_000
    turn = log_event(cli, tool_event(output))

    (artifact_id,) = turn["offloaded"]
    reference = expected_reference(output, artifact_id, "48KB")
    # the printed turn is the L1 view
    assert turn["tool_results"] == [
        {"tool_use_id": "call_0", "content": reference, "is_error": False}
    ]
    assert len(reference) < 1000

    # the JSONL keeps the complete, replayable record and notes the replacement
    (record,) = jsonl_records(home)
    assert record["tool_results"][0]["content"] == output
    assert record["offloaded"] == [
        {"field": "tool_results.0.content", "artifact_id": artifact_id, "l1": reference}
    ]

    # the index holds the reference, not the 50 KB
    ((stored,),) = table_rows(home, "SELECT tool_results FROM {turns}")
    assert json.loads(stored)[0]["content"] == reference
    hits = cli.json("trace", "BEGIN")
    assert len(hits) == 1
    assert hits[0]["tool_results"][0]["content"] == reference
    assert hits[0]["turn_index"] == turn["turn_index"]

    # session show reads the JSONL: the full output
    shown = cli.json("session", "show", "s")
    assert shown["turns"][0]["tool_results"][0]["content"] == output
    assert shown["turns"][0]["offloaded"][0]["artifact_id"] == artifact_id

    # the artifact gives the original bytes back
    assert cli.ok("artifact", "read", artifact_id).stdout_bytes == output.encode()
    meta = cli.json("artifact", "show", artifact_id)
    assert meta["tags"] == ["sys:ephemeral"]
    assert meta["size"] == 50_000
    assert meta["mime"].startswith("text/plain")
    assert meta["group"] == "default"


def test_offloaded_reference_is_exact_for_multibyte_text(cli, home):
    output = "输出" * 1500 + "结尾END"  # 3005 characters, 9011 UTF-8 bytes
    turn = log_event(cli, tool_event(output))
    (artifact_id,) = turn["offloaded"]
    assert turn["tool_results"][0]["content"] == expected_reference(output, artifact_id, "8KB")
    assert cli.ok("artifact", "read", artifact_id).stdout_bytes == output.encode()


def test_session_export_openai_gives_the_reference_and_full_gives_the_original(cli, home):
    output = big_output()
    log_event(cli, {"role": "assistant", "content": "running the tool"})
    turn = log_event(cli, tool_event(output))
    (artifact_id,) = turn["offloaded"]
    reference = expected_reference(output, artifact_id, "48KB")

    l1 = json.loads(cli.ok("session", "export", "s", "--as", "openai").stdout)
    assert l1 == [
        {"role": "assistant", "content": "running the tool"},
        {"role": "tool", "tool_call_id": "call_0", "content": reference},
    ]
    full = json.loads(cli.ok("session", "export", "s", "--as", "openai", "--full").stdout)
    assert full[1] == {"role": "tool", "tool_call_id": "call_0", "content": output}
    # jsonl export is the log as recorded: complete
    lines = cli.ok("session", "export", "s", "--as", "jsonl").stdout.splitlines()
    assert json.loads(lines[1])["tool_results"][0]["content"] == output


@pytest.mark.parametrize(
    "message",
    [
        pytest.param(
            lambda text: {"role": "tool", "tool_call_id": "c1", "content": text}, id="str"
        ),
        pytest.param(
            lambda text: {
                "role": "tool",
                "tool_call_id": "c1",
                "content": [{"type": "text", "text": text}],
            },
            id="content-parts",
        ),
    ],
)
def test_openai_tool_messages_are_offloaded_in_every_l1_view(cli, home, message):
    """An OpenAI tool message is offloaded like our own shape, and the L1 export (what
    an agent sends back to the model) must carry the reference, never the 50 KB."""
    output = big_output()
    turn = log_event(cli, message(output))
    (artifact_id,) = turn["offloaded"]
    reference = expected_reference(output, artifact_id, "48KB")
    assert turn["tool_results"][0]["content"] == reference
    (exported,) = json.loads(cli.ok("session", "export", "s", "--as", "openai").stdout)
    assert message_text(exported) == reference
    (full,) = json.loads(cli.ok("session", "export", "s", "--as", "openai", "--full").stdout)
    assert full == message(output)


def test_english_template_from_config(cli, home):
    write_config(home, 'offload_language = "en"\n')
    output = big_output()
    turn = log_event(cli, tool_event(output))
    (artifact_id,) = turn["offloaded"]
    reference = expected_reference(output, artifact_id, "48KB", EN)
    assert turn["tool_results"][0]["content"] == reference
    assert jsonl_records(home)[0]["offloaded"][0]["l1"] == reference


def test_threshold_is_configurable_and_strict(cli, home):
    write_config(home, "offload_threshold = 100\n")
    at_limit, over = "a" * 100, "b" * 101
    turn = log_event(cli, tool_event(at_limit, over))
    (artifact_id,) = turn["offloaded"]
    assert turn["tool_results"][0]["content"] == at_limit
    assert turn["tool_results"][1]["content"] == expected_reference(over, artifact_id, "101B")
    (record,) = jsonl_records(home)
    assert [r["content"] for r in record["tool_results"]] == [at_limit, over]
    assert [item["field"] for item in record["offloaded"]] == ["tool_results.1.content"]
    assert cli.ok("artifact", "read", artifact_id).stdout == over


def test_default_threshold_is_2000_characters(cli, home):
    turn = log_event(cli, tool_event("c" * 2000))
    assert turn["offloaded"] == []
    assert turn["tool_results"][0]["content"] == "c" * 2000
    turn = log_event(cli, tool_event("d" * 2001))
    assert len(turn["offloaded"]) == 1


def test_offload_flag_offloads_long_plain_content(cli, home):
    text = big_output(3000)
    plain = cli.json("log", "-s", "plain", "--role", "assistant", text)
    assert plain["content"] == text
    assert plain["offloaded"] == []
    assert not (home / "artifacts.db").exists()

    turn = cli.json("log", "-s", "s", "--role", "assistant", "--offload", text)
    (artifact_id,) = turn["offloaded"]
    reference = expected_reference(text, artifact_id, "2KB")
    assert turn["content"] == reference
    (record,) = jsonl_records(home)
    assert record["content"] == text
    assert record["offloaded"] == [
        {"field": "content", "artifact_id": artifact_id, "l1": reference}
    ]
    hits = cli.json("trace", "BEGIN", "-s", "s")
    assert [h["content"] for h in hits] == [reference]
    assert cli.ok("artifact", "read", artifact_id).stdout == text
    l1 = json.loads(cli.ok("session", "export", "s", "--as", "openai").stdout)
    assert l1 == [{"role": "assistant", "content": reference}]


def test_short_outputs_are_untouched(cli, home):
    turn = log_event(cli, tool_event("short result", "x" * 1999))
    assert turn["offloaded"] == []
    assert [r["content"] for r in turn["tool_results"]] == ["short result", "x" * 1999]
    (record,) = jsonl_records(home)
    assert "offloaded" not in record
    # no artifact store was even opened
    assert not (home / "artifacts.db").exists()
    assert not (home / "artifacts").exists()


def test_after_3_days_gc_drops_the_row_and_the_next_deep_gc_the_blob(cli, home, monkeypatch):
    output = big_output()
    turn = log_event(cli, tool_event(output))
    (artifact_id,) = turn["offloaded"]
    blob = home / cli.json("artifact", "show", artifact_id)["path"]
    age_blobs_to(home, NOW)

    # a gc today runs both phases (first run) and keeps the young, referenced artifact
    first = cli.json("gc")
    assert first["phase1"]["expired_rows"] == 0
    assert first["phase2"]["ran"] is True
    assert first["phase2"]["deleted_blobs"] == 0

    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-28T08:00:00Z")  # 2 days: still kept
    assert cli.json("gc")["phase1"]["expired_rows"] == 0
    assert cli.json("artifact", "show", artifact_id)["id"] == artifact_id

    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-29T08:01:00Z")  # past 3 days
    later = cli.json("gc")
    assert later["phase1"] == {"expired_rows": 1, "artifact_ids": [artifact_id]}
    assert later["phase2"] == {"ran": False}  # the deep phase is weekly
    assert cli("artifact", "show", artifact_id).exit_code == 3
    assert blob.exists()  # phase 1 deletes rows only

    deep = cli.json("gc", "--deep")
    assert deep["phase2"]["ran"] is True
    assert deep["phase2"]["deleted_blobs"] == 1
    assert deep["phase2"]["freed_bytes"] == 50_000
    assert not blob.exists()
    # the log itself is untouched: the full output is still in the JSONL
    assert jsonl_records(home)[0]["tool_results"][0]["content"] == output


def test_offloaded_output_marked_persistent_survives_gc(cli, home, monkeypatch):
    turn = log_event(cli, tool_event(big_output()))
    (artifact_id,) = turn["offloaded"]
    cli.json("artifact", "tag", artifact_id, "user:persistent")
    age_blobs_to(home, NOW)
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-12-26T08:00:00Z")
    report = cli.json("gc", "--deep")
    assert report["phase1"]["expired_rows"] == 0
    assert report["phase2"]["deleted_blobs"] == 0
    assert cli.ok("artifact", "read", artifact_id).stdout == big_output()
