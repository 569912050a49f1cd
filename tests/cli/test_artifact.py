"""`artifact save | read | list | show | tag | rm`: the L4 content-addressed store.

Byte-exact round trips (files, stdin, Hypothesis over random binary content through the
library with a real SQLite catalog), the `artifacts/blobs/YYYY/MM/DD/ab/cd/<sha256>`
layout dated by the first save, dedup across days, JSON keys and exit codes, hostile
artifact ids (RELIABILITY C8), private modes, streaming of big files, and the blob
power-loss shapes of RELIABILITY A4 (a 0-byte, truncated or missing blob).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import sqlite3
import stat
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.conftest import missing_store_is_sqlite, run_process, tree_snapshot

# Every test here works in a data directory that exists (see the store fixture).
pytestmark = pytest.mark.usefixtures("store")

EX_NOT_FOUND = 3
EX_DATAERR = 65
EX_VERIFY_ERRORS = 9

KEYS = {
    "id",
    "sha256",
    "group",
    "title",
    "tags",
    "author",
    "created_at",
    "path",
    "size",
    "mime",
}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def expected_relpath(data: bytes, day: str = "2026/11/26") -> str:
    digest = sha(data)
    return f"artifacts/blobs/{day}/{digest[:2]}/{digest[2:4]}/{digest}"


def save_bytes(cli, data: bytes, *options: str) -> dict:
    return cli.json("artifact", "save", "-", *options, input=data)


def read_bytes(cli, ref: str) -> bytes:
    return cli.ok("artifact", "read", ref).stdout_bytes


def catalog_rows(home: Path) -> list[tuple]:
    conn = sqlite3.connect(home / "artifacts.db")
    try:
        return conn.execute(
            "SELECT id, content_hash, path, size, created_at FROM artifacts ORDER BY id"
        ).fetchall()
    finally:
        conn.close()


def blob_files(home: Path) -> list[str]:
    return sorted(
        str(p.relative_to(home)) for p in (home / "artifacts" / "blobs").rglob("*") if p.is_file()
    )


# --- round trips ------------------------------------------------------------------


def test_save_file_then_read_gives_identical_bytes(cli, home, tmp_path):
    data = bytes(range(256)) * 40 + b"\x00\r\n\xff tail"
    source = tmp_path / "payload.bin"
    source.write_bytes(data)
    saved = cli.json("artifact", "save", str(source), "--title", "payload")
    assert saved["sha256"] == sha(data)
    assert saved["size"] == len(data)
    assert saved["new_blob"] is True
    assert saved["path"] == expected_relpath(data)
    assert read_bytes(cli, saved["id"]) == data
    assert read_bytes(cli, saved["sha256"]) == data  # the full hash is an id too
    assert (home / saved["path"]).read_bytes() == data


def test_save_stdin_then_read_gives_identical_bytes(cli, home):
    data = "多字节 UTF-8 ✓\n".encode() + os.urandom(3000)
    saved = save_bytes(cli, data)
    assert saved["sha256"] == sha(data)
    assert read_bytes(cli, saved["id"]) == data


def test_save_and_read_through_a_real_process(home, tmp_path):
    data = os.urandom(70_000)
    done = run_process("--format", "json", "artifact", "save", "-", input=data)
    assert done.returncode == 0, done.stderr
    saved = json.loads(done.stdout)
    read = run_process("artifact", "read", saved["id"])
    assert read.returncode == 0, read.stderr
    assert read.stdout == data


def test_empty_content_round_trips(cli, home):
    saved = save_bytes(cli, b"")
    assert saved["size"] == 0
    assert saved["sha256"] == sha(b"")
    assert read_bytes(cli, saved["id"]) == b""


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    prefix=st.binary(max_size=512),
    size=st.integers(min_value=0, max_value=200 * 1024),
    seed=st.integers(min_value=0, max_value=2**32),
)
@example(prefix=b"", size=0, seed=0)
@example(prefix=b"", size=200 * 1024, seed=1)
def test_property_save_read_byte_identical_through_the_library(prefix, size, seed):
    """Random binary content of 0-200 KB (Hypothesis draws its size and seed; its
    buffer is too small to draw 200 KB byte by byte)."""
    data = (prefix + random.Random(seed).randbytes(size))[: 200 * 1024]
    from soloqueue_mem.artifacts import store
    from soloqueue_mem.artifacts.store import NewArtifact
    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.storage.sqlite.stores import open_artifacts

    now = datetime(2026, 11, 26, 8, tzinfo=UTC)
    with tempfile.TemporaryDirectory() as folder:
        home = Home(Path(folder) / "store")
        conn = open_artifacts(home, Config())
        assert conn is not None
        try:
            saved = store.save(home, conn, io.BytesIO(data), NewArtifact(title="p"), now)
            digest = sha(data)
            relpath = f"artifacts/blobs/2026/11/26/{digest[:2]}/{digest[2:4]}/{digest}"
            assert saved.artifact.content_hash == digest
            assert saved.artifact.path == relpath
            assert saved.artifact.size == len(data)
            blob = home.root / relpath
            assert blob.name == digest
            assert blob.read_bytes() == data
            artifact, chunks = store.read(home, conn, str(saved.artifact.id))
            assert b"".join(chunks) == data
            assert artifact == saved.artifact
            # nothing left behind in the temp folder
            assert list((home.root / "artifacts" / "tmp").iterdir()) == []
        finally:
            conn.close()


# --- layout and dedup ---------------------------------------------------------------


def test_same_content_on_two_days_is_one_blob_and_two_rows(cli, home, monkeypatch):
    data = b"the same content, saved twice\n" * 100
    first = save_bytes(cli, data, "--title", "first")
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-28T09:30:00Z")
    second = save_bytes(cli, data, "--title", "second")
    assert first["new_blob"] is True
    assert second["new_blob"] is False
    assert first["id"] != second["id"]
    assert first["path"] == second["path"] == expected_relpath(data, "2026/11/26")
    assert second["created_at"] == "2026-11-28T09:30:00.000Z"
    assert blob_files(home) == [expected_relpath(data, "2026/11/26")]
    rows = catalog_rows(home)
    assert [(r[1], r[2]) for r in rows] == [(sha(data), first["path"])] * 2
    # nothing dated on the second day was created
    assert not (home / "artifacts" / "blobs" / "2026" / "11" / "28").exists()
    assert read_bytes(cli, second["id"]) == data
    # the full hash names the newest row
    assert cli.json("artifact", "show", sha(data))["id"] == second["id"]


def test_blobs_are_read_only_and_folders_private(cli, home):
    saved = save_bytes(cli, b"private bytes")
    blob = home / saved["path"]
    assert stat.S_IMODE(os.lstat(blob).st_mode) == 0o400
    folder = blob.parent
    while folder != home:
        assert stat.S_IMODE(os.lstat(folder).st_mode) == 0o700, folder
        folder = folder.parent
    assert stat.S_IMODE(os.lstat(home / "artifacts" / "tmp").st_mode) == 0o700
    assert stat.S_IMODE(os.lstat(home / "artifacts.db").st_mode) == 0o600
    assert list((home / "artifacts" / "tmp").iterdir()) == []


# --- metadata commands -----------------------------------------------------------------


def test_list_show_tag_rm_and_their_json(cli, home):
    a = save_bytes(
        cli,
        b"alpha",
        "--title",
        "Alpha",
        "--tag",
        "x",
        "-t",
        "sys:ephemeral",
        "--group",
        "team1",
        "--author",
        "bob",
        "--mime",
        "text/plain",
    )
    b = save_bytes(cli, b"bravo", "--title", "Bravo", "-t", "y")
    assert set(a) == KEYS | {"new_blob"}
    assert a["tags"] == ["sys:ephemeral", "x"]
    assert (a["group"], a["title"], a["author"], a["mime"]) == (
        "team1",
        "Alpha",
        "bob",
        "text/plain",
    )
    assert a["created_at"] == "2026-11-26T08:00:00.000Z"
    assert isinstance(a["id"], str) and a["id"].isdigit()

    listed = cli.json("artifact", "list")
    assert [row["id"] for row in listed] == [b["id"], a["id"]]  # newest first
    assert all(set(row) == KEYS for row in listed)
    assert [r["id"] for r in cli.json("artifact", "list", "--tag", "x")] == [a["id"]]
    assert [r["id"] for r in cli.json("artifact", "list", "--group", "team1")] == [a["id"]]
    assert [r["id"] for r in cli.json("artifact", "list", "--limit", "1")] == [b["id"]]
    assert cli.json("artifact", "list", "--tag", "nope") == []

    shown = cli.json("artifact", "show", a["id"])
    assert set(shown) == KEYS
    assert {k: shown[k] for k in KEYS} == {k: a[k] for k in KEYS}
    meta = cli.json("artifact", "read", a["id"], "--meta")
    assert meta == shown

    tagged = cli.json("artifact", "tag", a["id"], "user:persistent", "keep", "--remove", "x")
    assert set(tagged) == KEYS
    assert tagged["tags"] == ["keep", "sys:ephemeral", "user:persistent"]
    conn = sqlite3.connect(home / "artifacts.db")
    try:
        tag_rows = conn.execute(
            "SELECT tag FROM artifact_tags WHERE artifact_id = ? ORDER BY tag", (int(a["id"]),)
        ).fetchall()
        column = conn.execute("SELECT tags FROM artifacts WHERE id = ?", (int(a["id"]),)).fetchone()
    finally:
        conn.close()
    assert [t for (t,) in tag_rows] == tagged["tags"]
    assert json.loads(column[0]) == tagged["tags"]
    assert cli.json("artifact", "list", "--tag", "x") == []
    assert [r["id"] for r in cli.json("artifact", "list", "--tag", "keep")] == [a["id"]]

    bad_tag = cli("artifact", "tag", a["id"], "bad tag!")
    assert bad_tag.exit_code == EX_DATAERR

    removed = cli.json("artifact", "rm", b["id"])
    assert set(removed) == KEYS | {"removed"}
    assert removed["removed"] is True
    assert removed["id"] == b["id"]
    assert cli("artifact", "show", b["id"]).exit_code == EX_NOT_FOUND
    assert cli("artifact", "read", b["id"]).exit_code == EX_NOT_FOUND
    # the blob stays until gc phase 2 finds it unreferenced
    assert (home / b["path"]).read_bytes() == b"bravo"
    assert [r["id"] for r in cli.json("artifact", "list")] == [a["id"]]


def test_table_and_text_output_work(cli, home):
    saved = save_bytes(cli, b"shown in a table", "--title", "Tabled")
    assert "Tabled" in cli.ok("--format", "table", "artifact", "list").stdout
    assert "Tabled" in cli.ok("--format", "table", "artifact", "show", saved["id"]).stdout


def test_unknown_ids_exit_3(cli, home):
    save_bytes(cli, b"something")
    for ref in ("999", "1" * 18, "0" * 64, sha(b"never saved")):
        for command in (["read"], ["show"], ["rm"], ["tag", "--"]):
            result = cli("artifact", *command, ref, *(["t"] if command[0] == "tag" else []))
            assert result.exit_code == EX_NOT_FOUND, (command, ref, result.stderr)
            assert result.stdout == ""


@missing_store_is_sqlite
def test_commands_on_a_missing_store_exit_66_and_create_nothing(cli, tmp_path):
    missing = tmp_path / "missing" / ".soloqueue"
    for command in (["read", "1"], ["show", "1"], ["list"], ["save", "-"]):
        result = cli("--root", str(missing), "artifact", *command, input=b"x")
        assert (result.exit_code, result.stdout) == (66, ""), command
    assert not missing.parent.exists()


MALFORMED = [
    "not-hex-" + "z" * 56,
    "g" * 64,  # 64 characters, not hex
    "A" * 64,  # uppercase hex
    "AB" + sha(b"x")[2:],  # a real hash with uppercase letters
    sha(b"x")[:63],
    sha(b"x") + "0",
    "abc",
    "../x",
    "../../etc/passwd",
    "/etc/passwd",
    "0",
    "-1",
    "1.5",
    " 1",
    "1\n",
    "",
    "1" * 19,
]


@pytest.mark.parametrize("ref", MALFORMED)
def test_malformed_ids_exit_65_and_touch_nothing(cli, home, ref):
    saved = save_bytes(cli, b"x")
    assert saved["sha256"] == sha(b"x")
    before = tree_snapshot(home)
    for command in (["read"], ["show"], ["rm"], ["tag"]):
        extra = ["keep"] if command == ["tag"] else []
        result = cli("artifact", *command, "--", ref, *extra)
        assert result.exit_code == EX_DATAERR, (command, ref, result.stdout, result.stderr)
        assert result.stdout == ""
        assert "invalid artifact id" in result.stderr
    assert tree_snapshot(home) == before
    assert read_bytes(cli, saved["id"]) == b"x"


def test_unknown_option_like_id_is_a_usage_error_not_a_lookup(cli, home):
    save_bytes(cli, b"x")
    before = tree_snapshot(home)
    result = cli("artifact", "read", "-1")
    assert result.exit_code != 0
    assert result.stdout == ""
    assert tree_snapshot(home) == before


def test_saving_a_missing_file_exits_3_and_creates_nothing(cli, home, tmp_path):
    before = tree_snapshot(home)
    result = cli("artifact", "save", str(tmp_path / "no-such-file"))
    assert result.exit_code == EX_NOT_FOUND
    assert tree_snapshot(home) == before


def test_invalid_tag_or_group_is_refused_before_anything_is_stored(cli, home):
    for options in (["--tag", "has space"], ["--tag", "-lead"], ["--group", "../x"]):
        result = cli("artifact", "save", "-", *options, input=b"data")
        assert result.exit_code == EX_DATAERR, (options, result.stderr)
    assert blob_files(home) == []
    if (home / "artifacts.db").exists():
        assert catalog_rows(home) == []


# --- big files are streamed -----------------------------------------------------------

_RSS_PROBE = (
    "import resource, subprocess, sys\n"
    "stdin = open(sys.argv[1], 'rb') if sys.argv[1] != '-' else subprocess.DEVNULL\n"
    "done = subprocess.run(sys.argv[2:], stdin=stdin, stdout=subprocess.PIPE,"
    " stderr=subprocess.PIPE)\n"
    "sys.stdout.write(done.stdout.decode() + '\\n' + str(done.returncode) + ' '"
    " + str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) + '\\n')\n"
    "sys.stderr.write(done.stderr.decode())\n"
)


def _peak_rss_kib(stdin_path: str, *args: str) -> tuple[dict, int]:
    """Run the CLI in a fresh wrapper so RUSAGE_CHILDREN covers that one child only."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _RSS_PROBE,
            stdin_path,
            sys.executable,
            "-m",
            "soloqueue_mem",
            *args,
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    lines = done.stdout.decode().strip().splitlines()
    code, rss = lines[-1].split()
    assert code == "0", done.stderr
    return json.loads("\n".join(lines[:-1])), int(rss)


