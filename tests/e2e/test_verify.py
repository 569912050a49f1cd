"""`verify`: is the store sound? (SPEC §3.9, RELIABILITY §4(d) D1-D6, D10, D11, D16.)

Exit statuses: 0 sound (info findings allowed), 8 warnings only, 9 errors, 75 a database
stayed busy. Verify is read-only (tree snapshot unchanged) unless ``--repair``, which
re-indexes turns from the JSONL logs and rebuilds the full-text index. Symlinks under
``blobs/`` are reported and never followed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from soloqueue_mem.clock import parse_timestamp
from tests.conftest import NOW, DbHolder, act_after_listing, tree_snapshot

# Every test here works in a data directory that exists (see the store fixture).
pytestmark = pytest.mark.usefixtures("store")

NOW_TS = parse_timestamp(NOW).timestamp()
HOUR = 3600
EX_WARNINGS = 8
EX_ERRORS = 9
EX_BUSY = 75


# --- helpers ----------------------------------------------------------------------------


def verify(cli, *args: str) -> tuple[int, dict]:
    result = cli("--format", "json", "verify", *args)
    assert result.stdout.strip(), result.stderr
    report = json.loads(result.stdout)
    assert report["exit_code"] == result.exit_code
    return result.exit_code, report


def kinds(report: dict) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for finding in report["findings"]:
        found.setdefault(finding["kind"], []).append(finding)
    return found


def age(path: Path, seconds: float) -> None:
    stamp = NOW_TS - seconds
    os.utime(path, (stamp, stamp), follow_symlinks=False)


def save(cli, data: bytes, *options: str) -> dict:
    return cli.json("artifact", "save", "-", *options, input=data)


def age_all_blobs(home: Path, seconds: float = 2 * HOUR) -> None:
    for path in (home / "artifacts" / "blobs").rglob("*"):
        if path.is_file() and not path.is_symlink():
            age(path, seconds)


def writable(path: Path) -> Path:
    os.chmod(path, 0o600)
    return path


def jsonl(home: Path, session: str = "s") -> Path:
    return home / "groups" / "default" / "sessions" / "default" / f"{session}.jsonl"


def small_store(cli, home: Path) -> dict:
    """Two artifacts and two sessions with three turns, everything consistent."""
    store = {
        "a": save(cli, b"first artifact"),
        "b": save(cli, os.urandom(3000), "-t", "sys:ephemeral"),
    }
    cli.ok("log", "-s", "s", "hello alpha")
    cli.ok("log", "-s", "s", "--role", "assistant", "reply bravo")
    cli.ok("log", "-s", "t", "other charlie")
    age_all_blobs(home)
    return store


def assert_unchanged(before: dict[str, bytes], after: dict[str, bytes]) -> None:
    """No file changed, appeared or vanished, except an empty ``-wal`` that SQLite
    leaves behind after a read-only open (a defect checked strictly, on its own, in
    test_verify_is_read_only_whatever_it_finds)."""
    extra = {k for k in set(after) - set(before) if k.endswith("-wal") and after[k] == b""}
    assert {k: v for k, v in after.items() if k not in extra} == before


def sqlite_exec(path: Path, *statements: str) -> None:
    conn = sqlite3.connect(path)
    try:
        for statement in statements:
            conn.execute(statement)
        conn.commit()
    finally:
        conn.close()


# --- D1 --------------------------------------------------------------------------------


def test_d1_clean_store_exits_0_with_counts(cli, home):
    small_store(cli, home)
    for flags in ([], ["--quick"], ["--full"]):
        code, report = verify(cli, *flags)
        assert code == 0, report
        assert report["findings"] == []
        assert report["summary"] == {"error": 0, "warning": 0, "info": 0}
        assert report["counts"] == {
            "artifacts": 2,
            "blobs": 2,
            "sessions": 2,
            "turns_logged": 3,
            "turns_indexed": 3,
            "memories_superseded": 0,
        }
    assert "sound" in cli.ok("--format", "table", "verify").stdout


def test_quick_and_full_together_is_a_usage_error(cli, home):
    small_store(cli, home)
    result = cli("verify", "--quick", "--full")
    assert result.stdout == ""
    assert "--quick" in result.stderr
    assert result.exit_code == 2, result.stderr  # SPEC: 2 = usage


def test_verify_on_a_missing_store_is_refused_and_creates_nothing(cli, tmp_path):
    missing = tmp_path / "typo" / ".soloqueue"
    result = cli("--root", str(missing), "verify", "--full")
    assert (result.exit_code, result.stdout) == (66, "")
    assert not missing.parent.exists()


def test_verify_on_an_empty_store_is_sound_and_creates_nothing(cli, home):
    code, report = verify(cli, "--full")
    assert code == 0
    assert report["findings"] == []
    assert os.listdir(home) == [".gitignore"]


# --- D2-D4: damaged blobs ----------------------------------------------------------------


def test_d2_flipped_byte_is_a_hash_mismatch_with_full(cli, home):
    store = small_store(cli, home)
    blob = writable(home / store["b"]["path"])
    data = bytearray(blob.read_bytes())
    data[1234] ^= 0x40
    blob.write_bytes(bytes(data))
    code, report = verify(cli, "--full")
    assert code == EX_ERRORS
    (finding,) = report["findings"]
    assert finding == {
        "severity": "error",
        "kind": "hash-mismatch",
        "where": f"artifact {store['b']['id']}",
        "detail": store["b"]["path"],
    }
    assert report["summary"]["error"] == 1


@pytest.mark.parametrize("shape", ["truncated", "zero-length", "grown"])
def test_d3_truncated_or_empty_blob_is_flagged(cli, home, shape):
    store = small_store(cli, home)
    blob = writable(home / store["b"]["path"])
    data = blob.read_bytes()
    blob.write_bytes({"truncated": data[:100], "zero-length": b"", "grown": data + b"\x00"}[shape])
    code, report = verify(cli)
    assert code == EX_ERRORS
    (finding,) = report["findings"]
    assert finding["severity"] == "error"
    assert finding["kind"] == "size-mismatch"
    assert finding["where"] == f"artifact {store['b']['id']}"
    assert finding["detail"] == store["b"]["path"]
    code, report = verify(cli, "--full")
    assert code == EX_ERRORS
    assert [f["kind"] for f in report["findings"]][0] in {"size-mismatch", "hash-mismatch"}


def test_d3_truncated_then_padded_to_its_size_is_a_hash_mismatch(cli, home):
    store = small_store(cli, home)
    blob = writable(home / store["b"]["path"])
    data = blob.read_bytes()
    blob.write_bytes(data[:1000] + b"\x00" * (len(data) - 1000))
    code, report = verify(cli, "--full")
    assert code == EX_ERRORS
    assert [f["kind"] for f in report["findings"]] == ["hash-mismatch"]


def test_d4_missing_blob_is_reported_for_every_row_using_it(cli, home, monkeypatch):
    store = small_store(cli, home)
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-27T08:00:00Z")
    again = save(cli, b"first artifact")  # a second row for the same blob
    monkeypatch.setenv("SOLOQUEUE_NOW", NOW)
    assert again["path"] == store["a"]["path"]
    writable(home / store["a"]["path"]).unlink()
    code, report = verify(cli)
    assert code == EX_ERRORS
    missing = kinds(report)["missing-blob"]
    assert sorted(f["where"] for f in missing) == sorted(
        [f"artifact {store['a']['id']}", f"artifact {again['id']}"]
    )
    assert {f["detail"] for f in missing} == {store["a"]["path"]}
    assert {f["severity"] for f in missing} == {"error"}
    assert set(kinds(report)) == {"missing-blob"}


def test_missing_catalog_while_blobs_exist_is_an_error(cli, home):
    small_store(cli, home)
    (home / "artifacts.db").unlink()
    code, report = verify(cli)
    assert code == EX_ERRORS
    assert [f["kind"] for f in report["findings"]] == ["missing-catalog"]


# --- D5, D6: orphans and strange files ----------------------------------------------------


def test_d5_aged_orphan_is_a_warning_fresh_orphan_is_info(cli, home):
    small_store(cli, home)
    gone = save(cli, b"orphan to be")
    cli.json("artifact", "rm", gone["id"])
    blob = home / gone["path"]

    age(blob, 10 * 60)
    code, report = verify(cli)
    assert code == 0, report
    assert report["findings"] == [
        {"severity": "info", "kind": "orphan-recent", "where": gone["path"], "detail": ""}
    ]

    age(blob, 2 * HOUR)
    code, report = verify(cli)
    assert code == EX_WARNINGS
    assert report["findings"] == [
        {"severity": "warning", "kind": "orphan", "where": gone["path"], "detail": ""}
    ]
    assert report["summary"] == {"error": 0, "warning": 1, "info": 0}


def test_an_orphan_a_gc_deletes_while_verify_lists_its_folder_is_gone_not_an_error(
    cli, home, monkeypatch
):
    """verify takes no gc lock, so a gc can delete an orphan between verify listing its
    folder and reading its age: what is gone is not reported (verify exited 1 with an
    unexpected FileNotFoundError)."""
    small_store(cli, home)
    gone = save(cli, b"orphan to be")
    cli.json("artifact", "rm", gone["id"])
    blob = home / gone["path"]
    act_after_listing(monkeypatch, blob.parent, blob.unlink)  # the gc, right after it
    code, report = verify(cli)
    assert code == 0, report
    assert report["findings"] == []


def make_outside(tmp_path: Path) -> dict[str, Path]:
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.bin"
    secret.write_bytes(b"not yours")
    folder = outside / "folder"
    folder.mkdir()
    (folder / "inner.bin").write_bytes(b"inner")
    fifo = outside / "fifo"
    os.mkfifo(fifo)  # opening it for reading would block: a follow would hang verify
    return {"root": outside, "secret": secret, "folder": folder, "fifo": fifo}


def plant_strange_files(home: Path, outside: dict[str, Path]) -> dict[str, tuple[str, str]]:
    """Each D6 case: {relative path: (expected kind, expected severity)}."""
    shard = home / "artifacts" / "blobs" / "2026" / "11" / "26"
    expected: dict[str, tuple[str, str]] = {}

    non_hex = shard / "ab" / "cd" / "NOT-A-HASH.txt"
    non_hex.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    non_hex.write_bytes(b"junk")
    expected[str(non_hex.relative_to(home))] = ("stray-file", "warning")

    digest = hashlib.sha256(b"misplaced").hexdigest()
    assert digest[:4] != "0000"
    wrong = shard / "00" / "00" / digest
    wrong.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    wrong.write_bytes(b"misplaced")
    expected[str(wrong.relative_to(home))] = ("stray-file", "warning")

    # a symlink with a valid blob name at its valid path, pointing outside the store
    target_digest = hashlib.sha256(b"not yours").hexdigest()
    link = shard / target_digest[:2] / target_digest[2:4] / target_digest
    link.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    link.symlink_to(outside["secret"])
    expected[str(link.relative_to(home))] = ("symlink", "warning")
    dir_link = shard / "linked-folder"
    dir_link.symlink_to(outside["folder"], target_is_directory=True)
    expected[str(dir_link.relative_to(home))] = ("symlink", "warning")
    fifo_link = shard / "ab" / "cd" / ("f" * 64)
    fifo_link.symlink_to(outside["fifo"])
    expected[str(fifo_link.relative_to(home))] = ("symlink", "warning")

    tmp = home / "artifacts" / "tmp"
    (tmp / "0000000000000000.tmp").write_bytes(b"abandoned")
    age(tmp / "0000000000000000.tmp", 2 * HOUR)
    expected["artifacts/tmp/0000000000000000.tmp"] = ("temp-file", "warning")
    (tmp / "1111111111111111.tmp").write_bytes(b"in progress")
    age(tmp / "1111111111111111.tmp", 60)
    expected["artifacts/tmp/1111111111111111.tmp"] = ("temp-file", "info")
    return expected


def test_d6_strange_files_are_reported_by_kind(cli, home, tmp_path):
    small_store(cli, home)
    outside = make_outside(tmp_path)
    expected = plant_strange_files(home, outside)
    code, report = verify(cli, "--full")
    assert code == EX_WARNINGS, report
    got = {f["where"]: (f["kind"], f["severity"]) for f in report["findings"]}
    assert got == expected
    assert report["counts"]["blobs"] == 2  # neither strays nor symlinks count as blobs


_AUDITED = r"""
import os, sys
outside = os.path.realpath(sys.argv[1])
log = open(sys.argv[2], "w")

