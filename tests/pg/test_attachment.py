"""Attachments (seed 003 §4.4): the blob in the CAS as user:persistent, the row and
its FTS, the recall channel, list/show/rm, expiry by consolidate, redaction; on SQLite
and on PostgreSQL (the row there, the blob in the attaching host's CAS), where a second
host sees the row and its text but not the bytes."""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from soloqueue_mem.memory.attachment_text import extract_text


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str | None:
    """The database URL on PostgreSQL, None on SQLite; the data directory exists."""
    request.getfixturevalue("store")
    if request.param == "postgres":
        return request.getfixturevalue("on_postgres")
    return None


def attachment_ids(home: Path, url: str | None) -> list[tuple]:
    """The ids in the attachments table, expired ones included."""
    sql = "SELECT id FROM attachments ORDER BY id"
    if url is None:
        with closing(sqlite3.connect(home / "memory.db")) as conn:
            return conn.execute(sql).fetchall()
    import psycopg

    with psycopg.connect(url) as conn:
        return [tuple(row) for row in conn.execute(sql)]  # type: ignore[arg-type]


def attach(cli, path: Path, *args: str) -> dict:
    return cli.json("attach", str(path), *args)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "cat.jpg").write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    (folder / "voice.ogg").write_bytes(b"OggS voice bytes")
    (folder / "notes.md").write_text("# Plan\n\nMigrate the billing service to Postgres.\n")
    (folder / "page.html").write_text(
        "<html><head><style>.x{color:red}</style><script>var secret=1</script></head>"
        "<body><h1>Quarterly report</h1><p>Revenue &amp; margins</p></body></html>"
    )
    (folder / "data.json").write_text(json.dumps({"city": "Lisbon", "n": 3, "ok": True}))
    return folder


def test_attach_stores_the_blob_as_persistent_and_the_row(cli, files, home, backend):
    row = attach(cli, files / "cat.jpg", "--description", "一只橘猫趴在沙发上", "--tag", "猫",
                 "--session", "s1")  # fmt: skip
    assert row["direction"] == "inbound" and row["session"] == "s1"
    assert row["filename"] == "cat.jpg" and row["mime_type"] == "image/jpeg"
    assert row["file_size"] == len((files / "cat.jpg").read_bytes())
    assert row["expires_at"] is None and row["tags"] == ["猫"]
    artifact = cli.json("artifact", "show", row["artifact_id"])
    assert artifact["tags"] == ["user:persistent"] and artifact["sha256"] == row["content_hash"]
    assert (home / row["local_path"]).read_bytes() == (files / "cat.jpg").read_bytes()
    assert cli.json("attachment", "show", row["id"][:8]) == row


def test_recall_finds_an_attachment_through_its_transcription(cli, files, backend):
    row = attach(cli, files / "voice.ogg", "--transcription", "明天帮我预约下午3点的会议")
    cli.ok("remember", "The user prefers tea over coffee")
    hits = cli.json("recall", "预约会议")
    assert hits[0]["kind"] == "attachment" and hits[0]["id"] == row["id"]
    assert hits[0]["channel"] == "attachments" and hits[0]["filename"] == "voice.ogg"
    only = cli.json("recall", "预约会议", "--channels", "attachments")
    assert [h["id"] for h in only] == [row["id"]]


def test_text_is_extracted_from_markdown_html_and_json(cli, files, backend):
    md = attach(cli, files / "notes.md")
    html = attach(cli, files / "page.html", "--direction", "outbound")
    data = attach(cli, files / "data.json")
    assert "Migrate the billing service" in md["extracted_text"]
    assert html["extracted_text"] == "Quarterly report Revenue & margins"
    assert data["extracted_text"] == "city Lisbon n 3 ok"
    hits = cli.json("recall", "billing Postgres", "--channels", "attachments")
    assert [h["id"] for h in hits] == [md["id"]]


def test_extract_text_gives_nothing_for_binary_or_non_utf8():
    assert extract_text(b"\x89PNG\r\n", "a.png", "image/png") == ""
    assert extract_text(b"\xff\xfe bad", "a.txt", "text/plain") == ""
    assert extract_text("é".encode() * 3 + "é".encode()[:1], "a.txt", "text/plain") == "ééé"


def test_list_filters_and_rm_removes_the_row_and_the_artifact_row(cli, files, home, backend):
    cat = attach(cli, files / "cat.jpg", "--description", "cat", "--tag", "pets")
    report = attach(cli, files / "page.html", "--direction", "outbound", "-g", "work")
    assert [r["id"] for r in cli.json("attachment", "list")] == [report["id"], cat["id"]]
    assert [r["id"] for r in cli.json("attachment", "list", "--direction", "outbound")] == [
        report["id"]
    ]
    assert [r["id"] for r in cli.json("attachment", "list", "--tag", "pets")] == [cat["id"]]
    assert [r["id"] for r in cli.json("attachment", "list", "-g", "work")] == [report["id"]]
    gone = cli.json("attachment", "rm", cat["id"])
    assert gone["removed"] is True
    assert [r["id"] for r in cli.json("attachment", "list")] == [report["id"]]
    assert cli("artifact", "show", cat["artifact_id"]).exit_code == 3
    assert cli("attachment", "show", cat["id"]).exit_code == 3
    assert cli.json("recall", "cat", "--channels", "attachments") == []