def test_big_files_are_streamed_not_read_whole(home, tmp_path):
    size = 30 * 1024 * 1024
    big = tmp_path / "big.bin"
    digest = hashlib.sha256()
    with open(big, "wb") as out:
        block = os.urandom(1024 * 1024)
        for i in range(30):
            chunk = bytes([i]) + block[1:]
            digest.update(chunk)
            out.write(chunk)
    small = tmp_path / "small.bin"
    small.write_bytes(b"small")

    _, baseline = _peak_rss_kib("-", "--format", "json", "artifact", "save", str(small))
    saved, by_path = _peak_rss_kib("-", "--format", "json", "artifact", "save", str(big))
    assert saved["size"] == size
    assert saved["sha256"] == digest.hexdigest()
    # from stdin too (a dedup hit, but the content is still staged and hashed)
    piped, by_stdin = _peak_rss_kib(str(big), "--format", "json", "artifact", "save", "-")
    assert piped["sha256"] == digest.hexdigest()
    budget_kib = 12 * 1024  # 1 MiB chunks; far below the 30 MiB file
    print(f"peak RSS KiB: baseline {baseline}, file {by_path}, stdin {by_stdin}")
    assert by_path - baseline < budget_kib, (baseline, by_path)
    assert by_stdin - baseline < budget_kib, (baseline, by_stdin)
    blob = home / saved["path"]
    assert blob.stat().st_size == size
    read = run_process("artifact", "read", saved["id"], timeout=120)
    assert read.returncode == 0
    assert hashlib.sha256(read.stdout).hexdigest() == digest.hexdigest()