def hook(event, args):
    if event not in ("open", "os.scandir", "os.listdir") or not args:
        return
    if isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.fsdecode(args[0])
        real = os.path.realpath(path)
        if real == outside or real.startswith(outside + os.sep):
            log.write(f"{event} {path} -> {real}\n")
            log.flush()

sys.addaudithook(hook)
sys.argv = ["soloqueue-mem", *sys.argv[3:]]
from soloqueue_mem.cli import main
main()
"""


def test_d6_symlinks_are_never_followed(cli, home, tmp_path):
    """Audit hook (RELIABILITY E1 style): no file or folder outside the store is opened
    or listed; the FIFO target would make a follower hang; targets are unchanged."""
    small_store(cli, home)
    outside = make_outside(tmp_path)
    plant_strange_files(home, outside)
    before = {p: p.lstat().st_mtime_ns for p in outside["root"].rglob("*")}
    audit_log = tmp_path / "audit.log"
    for command in (["verify", "--full"], ["gc", "--deep", "--dry-run"], ["gc", "--deep"]):
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                _AUDITED,
                str(outside["root"]),
                str(audit_log),
                "--format",
                "json",
                *command,
            ],
            capture_output=True,
            timeout=30,
            check=False,
        )
        assert done.returncode in (0, EX_WARNINGS), (command, done.stderr)
        assert audit_log.read_text() == "", f"{command} touched outside: {audit_log.read_text()}"
    after = {p: p.lstat().st_mtime_ns for p in outside["root"].rglob("*")}
    assert after == before
    assert outside["secret"].read_bytes() == b"not yours"
    assert (outside["folder"] / "inner.bin").read_bytes() == b"inner"
    # gc reported the links as strays and left them alone
    shard = home / "artifacts" / "blobs" / "2026" / "11" / "26"
    assert (shard / "linked-folder").is_symlink()


# --- D10: session logs --------------------------------------------------------------------


def test_d10_corrupt_middle_line_is_an_error(cli, home):
    small_store(cli, home)
    cli.ok("log", "-s", "s", "third turn")
    path = jsonl(home)
    lines = path.read_bytes().splitlines(keepends=True)
    assert len(lines) == 3
    lines[1] = b'{"turn_index": 1, "role": "assistant", "content": "cut\n'
    path.write_bytes(b"".join(lines))
    code, report = verify(cli)
    assert code == EX_ERRORS
    corrupt = kinds(report)["jsonl-corrupt"]
    assert [(f["severity"], f["where"]) for f in corrupt] == [
        ("error", "groups/default/sessions/default/s.jsonl:2")
    ]
    assert "torn-tail" not in kinds(report)


def test_d10_torn_tail_is_a_warning(cli, home):
    small_store(cli, home)
    path = jsonl(home)
    with open(path, "ab") as handle:
        handle.write(b'{"turn_index": 2, "timestamp": "2026-11-26T08:00:00.000Z", "role": "us')
    code, report = verify(cli)
    assert code == EX_WARNINGS, report
    assert report["findings"] == [
        {
            "severity": "warning",
            "kind": "torn-tail",
            "where": "groups/default/sessions/default/s.jsonl:3",
            "detail": "torn tail (incomplete last line)",
        }
    ]


# --- D11: a busy database ---------------------------------------------------------------


def _busy_store(cli, home: Path) -> None:
    small_store(cli, home)
    (home / "config.toml").write_text("busy_timeout_ms = 300\n")


def test_d11_writer_holding_begin_immediate_is_never_corruption(cli, home):
    """In WAL a reader is not blocked by a writer's BEGIN IMMEDIATE: verify may complete
    (exit 0) or report busy (75), never corrupt, and changes nothing."""
    _busy_store(cli, home)
    with DbHolder(home / "memory.db", "immediate", "UPDATE sessions SET turn_count = turn_count"):
        before = tree_snapshot(home)
        code, report = verify(cli, "--full")
        assert_unchanged(before, tree_snapshot(home))
    assert code in (0, EX_BUSY), report
    assert "corrupt-database" not in kinds(report)
    assert (code == EX_BUSY) == ("busy" in kinds(report))


@pytest.mark.parametrize("database", ["memory.db", "artifacts.db"])
def test_d11_exclusively_locked_database_is_busy_not_corrupt(cli, home, database):
    _busy_store(cli, home)
    sql = {
        "memory.db": "UPDATE sessions SET turn_count = turn_count",
        "artifacts.db": "UPDATE artifacts SET title = title",
    }[database]
    with DbHolder(home / database, "exclusive", sql):
        before = tree_snapshot(home)
        code, report = verify(cli, "--full")
        assert_unchanged(before, tree_snapshot(home))
    assert code == EX_BUSY, report
    (busy,) = kinds(report)["busy"]
    assert busy["where"] == database
    assert "corrupt-database" not in kinds(report)
    assert report["summary"]["error"] == 0
    # once the other process is gone, the store is sound
    assert verify(cli, "--full")[0] == 0


# --- read-only, and --repair ---------------------------------------------------------------


def test_verify_is_read_only_whatever_it_finds(cli, home, tmp_path):
    store = small_store(cli, home)
    gone = save(cli, b"orphan")
    cli.json("artifact", "rm", gone["id"])
    writable(home / store["a"]["path"]).unlink()
    (home / "artifacts" / "tmp" / "2222222222222222.tmp").write_bytes(b"old temp")
    age(home / "artifacts" / "tmp" / "2222222222222222.tmp", 5 * HOUR)
    with open(jsonl(home, "t"), "ab") as handle:
        handle.write(b'{"torn')
    sqlite_exec(home / "memory.db", "DELETE FROM conversation_turns WHERE session_id = 's'")
    before = tree_snapshot(home)
    for flags in ([], ["--full"], ["--quick"]):
        code, report = verify(cli, *flags)
        assert code == EX_ERRORS
        assert tree_snapshot(home) == before, flags
    found = kinds(report)
    assert {"missing-blob", "orphan-recent", "temp-file", "torn-tail", "unindexed-turns"} <= set(
        found
    )
    assert not (home / "groups" / "default" / "sessions" / "default" / "t.jsonl.torn").exists()


def test_repair_reindexes_turns_deleted_from_the_index(cli, home):
    small_store(cli, home)
    sqlite_exec(home / "memory.db", "DELETE FROM conversation_turns WHERE session_id = 's'")
    code, report = verify(cli)
    assert code == EX_WARNINGS
    (finding,) = report["findings"]
    assert (finding["kind"], finding["where"], finding["detail"]) == (
        "unindexed-turns",
        "default/default/s",
        "2 turn(s)",
    )
    cli("--format", "json", "verify", "--repair")
    code, report = verify(cli)
    assert code == 0, report
    assert report["counts"]["turns_indexed"] == 3
    assert [h["content"] for h in cli.json("trace", "alpha")] == ["hello alpha"]


def test_repair_indexes_turns_a_crashed_writer_left_in_the_log(cli, home):
    """The crashed-writer shape: the JSONL is ahead of the index (rows and the indexed
    byte count both behind). --repair catches the index up from the log."""
    small_store(cli, home)
    size_after_first = len(jsonl(home).read_bytes().splitlines(keepends=True)[0])
    sqlite_exec(
        home / "memory.db",
        "DELETE FROM conversation_turns WHERE session_id = 's' AND turn_index = 1",
        f"UPDATE sessions SET jsonl_bytes = {size_after_first}, turn_count = 1"
        " WHERE session_id = 's'",
    )
    code, report = verify(cli)
    assert code == EX_WARNINGS
    assert [f["kind"] for f in report["findings"]] == ["unindexed-turns"]
    repaired = cli("--format", "json", "verify", "--repair")
    assert json.loads(repaired.stdout)["repaired"]["sessions"] == 2
    code, report = verify(cli)
    assert code == 0, report
    assert report["counts"]["turns_indexed"] == 3
    assert [h["content"] for h in cli.json("trace", "bravo")] == ["reply bravo"]


def test_repair_rebuilds_the_full_text_index(cli, home):
    small_store(cli, home)
    assert len(cli.json("trace", "alpha")) == 1
    sqlite_exec(
        home / "memory.db",
        "INSERT INTO conversation_turns_fts (conversation_turns_fts) VALUES ('delete-all')",
    )
    assert cli.json("trace", "alpha") == []
    before = tree_snapshot(home)
    assert verify(cli)[0] == 0
    assert_unchanged(before, tree_snapshot(home))  # no repair without --repair
    assert cli.json("trace", "alpha") == []

    result = cli("--format", "json", "verify", "--repair")
    assert result.exit_code == 0, result.stdout
    assert json.loads(result.stdout)["repaired"] == {
        "sessions": 2,
        "fts_rows": 3,
        "memory_fts_rows": 0,
        "episode_fts_rows": 0,
        "attachment_fts_rows": 0,
    }
    assert [h["content"] for h in cli.json("trace", "alpha")] == ["hello alpha"]
    assert [h["content"] for h in cli.json("trace", "charlie")] == ["other charlie"]
    assert verify(cli, "--full")[0] == 0


def test_repair_rebuilds_the_attachment_index(cli, home, tmp_path):
    photo = tmp_path / "cat.jpg"
    photo.write_bytes(b"\xff\xd8 a cat")
    cli.ok("attach", str(photo), "--transcription", "明天帮我预约下午3点的会议")
    assert cli.json("stats")["counts"]["attachments"] == 1
    sqlite_exec(
        home / "memory.db",
        "INSERT INTO attachments_fts (attachments_fts) VALUES ('delete-all')",
    )
    assert not [h for h in cli.json("recall", "预约会议") if h["kind"] == "attachment"]
    result = cli("--format", "json", "verify", "--repair")
    assert result.exit_code == 0, result.stdout
    assert json.loads(result.stdout)["repaired"]["attachment_fts_rows"] == 1
    hits = cli.json("recall", "预约会议")
    assert [h["kind"] for h in hits] == ["attachment"]


# --- D16: one content at two dated paths --------------------------------------------------


def test_d16_duplicate_copies_are_info_and_gc_keeps_both(cli, home, monkeypatch):
    data = b"the same content on two days\n" * 50
    first = save(cli, data)
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-27T08:00:00Z")
    second = save(cli, data)
    monkeypatch.setenv("SOLOQUEUE_NOW", NOW)
    assert second["path"] == first["path"]
    digest = first["sha256"]
    other_path = f"artifacts/blobs/2026/11/27/{digest[:2]}/{digest[2:4]}/{digest}"
    (home / other_path).parent.mkdir(parents=True, mode=0o700)
    shutil.copy2(home / first["path"], home / other_path)
    sqlite_exec(
        home / "artifacts.db",
        f"UPDATE artifacts SET path = '{other_path}' WHERE id = {int(second['id'])}",
    )
    age_all_blobs(home, 10 * 86400)

    code, report = verify(cli, "--full")
    assert code == 0, report
    assert report["findings"] == [
        {
            "severity": "info",
            "kind": "duplicate-copy",
            "where": digest,
            "detail": ", ".join(sorted([first["path"], other_path])),
        }
    ]
    assert report["counts"]["blobs"] == 2

    collected = cli.json("gc", "--deep")
    assert collected["phase2"]["orphans"] == 0
    assert collected["phase2"]["deleted_blobs"] == 0
    assert (home / first["path"]).read_bytes() == data
    assert (home / other_path).read_bytes() == data
    assert cli.ok("artifact", "read", first["id"]).stdout_bytes == data
    assert cli.ok("artifact", "read", second["id"]).stdout_bytes == data

    # once one row goes, its copy becomes an ordinary orphan and only that one goes
    cli.json("artifact", "rm", second["id"])
    collected = cli.json("gc", "--deep")
    assert collected["phase2"]["deleted_blobs"] == 1
    assert not (home / other_path).exists()
    assert (home / first["path"]).read_bytes() == data
    assert verify(cli, "--full")[0] == 0