def test_bad_input_is_refused_before_anything_is_written(cli, files, home, backend):
    result = cli("attach", str(files / "cat.jpg"), "--direction", "sideways")
    assert result.exit_code == 65 and result.stdout == ""
    assert result.stderr.startswith("error: --direction must be inbound or outbound")
    assert os.listdir(home) == [".gitignore"]
    assert cli("attach", "-", input=b"x").exit_code == 65  # stdin needs --name
    assert cli("attach", str(files / "missing.bin")).exit_code == 3


def test_stdin_attachment_needs_a_name(cli, backend):
    row = cli.json("attach", "-", "--name", "clip.txt", input=b"hello from stdin")
    assert row["filename"] == "clip.txt" and row["extracted_text"] == "hello from stdin"


def test_consolidate_removes_expired_attachments(cli, files, home, monkeypatch, backend):
    short = attach(cli, files / "cat.jpg", "--description", "cat", "--duration", "1d")
    kept = attach(cli, files / "notes.md")
    assert cli.json("consolidate")["expire"]["attachments"] == 0
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-28T08:00:00Z")
    assert [r["id"] for r in cli.json("attachment", "list")] == [kept["id"]]  # hidden at once
    assert cli.json("consolidate", "--dry-run")["expire"]["attachments"] == 1
    assert len(attachment_ids(home, backend)) == 2  # a dry run deletes nothing
    assert cli.json("consolidate")["expire"]["attachments"] == 1
    assert attachment_ids(home, backend) == [(kept["id"],)]
    assert cli("artifact", "show", short["artifact_id"]).exit_code == 3
    assert cli.json("consolidate")["expire"]["attachments"] == 0


def test_redaction_covers_every_text_of_an_attachment(cli, files, home, backend):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("redact = true\n")
    key = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    (files / "secret.txt").write_text(f"deploy with {key}\n")
    row = attach(cli, files / "secret.txt", "--description", f"key {key}",
                 "--transcription", f"say {key}")  # fmt: skip
    for path in home.rglob("*"):
        if path.is_file():
            assert key.encode() not in path.read_bytes(), path
    assert "[REDACTED:" in row["extracted_text"] and "[REDACTED:" in row["description"]


def test_a_second_host_sees_the_row_and_its_text_but_not_the_bytes(
    cli, files, home, on_postgres, monkeypatch
):
    row = attach(cli, files / "notes.md", "--description", "迁移计划", "--tag", "plan")
    monkeypatch.setenv("SOLOQUEUE_HOME", str(home.parent / "host-b"))
    own = cli.json("artifact", "save", "-", "--title", "b's own", input=b"other bytes")
    assert own["id"] == row["artifact_id"]  # the same number in another host's catalog
    assert [r["id"] for r in cli.json("attachment", "list", "--tag", "plan")] == [row["id"]]
    shown = cli("--format", "json", "attachment", "show", row["id"][:8])
    assert json.loads(shown.stdout) == row
    assert "not in this data directory (attached on another host" in shown.stderr
    hits = cli.json("recall", "billing 迁移", "--channels", "attachments")
    assert [h["id"] for h in hits] == [row["id"]]
    assert cli.json("attachment", "rm", row["id"])["removed"] is True
    assert cli.json("artifact", "show", own["id"])["sha256"] == own["sha256"]  # B's kept
    assert cli.json("attachment", "list") == []
    monkeypatch.setenv("SOLOQUEUE_HOME", str(home))
    assert cli.json("attachment", "list") == []  # the row was shared
    assert cli.json("artifact", "show", row["artifact_id"])["sha256"] == row["content_hash"]
    assert not (home.parent / "host-b" / "memory.db").exists()


def test_the_library_attaches_and_expires_through_either_rows(home, backend):
    """memory.attach on memory.db's rows and on the database's, with the same outcome."""
    import io
    from datetime import UTC, datetime, timedelta

    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.memory.attach import NewAttachment, Rows, attach, expire, remove
    from soloqueue_mem.memory.attachments import Filters
    from soloqueue_mem.storage.sqlite.stores import open_artifacts, open_memory

    now = datetime(2026, 11, 26, 8, tzinfo=UTC)
    store = Home(home)
    store.ensure()
    if backend is None:
        conn = open_memory(store, Config())
        rows = Rows(conn)
    else:
        from soloqueue_mem.storage.postgres.attachments import TSVECTOR
        from soloqueue_mem.storage.postgres.connect import connect

        conn = connect(backend)
        rows = Rows(conn, TSVECTOR)
    with closing(conn), closing(open_artifacts(store, Config())) as artifacts:
        new = NewAttachment("a.txt", "default", "default", expires_at=now + timedelta(days=1))
        short = attach(store, rows, artifacts, io.BytesIO(b"short lived"), new, now)
        kept = attach(
            store, rows, artifacts, io.BytesIO(b"kept"), new._replace(expires_at=None), now
        )
        assert rows.get(short.id[:6]) == short
        assert expire(rows, artifacts, now) == 0
        assert expire(rows, artifacts, now + timedelta(days=2)) == 1
        assert rows.listed(Filters(), "2026-11-30T00:00:00Z", 10) == [kept]
        assert remove(rows, artifacts, kept.id) == kept
        assert rows.listed(Filters(), "2026-11-26T08:00:00Z", 10) == []
        assert artifacts.execute("SELECT count(*) FROM artifacts").fetchone() == (0,)
