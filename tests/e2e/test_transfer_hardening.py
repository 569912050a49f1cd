"""Issue 30: imports that are all or nothing, a safe export, and bounded reads.

Each test is named after the issue's item; each runs the CLI on real files (the
kill test and the FIFO tests run the real program in a subprocess)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.cli.test_transfer import populate
from tests.conftest import run_process, tree_snapshot


def export_file(cli, root: Path, path: Path, *args: str) -> list[bytes]:
    cli.ok("--root", str(root), "export", "-o", str(path), *args)
    return path.read_bytes().splitlines(keepends=True)


def records(lines: list[bytes]) -> list[dict]:
    return [json.loads(line) for line in lines]


def other_store(tmp_path: Path) -> Path:
    return tmp_path / "other" / ".soloqueue"


def write_config(home: Path, text: str) -> None:
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    (home / "config.toml").write_text(text)
    os.chmod(home / "config.toml", 0o600)


# --- M1, L6: export ----------------------------------------------------------------


def test_m1_cut_dump_refused(cli, home, tmp_path):
    populate(cli, tmp_path)
    lines = export_file(cli, home, tmp_path / "dump.jsonl", "--with-blobs")
    end = json.loads(lines[-1])
    assert end["kind"] == "end" and end["records"] == len(lines) - 2
    assert end["counts"]["memory"] == 4 and len(end["sha256"]) == 64
    other = other_store(tmp_path)
    for keep in (len(lines) - 1, len(lines) // 2, 1):  # cut at a line boundary
        cut = tmp_path / f"cut-{keep}.jsonl"
        cut.write_bytes(b"".join(lines[:keep]))
        result = cli("--root", str(other), "import", str(cut))
        assert result.exit_code == 65 and result.stdout == ""
        assert result.stderr == (
            f"error: the dump ends at line {keep} without its end record: it was cut short "
            "(export it again, or copy the whole file)\n"
        )
        assert not other.exists()
    changed = tmp_path / "changed.jsonl"  # a record changed after export
    changed.write_bytes(b"".join(lines).replace(b"I live in Lisbon", b"I live in Porto!"))
    result = cli("--root", str(other), "import", str(changed))
    assert result.exit_code == 65 and "does not match its end record" in result.stderr
    assert not other.exists()
    whole = cli.json("--root", str(other), "import", str(tmp_path / "dump.jsonl"))
    assert whole["complete"] is True and whole["conflicts"] == []


def test_l6_export_file_is_0600_and_appears_whole(cli, home, tmp_path):
    populate(cli, tmp_path)
    out = tmp_path / "out" / "dump.jsonl"
    out.parent.mkdir()
    export_file(cli, home, out)
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert os.listdir(out.parent) == ["dump.jsonl"]  # no temporary file left
    # an export that fails half-way leaves no file at all
    blob = next(p for p in (home / "artifacts" / "blobs").rglob("*") if p.is_file())
    os.chmod(blob, 0o600)
    blob.write_bytes(b"damaged")
    failed = out.parent / "failed.jsonl"
    result = cli("--root", str(home), "export", "--with-blobs", "-o", str(failed))
    assert result.exit_code != 0 and result.stderr.startswith("error:")
    assert os.listdir(out.parent) == ["dump.jsonl"]


def test_m1_cut_session_does_not_block_the_full_reimport(cli, home, tmp_path):
    """An old (version 2) dump has no end record: it imports with a warning, and a
    session it cut short is completed by importing the whole dump afterwards."""
    for n in range(6):
        cli.ok("log", "-s", "s1", "--role", "user", f"turn number {n}")
    lines = export_file(cli, home, tmp_path / "dump.jsonl")
    header = {**json.loads(lines[0]), "version": 2}
    kinds = [r["kind"] for r in records(lines)]
    first_turns = kinds.index("turn") + 3  # the session and three of its six turns
    old = tmp_path / "old-cut.jsonl"
    old.write_bytes(json.dumps(header).encode() + b"\n" + b"".join(lines[1:first_turns]))
    other = other_store(tmp_path)
    result = cli("--root", str(other), "--format", "json", "import", str(old))
    assert result.exit_code == 0 and json.loads(result.stdout)["complete"] is None
    assert "whether it is whole cannot be checked" in result.stderr
    report = cli.json("--root", str(other), "import", str(tmp_path / "dump.jsonl"))
    assert report["conflicts"] == [] and report["added"] == {"session": 1}
    shown = cli.json("--root", str(other), "session", "show", "s1")
    assert [t["content"] for t in shown["turns"]] == [f"turn number {n}" for n in range(6)]
    assert cli.json("--root", str(other), "verify")["summary"] == {
        "error": 0, "warning": 0, "info": 0
    }  # fmt: skip


# --- M2, M3: values checked before anything is written ------------------------------


def tampered(lines: list[bytes], kind: str, **fields: object) -> tuple[bytes, int]:
    """The dump with the last record of ``kind`` changed, its end record left out (a
    version-2 dump: the values are what is refused); the changed line's number."""
    found = [n for n, r in enumerate(records(lines)) if r["kind"] == kind][-1]
    header = {**json.loads(lines[0]), "version": 2}
    body = lines[1:-1]
    body[found - 1] = json.dumps({**json.loads(lines[found]), **fields}).encode() + b"\n"
    return json.dumps(header).encode() + b"\n" + b"".join(body), found + 1