# --- A4: a referenced blob damaged by a power loss ------------------------------------


def _damage(blob: Path, shape: str) -> None:
    os.chmod(blob, 0o600)
    if shape == "zero":
        blob.write_bytes(b"")
    elif shape == "truncated":
        data = blob.read_bytes()
        blob.write_bytes(data[: len(data) // 2])
    elif shape == "same-size-flipped":
        data = bytearray(blob.read_bytes())
        data[len(data) // 2] ^= 0x01
        blob.write_bytes(bytes(data))
    else:
        assert shape == "missing"
        blob.unlink()


@pytest.mark.parametrize(
    ("shape", "kinds", "flags"),
    [
        ("zero", {"size-mismatch", "hash-mismatch"}, []),
        ("truncated", {"size-mismatch", "hash-mismatch"}, []),
        ("same-size-flipped", {"hash-mismatch"}, ["--full"]),
        ("missing", {"missing-blob"}, []),
    ],
)
def test_a4_damaged_blob_is_refused_flagged_and_repaired_by_saving_again(
    cli, home, shape, kinds, flags
):
    data = os.urandom(5000)
    saved = save_bytes(cli, data)
    other = save_bytes(cli, b"an unrelated healthy artifact")
    _damage(home / saved["path"], shape)

    for ref in (saved["id"], saved["sha256"]):
        result = cli("artifact", "read", ref)
        assert result.exit_code != 0, shape
        assert result.stdout_bytes == b""
        assert result.stderr.startswith("error:")
    assert read_bytes(cli, other["id"]) == b"an unrelated healthy artifact"

    checked = cli("--format", "json", "verify", *flags)
    assert checked.exit_code == EX_VERIFY_ERRORS, checked.stdout
    report = json.loads(checked.stdout)
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    assert len(errors) == 1, report
    assert errors[0]["kind"] in kinds
    assert errors[0]["where"] == f"artifact {saved['id']}"
    assert errors[0]["detail"] == saved["path"]

    again = save_bytes(cli, data)
    assert again["path"] == saved["path"]
    assert again["new_blob"] is True  # the damaged copy was replaced, not trusted
    assert read_bytes(cli, saved["id"]) == data
    assert (home / saved["path"]).read_bytes() == data
    assert stat.S_IMODE(os.lstat(home / saved["path"]).st_mode) == 0o400
    clean = cli("--format", "json", "verify", "--full")
    assert clean.exit_code == 0, clean.stdout


def test_a_title_that_is_not_utf8_is_bad_input(cli, tmp_path):
    source = tmp_path / "f.txt"
    source.write_text("x")
    result = cli("artifact", "save", str(source), "--title", "bad \udcff title")
    assert result.exit_code == 65 and "--title is not valid UTF-8 text" in result.stderr
    assert cli.json("artifact", "list") == []


def test_a_blob_folder_removed_after_the_rename_fails_the_save_cleanly(tmp_path, monkeypatch):
    """Without the save lock (what `gc --grace 0` could do to a save in the old
    negative control) the blob's folder can vanish between the rename and its fsync.
    The save must fail with a storage error, and must not close its staging descriptor
    a second time: by then another file may hold that number (here the file the failed
    fsync opened), and closing it would break an unrelated connection."""
    from soloqueue_mem.artifacts import cas, store
    from soloqueue_mem.artifacts.store import NewArtifact
    from soloqueue_mem.config import Config
    from soloqueue_mem.errors import StorageError
    from soloqueue_mem.home import Home
    from soloqueue_mem.storage.sqlite.stores import open_artifacts

    home = Home(tmp_path / "store")
    conn = open_artifacts(home, Config())
    assert conn is not None
    reused: list[int] = []

    def folder_gone(folder: Path) -> None:
        reused.append(os.open(tmp_path / "unrelated", os.O_CREAT | os.O_RDWR, 0o600))
        raise FileNotFoundError(2, "No such file or directory", str(folder))

    monkeypatch.setattr(cas, "fsync_dir", folder_gone)
    try:
        with pytest.raises(StorageError, match="No such file or directory"):
            store.save(
                home,
                conn,
                io.BytesIO(b"x" * 100),
                NewArtifact(title="t"),
                datetime(2026, 11, 26, 8, tzinfo=UTC),
            )
        os.fstat(reused[0])  # still open: the failed save closed nothing of another's
        assert conn.execute("SELECT count(*) FROM artifacts").fetchone() == (0,)
    finally:
        os.close(reused[0])
        conn.close()
