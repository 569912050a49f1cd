"""export / import (SPEC §3.9, seed 003 §9): the versioned dump, its byte-identical
round trip, idempotence and conflicts, refusal of bad dumps, seed 003's v1
memories.json, and re-logging our own session JSONL."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import missing_store_is_sqlite, second_root_is_sqlite, tree_snapshot

DATA = Path(__file__).resolve().parent.parent / "data"


def populate(cli, tmp_path: Path) -> None:
    """A store with one of everything export carries."""
    cli.ok("log", "-s", "s1", "--role", "user", "I live in Lisbon and I prefer green tea")
    call = {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "grep",
            "input": {"q": "tea"}}]}  # fmt: skip
    result = {"role": "tool", "content": "", "tool_results": [
        {"tool_use_id": "c1", "content": "x" * 3000, "is_error": False}]}  # fmt: skip
    cli.ok("log", "-s", "s1", input=json.dumps(call))
    cli.ok("log", "-s", "s1", input=json.dumps(result))  # offloaded: an artifact
    cli.ok("remember", "The user's editor is vim", "--subject", "user", "--predicate", "editor")
    cli.ok("remember", "The user's editor is helix", "--subject", "user", "--predicate", "editor")
    cli.ok("session", "end", "s1")
    cli.ok("log", "-s", "s2", "-g", "work", "--role", "user", "The deploy is on Friday")
    cli.ok("kv", "set", "theme", '"dark"')
    cli.ok("session", "set", "s1", "current_task", "write tests")
    cli.ok("scratchpad", "set", "## 当前项目\n- soloqueue\n")
    cli.ok("working", "add", "-g", "default", "Deployed the fix to staging")
    photo = tmp_path / "cat.jpg"
    photo.write_bytes(b"\xff\xd8 a cat")
    cli.ok("attach", str(photo), "--description", "一只橘猫", "--duration", "30d")
    (cli_home() / "identity").mkdir(exist_ok=True)
    (cli_home() / "identity" / "SOUL.md").write_text("# Soul\nI am Ada.\n")


def cli_home() -> Path:
    return Path(os.environ["SOLOQUEUE_HOME"])


def export(cli, root: Path, *args: str) -> bytes:
    return cli.ok("--root", str(root), "export", *args).stdout_bytes


@second_root_is_sqlite
def test_round_trip_is_byte_identical(cli, home, tmp_path):
    populate(cli, tmp_path)
    first = export(cli, home, "--with-blobs")
    kinds = [json.loads(line)["kind"] for line in first.splitlines()]
    assert kinds[0] == "header"
    assert set(kinds) == {"header", "blob", "artifact", "session", "turn", "memory", "episode",
                          "scratchpad", "working", "attachment", "kv", "session_state",
                          "identity", "end"}  # fmt: skip
    dump = tmp_path / "dump.jsonl"
    dump.write_bytes(first)
    other = tmp_path / "other" / ".soloqueue"
    report = cli.json("--root", str(other), "import", str(dump))
    assert report["kind"] == "dump" and report["conflicts"] == [] and report["existing"] == {}
    assert report["added"]["memory"] == 4 and report["added"]["session"] == 2
    assert export(cli, other, "--with-blobs") == first
    # what was imported works: the history chain, the offloaded output, recall, verify
    records = [json.loads(line) for line in first.splitlines()]
    old, new = [r for r in records if r["kind"] == "memory" and r["predicate"] == "editor"]
    assert old["superseded_by"] == new["id"]
    chain = cli.json("--root", str(other), "memory", "history", new["id"])
    assert {m["id"] for m in chain} == {old["id"], new["id"]}
    openai = cli.json("--root", str(other), "session", "export", "s1", "--format", "openai")
    assert openai[2]["content"].startswith("[输出过大")
    artifact_id = openai[2]["content"].split("已保存为制品: ")[1].split("。")[0]
    read = cli.ok("--root", str(other), "artifact", "read", artifact_id)
    assert read.stdout_bytes == b"x" * 3000
    hits = cli.json("--root", str(other), "recall", "橘猫")
    assert hits and hits[0]["kind"] == "attachment"
    assert cli.json("--root", str(other), "verify")["summary"]["error"] == 0
    assert (other / "identity" / "SOUL.md").read_text() == "# Soul\nI am Ada.\n"


def test_import_is_idempotent_and_reports_conflicts(cli, home, tmp_path):
    populate(cli, tmp_path)
    dump = tmp_path / "dump.jsonl"
    dump.write_bytes(export(cli, home, "--with-blobs"))
    before = export(cli, home, "--with-blobs")
    again = cli.json("import", "dump", str(dump))
    assert again["added"] == {} and again["conflicts"] == []
    assert again["existing"]["memory"] == 4 and again["existing"]["artifact"] == 2
    assert export(cli, home, "--with-blobs") == before
    cli.ok("kv", "set", "theme", '"light"')
    result = cli("--format", "json", "import", str(dump))
    assert result.exit_code == 0
    conflicts = json.loads(result.stdout)["conflicts"]
    assert [(c["kind"], c["key"], c["reason"]) for c in conflicts] == [
        ("kv", "default/default/theme", "conflict")
    ]
    assert "1 conflict(s)" in result.stderr
    assert cli.json("kv", "get", "theme")["value"] == "light"  # never overwritten


@second_root_is_sqlite
def test_without_blobs_rows_need_their_blobs(cli, home, tmp_path):
    populate(cli, tmp_path)
    dump = tmp_path / "dump.jsonl"
    dump.write_bytes(export(cli, home))
    assert b'"kind":"blob"' not in dump.read_bytes()
    assert cli.json("import", str(dump))["conflicts"] == []  # same store: blobs are there
    other = tmp_path / "other" / ".soloqueue"
    report = cli.json("--root", str(other), "import", str(dump))
    assert {c["reason"] for c in report["conflicts"]} == {"missing-blob"}
    assert report["added"]["memory"] == 4


@second_root_is_sqlite
def test_an_imported_correction_naming_a_dropped_value_is_kept_at_its_expiry(
    cli, home, tmp_path, monkeypatch
):
    """The value a memory says it replaced (".po") is derived from its content, as its
    content key is: the importing store derives it, and keeps the correction out of
    recall at its expiry, while another memory goes (docs/concepts/memory.md)."""
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-09-10T08:00:00Z")
    named = cli.json("remember", "The studio is dropping .po, everything moves to XLIFF 2.0")
    cli.ok("remember", "The studio ships strings every Friday")
    dump = tmp_path / "dump.jsonl"
    dump.write_bytes(export(cli, home))
    other = tmp_path / "other" / ".soloqueue"
    assert cli.json("--root", str(other), "import", str(dump))["added"]["memory"] == 2
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-10-20T03:43:00Z")
    expired = cli.json("--root", str(other), "consolidate", "--format", "json")["expire"]
    assert expired["deleted"] == 1
    assert cli.json("--root", str(other), "memory", "show", named["id"])["id"] == named["id"]


def test_export_scope(cli, home, tmp_path):
    populate(cli, tmp_path)
    lines = [json.loads(line) for line in export(cli, home, "--group", "work").splitlines()]
    assert lines[0]["scope"] == {"group": "work", "agent": None}
    assert {(r["kind"], r.get("session")) for r in lines[1:-1]} == {
        ("session", "s2"),
        ("turn", "s2"),
    }


def bad_dump(home_dump: bytes, number: int, replacement: bytes) -> bytes:
    lines = home_dump.splitlines(keepends=True)
    lines[number] = replacement
    return b"".join(lines)


@pytest.mark.parametrize(
    ("line", "replacement", "message"),
    [
        (0, b'{"kind":"header","format":"soloqueue-mem-dump","version":4}\n',
         "error: line 1: dump version 4 is newer than this soloqueue-mem reads (3)"),
        (0, b'{"kind":"header","format":"other"}\n', "error: line 1: not a soloqueue-mem dump"),
        (5, b"{not json\n", "error: line 6: malformed JSON"),
        (5, b'{"kind":"spaceship"}\n', "error: line 6: unknown record type 'spaceship'"),
        (1, b'{"kind":"blob","sha256":"' + b"0" * 64 + b'","size":1,"data":"eA=="}\n',
         "error: line 2: blob: blob 000000000000 does not match its sha256 and size"),
    ],
)  # fmt: skip
def test_a_bad_dump_writes_nothing(cli, home, tmp_path, line, replacement, message):
    populate(cli, tmp_path)
    dump = tmp_path / "dump.jsonl"
    dump.write_bytes(bad_dump(export(cli, home, "--with-blobs"), line, replacement))
    other = tmp_path / "other" / ".soloqueue"
    result = cli("--root", str(other), "import", "dump", str(dump))
    assert result.exit_code == 65 and result.stdout == ""
    assert result.stderr.startswith(message)
    assert not other.exists()


def test_a_record_of_the_wrong_shape_is_refused_whole(cli, home, tmp_path):
    cli.ok("remember", "The sky is blue")
    text = export(cli, home).decode()
    tampered = text.replace('"importance":0.5', '"importance":"high"')
    dump = tmp_path / "dump.jsonl"
    dump.write_text(tampered)
    other = tmp_path / "other" / ".soloqueue"
    result = cli("--root", str(other), "import", str(dump))
    assert result.exit_code == 65
    assert "field 'importance' has the wrong type" in result.stderr
    cli.ok("log", "-s", "s1", "--role", "user", "one")
    cli.ok("log", "-s", "s1", "--role", "user", "two")
    repeated = export(cli, home).decode().replace('"turn_index":1', '"turn_index":0')
    dump.write_text(repeated)
    result = cli("--root", str(other), "import", str(dump))
    assert (
        result.exit_code == 65 and "turn indexes must be whole numbers, increasing" in result.stderr
    )
    escape = text.replace('"group":"default"', '"group":"../../etc"', 1)
    dump.write_text(escape)
    assert cli("--root", str(other), "import", str(dump)).exit_code == 65
    assert not other.exists()


def test_memories_v1_import_maps_fields_and_keeps_ids_as_sources(cli, home):
    sample = DATA / "memories_v1.json"
    report = cli.json("import", str(sample), "--group", "g1")
    assert report["kind"] == "memories-v1"  # told from the file
    assert report["records"] == 6 and report["added"] == 6 and report["existing"] == 0
    listed = cli.json("memory", "list", "--all", "-g", "g1")
    by_source = {m["source"]: m for m in listed}
    assert set(by_source) == {f"v1:mem_00{n}" for n in (1, 2, 3, 4, 6)} | {"v1:5"}
    tea = by_source["v1:mem_001"]
    assert (tea["type"], tea["priority"], tea["expires_at"]) == ("PREFERENCE", "PERMANENT", None)
    assert tea["importance"] == 0.8 and tea["access_count"] == 3 and tea["tags"] == ["style"]
    assert tea["created_at"] == "2025-06-01T10:00:00.000Z"
    assert by_source["v1:mem_003"]["type"] == "SKILL"
    assert by_source["v1:mem_003"]["created_at"] == "2026-10-01T10:00:00.000Z"
    assert by_source["v1:mem_004"]["type"] == "PREFERENCE"
    assert by_source["v1:mem_004"]["expires_at"] == "2027-01-01T00:00:00.000Z"
    assert by_source["v1:5"]["expires_at"] == "2026-11-27T07:00:00.000Z"  # transient: 1 day
    assert by_source["v1:mem_006"]["tags"] == ["v1-type:hunch"]
    again = cli.json("import", "memories-v1", str(sample), "--group", "g1")
    assert again["added"] == 0 and again["existing"] == 6
    assert cli.json("recall", "ferrite", "-g", "g1")[0]["content"].startswith("The user's main")


def test_a_bad_v1_file_writes_nothing(cli, home, tmp_path):
    bad = tmp_path / "memories.json"
    bad.write_text(json.dumps([{"id": "a", "content": "ok"}, {"id": "b", "content": ""}]))
    result = cli("import", "memories-v1", str(bad))
    assert result.exit_code == 65
    assert result.stderr == "error: memory 2: a memory needs a non-empty 'content'\n"
    assert not home.exists()


def test_kind_is_required_when_the_file_says_nothing(cli, home, tmp_path):
    odd = tmp_path / "odd.txt"
    odd.write_text("hello\n")
    result = cli("import", str(odd))
    assert result.exit_code == 65 and "give KIND" in result.stderr
    assert cli("import", "dump").exit_code == 2  # a KIND without a PATH
    log = tmp_path / "s.jsonl"
    log.write_text('{"turn_index":0,"timestamp":"2026-11-26T08:00:00.000Z","role":"user"}\n')
    result = cli("import", str(log))
    assert result.exit_code == 65 and "is a session log: log it again with" in result.stderr
    assert not home.exists()


def test_claude_code_transcripts_go_to_their_importer(cli, home):
    transcript = DATA / "claude_code" / "transcript.jsonl"
    (told,) = cli.json("import", str(transcript))  # told from the file
    assert told["imported"] > 0
    (again,) = cli.json("import", "claude-code", str(transcript))
    assert again["imported"] == 0  # the same records: nothing new
    result = cli("import", "chatgpt", str(transcript))
    assert result.exit_code == 2 and "unknown import kind 'chatgpt'" in result.stderr


@second_root_is_sqlite
def test_import_from_stdin(cli, home, tmp_path):
    cli.ok("remember", "The sky is blue")
    dump = export(cli, home)
    other = tmp_path / "other" / ".soloqueue"
    report = cli.json("--root", str(other), "import", "-", input=dump)
    assert report["added"] == {"memory": 1}


@missing_store_is_sqlite
def test_export_never_overwrites_and_reads_nothing_into_being(cli, home, tmp_path):
    out = tmp_path / "dump.jsonl"
    assert cli("export", "-o", str(out)).exit_code == 66  # no data directory
    assert not home.exists() and not out.exists()
    home.mkdir(parents=True, mode=0o700)
    cli.ok("export", "-o", str(out))  # an empty store: the header and the end
    kinds = [json.loads(line)["kind"] for line in out.read_text().splitlines()]
    assert kinds == ["header", "end"]
    assert cli("export", "-o", str(out)).exit_code == 2
    assert tree_snapshot(home) == {}


def test_relogging_our_own_session_jsonl_allocates_new_indexes(cli):
    cli.ok("log", "-s", "a", "--role", "user", "hello")
    call = {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "grep",
            "input": {"q": "x"}}]}  # fmt: skip
    cli.ok("log", "-s", "a", input=json.dumps(call))
    exported = cli.ok("session", "export", "a", "--format", "jsonl").stdout
    cli.ok("log", "-s", "b", "--role", "user", "first")
    cli.ok("log", "-s", "b", "--batch", input=exported)
    relogged = cli.ok("session", "export", "b", "--format", "jsonl").stdout
    records = [json.loads(line) for line in relogged.splitlines()]
    assert [r["turn_index"] for r in records] == [0, 1, 2]
    assert all("openai_message" not in r for r in records)
    messages = cli.json("session", "export", "b", "--format", "openai")
    assert all("turn_index" not in m for m in messages)
    assert messages[2]["tool_calls"] == [
        {"id": "c1", "type": "function", "function": {"name": "grep", "arguments": '{"q": "x"}'}}
    ]


@second_root_is_sqlite
def test_a_session_logged_differently_is_a_conflict_left_alone(cli, home, tmp_path):
    cli.ok("log", "-s", "s1", "--role", "user", "the original words")
    dump = tmp_path / "dump.jsonl"
    dump.write_bytes(export(cli, home))
    other = tmp_path / "other" / ".soloqueue"
    cli.ok("--root", str(other), "log", "-s", "s1", "--role", "user", "other words")
    report = cli.json("--root", str(other), "import", str(dump))
    assert [(c["kind"], c["key"], c["reason"]) for c in report["conflicts"]] == [
        ("session", "default/default/s1", "conflict")
    ]
    shown = cli.json("--root", str(other), "session", "show", "s1")
    assert [t["content"] for t in shown["turns"]] == ["other words"]