def assert_refused_whole(cli, home, tmp_path, kind: str, fields: dict, message: str) -> None:
    """A dump with one bad value in its last ``kind`` record is refused with that line
    and one error line, and nothing, not even the data directory, is created."""
    populate(cli, tmp_path)
    dump, line = tampered(export_file(cli, home, tmp_path / "dump.jsonl"), kind, **fields)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(dump)
    other = other_store(tmp_path)
    result = cli("--root", str(other), "import", str(bad))
    assert result.exit_code == 65 and result.stdout == ""
    assert result.stderr.startswith(f"error: line {line}: {kind}: {message}"), result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert not other.exists()


@pytest.mark.parametrize(
    ("kind", "fields", "message"),
    [
        ("memory", {"type": "ROOTKIT"}, "field 'type' is 'ROOTKIT', not one of FACT"),
        ("memory", {"created_at": "x"}, "field 'created_at' is not an ISO 8601"),
        ("memory", {"id": "../../x"}, "field 'id' is not an id (32 hex digits)"),
        ("memory", {"importance": 7.5}, "field 'importance' is not between 0 and 1"),
        ("memory", {"priority": "FOREVER"}, "field 'priority' is 'FOREVER'"),
        ("episode", {"outcome": "won"}, "field 'outcome' is 'won'"),
        ("attachment", {"direction": "sideways"}, "field 'direction'"),
    ],
)
def test_m2_bad_enum_refused_nothing_written(cli, home, tmp_path, kind, fields, message):
    assert_refused_whole(cli, home, tmp_path, kind, fields, message)


@pytest.mark.parametrize(
    ("kind", "fields", "message"),
    [
        ("artifact", {"path": "../../../etc/passwd"}, "field 'path' is not the store's path"),
        ("artifact", {"tags": ["bad tag!"]}, "invalid tag 'bad tag!'"),
        ("artifact", {"id": 2**63}, "field 'id' is out of range"),
        ("attachment", {"local_path": "/etc/passwd"}, "field 'local_path' is not the store's"),
        ("kv", {"updated_at": "yesterday"}, "field 'updated_at' is not an ISO 8601"),
        ("working", {"id": 2**64}, "field 'id' is out of range"),
    ],
)
def test_m3_bad_values_refused_before_any_write(cli, home, tmp_path, kind, fields, message):
    assert_refused_whole(cli, home, tmp_path, kind, fields, message)


def test_m3_bad_turns_refused_before_any_write(cli, home, tmp_path):
    populate(cli, tmp_path)
    lines = export_file(cli, home, tmp_path / "dump.jsonl")
    turn = [n for n, r in enumerate(records(lines)) if r["kind"] == "turn"][-1]
    other = other_store(tmp_path)
    for change, message in (
        ({"timestamp": "not a time"}, "field 'timestamp' is not an ISO 8601"),
        ({"turn_index": 2**63}, "field 'turn_index' is out of range"),
        ({"turn_index": 2**31}, "field 'turn_index' is out of range (at most 2147483647)"),
        ({"offloaded": [{"field": "tool_results.9.content", "artifact_id": "1", "l1": "x"}]},
         "not a session record"),
        ({"offloaded": [{"field": "content", "artifact_id": "../1", "l1": "x"}]},
         "'offloaded' notes need"),
    ):  # fmt: skip
        record = json.loads(lines[turn])
        record["record"] = {**record["record"], **change}
        header = {**json.loads(lines[0]), "version": 2}
        body = [*lines[1:turn], json.dumps(record).encode() + b"\n", *lines[turn + 1 : -1]]
        bad = tmp_path / "bad.jsonl"
        bad.write_bytes(json.dumps(header).encode() + b"\n" + b"".join(body))
        result = cli("--root", str(other), "import", str(bad))
        assert result.exit_code == 65, result.stderr
        assert result.stderr.startswith(f"error: line {turn + 1}: turn: "), result.stderr
        assert message in result.stderr
        assert not other.exists()


# --- M4: a killed import, then the same import again ---------------------------------


def test_m4_killed_import_then_reimport_indexes_every_session(cli, home, tmp_path):
    for session in ("s1", "s2", "s3"):
        for n in range(4):
            cli.ok("log", "-s", session, "--role", "user", f"{session} says hello {n}")
    dump = tmp_path / "dump.jsonl"
    export_file(cli, home, dump)
    other = other_store(tmp_path)
    killed = run_process(
        "--root", str(other), "import", str(dump),
        env={"SOLOQUEUE_TESTING": "1", "SOLOQUEUE_FAULT": "import.before_commit:kill"},
    )  # fmt: skip
    assert killed.returncode == -9  # the first session's log written, its index not
    assert (other / "groups" / "default" / "sessions" / "default" / "s1.jsonl").exists()
    again = run_process("--root", str(other), "--format", "json", "import", str(dump))
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["conflicts"] == [] and report["added"] == {"session": 3}
    verified = cli.json("--root", str(other), "verify")
    assert verified["summary"]["warning"] == 0 and verified["counts"]["turns_indexed"] == 12
    for session in ("s1", "s2", "s3"):
        hits = cli.json("--root", str(other), "trace", f"{session} says hello")
        assert {h["session"] for h in hits} >= {session}
    assert cli.json("--root", str(other), "import", str(dump))["existing"] == {"session": 3}


# --- L11: turns naming an artifact the store lacks --------------------------------------


def test_l11_verify_flags_dangling_artifact_references(cli, home, tmp_path):
    populate(cli, tmp_path)  # s1's third turn is offloaded to an artifact
    dump = tmp_path / "dump.jsonl"
    export_file(cli, home, dump)  # without --with-blobs
    other = other_store(tmp_path)
    report = cli.json("--root", str(other), "import", str(dump))
    assert {c["reason"] for c in report["conflicts"]} == {"missing-blob"}
    result = cli("--root", str(other), "--format", "json", "verify")
    assert result.exit_code == 8  # warnings
    findings = json.loads(result.stdout)["findings"]
    dangling = [f for f in findings if f["kind"] == "dangling-artifact"]
    assert [f["where"] for f in dangling] == ["default/default/s1/2"]
    assert cli.json("verify")["summary"]["warning"] == 0  # the store that has it


# --- M5: bounded reads --------------------------------------------------------------


def test_m5_dev_zero_refused(cli, home, store, tmp_path):
    for args in (
        ("artifact", "save", "/dev/zero"),
        ("attach", "/dev/zero"),
        ("import", "/dev/zero"),
        ("import", "dump", "/dev/zero"),
        ("promote", "/dev/zero"),
    ):
        result = cli(*args)
        assert result.exit_code == 65, (args, result.stderr)
        assert result.stderr == (
            "error: /dev/zero is not a regular file (a device): give a file, or '-' to read stdin\n"
        ), args
    assert tree_snapshot(home / "artifacts") == {}


def test_m5_fifo_refused_without_waiting(home, store, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for args in (("artifact", "save", str(fifo)), ("import", str(fifo))):
        done = run_process(*args, timeout=30)  # on main: blocks until a writer comes
        assert done.returncode == 65, done.stderr
        assert b"is not a regular file (a FIFO)" in done.stderr
    for transcript in (str(fifo), "/dev/zero"):
        stop = {"session_id": "s1", "hook_event_name": "Stop", "transcript_path": transcript}
        done = run_process("hook", "claude", "Stop", input=json.dumps(stop).encode(), timeout=30)
        assert done.returncode == 0 and done.stdout == b""
        logged = (home / "logs" / "hook-errors.jsonl").read_text().splitlines()
        assert "is not a regular file" in json.loads(logged[-1])["message"]


def test_m5_caps_from_config(cli, home, tmp_path):
    write_config(home, "max_artifact_bytes = 1024\nmax_dump_line_bytes = 4096\n")
    big = tmp_path / "big.bin"
    big.write_bytes(b"x" * 2048)
    for args, given in (
        (("artifact", "save", str(big)), None),
        (("artifact", "save", "-"), b"y" * 2048),
        (("attach", "-", "--name", "a.txt"), b"z" * 2048),
    ):
        result = cli(*args, input=given)
        assert result.exit_code == 65, (args, result.stderr)
        assert result.stderr == "error: the input is larger than max_artifact_bytes (1024 bytes)\n"
    assert tree_snapshot(home / "artifacts" / "blobs") == {}
    assert cli.json("artifact", "save", "-", input=b"small")["size"] == 5
    cli.ok("remember", "x" * 5000)  # a memory record longer than the dump line cap
    dump = cli.ok("export").stdout_bytes
    path = tmp_path / "dump.jsonl"
    path.write_bytes(dump)
    memory_line = [r["kind"] for r in records(dump.splitlines())].index("memory") + 1
    for source, given in ((str(path), None), ("-", dump)):
        result = cli("import", source, input=given)
        assert result.exit_code == 65
        assert result.stderr == (
            f"error: line {memory_line}: the line is longer than max_dump_line_bytes (4096 bytes)\n"
        )
