"""``export``/``import`` on the PostgreSQL back end: SQLite → dump → PostgreSQL → dump →
SQLite keeps the records, re-import is idempotent, bad input writes nothing, redaction,
gap-free turn indexes with writers running, and the Store methods on both back ends."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_transfer import populate
from tests.conftest import Cli
from tests.e2e.test_transfer_hardening import tampered


def _export(cli: Cli, root: Path, *args: str) -> bytes:
    return cli.ok("--root", str(root), "export", *args).stdout_bytes


def _records(dump: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in dump.splitlines()]


def _sqlite_dump(cli: Cli, home: Path, tmp_path: Path) -> tuple[bytes, Path]:
    populate(cli, tmp_path)
    first = _export(cli, home, "--with-blobs")
    path = tmp_path / "sqlite.jsonl"
    path.write_bytes(first)
    return first, path


def test_sqlite_to_postgres_to_sqlite_keeps_the_records(
    cli: Cli, home: Path, tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, path = _sqlite_dump(cli, home, tmp_path)
    monkeypatch.setenv("SOLOQUEUE_DATABASE_URL", database_url)
    host_a = tmp_path / "host-a" / ".soloqueue"
    report = cli.json("--root", str(host_a), "import", str(path))
    assert report["conflicts"] == []
    kinds = Counter(r["kind"] for r in _records(first))
    assert report["skipped"] == {}  # the database holds every kind
    held = ("artifact", "session", "memory", "episode", "working", "identity", "scratchpad")
    held += ("kv", "session_state", "attachment")
    assert report["added"] == {k: kinds[k] for k in held}
    assert kinds["episode"] and any(r.get("episode_id") for r in _records(first))
    assert not (host_a / "memory.db").exists() and not (host_a / "state.db").exists()
    # the host that imported exports the same bytes (its logs hold the whole records)
    second = _export(cli, host_a, "--with-blobs")
    assert second == first
    # the database is shared: what it holds works there, and another host can export it
    new = [r for r in _records(first) if r["kind"] == "memory"][-1]
    assert len(cli.json("--root", str(host_a), "memory", "history", new["id"])) >= 1
    host_b = tmp_path / "host-b" / ".soloqueue"
    assert cli.json("--root", str(host_b), "log", "-s", "s1", "next")["turn_index"] == 3
    elsewhere = _records(_export(cli, host_b))
    turns = [r["record"] for r in elsewhere if r["kind"] == "turn"]
    logged = [r["record"] for r in _records(second) if r["kind"] == "turn"]
    assert [t["turn_index"] for t in turns] == [0, 1, 2, 3, 0]
    offloaded = logged[2]
    assert (
        offloaded["offloaded"]
        and turns[2]["tool_results"][0]["content"] == (offloaded["offloaded"][0]["l1"])
    )  # another host has the row's L1 view of the offloaded output
    assert "offloaded" not in turns[2] and turns[:2] == logged[:2] and turns[4] == logged[3]
    memories = [r for r in elsewhere if r["kind"] == "memory"]
    assert memories == [r for r in _records(first) if r["kind"] == "memory"]
    # and back into SQLite: the same records, the same bytes on re-export
    monkeypatch.delenv("SOLOQUEUE_DATABASE_URL")
    back = tmp_path / "back" / ".soloqueue"
    (tmp_path / "second.jsonl").write_bytes(second)
    again = cli.json("--root", str(back), "import", str(tmp_path / "second.jsonl"))
    assert again["conflicts"] == [] and again["skipped"] == {}
    assert _export(cli, back, "--with-blobs") == second


def test_a_postgres_import_is_idempotent_and_reports_conflicts(
    cli: Cli, home: Path, tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, path = _sqlite_dump(cli, home, tmp_path)
    monkeypatch.setenv("SOLOQUEUE_DATABASE_URL", database_url)
    host = tmp_path / "host" / ".soloqueue"
    cli.ok("--root", str(host), "log", "-s", "s2", "-g", "work", "another first turn")
    report = cli.json("--root", str(host), "import", str(path))
    assert [(c["kind"], c["key"]) for c in report["conflicts"]] == [("session", "work/default/s2")]
    assert report["added"]["session"] == 1
    log = (host / "groups" / "work" / "sessions" / "default" / "s2.jsonl").read_text()
    assert "deploy" not in log  # nothing of a conflicting session is written
    again = cli.json("--root", str(host), "import", str(path))
    assert again["added"] == {} and len(again["conflicts"]) == 1
    assert again["existing"]["session"] == 1 and again["existing"]["memory"] >= 1
    host_b = tmp_path / "host-b" / ".soloqueue"  # the database decides, not a host's logs
    elsewhere = cli.json("--root", str(host_b), "import", str(path))
    assert elsewhere["existing"]["session"] == 1 and len(elsewhere["conflicts"]) == 1
    assert cli.json("--root", str(host), "trace", "deploy") == []


def test_bad_input_writes_nothing_to_postgres(
    cli: Cli, home: Path, tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, _ = _sqlite_dump(cli, home, tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(first + b'{"kind": "memory", "id": 7}\n')
    monkeypatch.setenv("SOLOQUEUE_DATABASE_URL", database_url)
    host = tmp_path / "host" / ".soloqueue"
    result = cli("--root", str(host), "import", str(bad))
    assert result.exit_code == 65 and result.stderr.startswith("error:"), result.stderr
    assert f"line {len(first.splitlines()) + 1}" in result.stderr
    assert not host.exists()
    assert cli.json("--root", str(host), "memory", "list", "--all") == []
    v1 = tmp_path / "memories.json"
    v1.write_text(json.dumps([{"id": "a", "content": "ok"}, {"id": "b", "content": ""}]))
    refused = cli("--root", str(host), "import", "memories-v1", str(v1))
    assert refused.exit_code == 65 and not host.exists()
    assert cli.json("--root", str(host), "memory", "list", "--all") == []


def test_m2_bad_values_refused_before_any_write_to_postgres(
    cli: Cli, home: Path, tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The values are checked by the same first pass as on SQLite (issue 30 M2/M3)."""
    first, _ = _sqlite_dump(cli, home, tmp_path)
    lines = first.splitlines(keepends=True)
    monkeypatch.setenv("SOLOQUEUE_DATABASE_URL", database_url)
    host = tmp_path / "host" / ".soloqueue"
    for kind, fields in (("memory", {"type": "ROOTKIT"}), ("turn", {"extracted": True,
                         "episode_id": "../x"}), ("episode", {"first_turn": 2**31})):  # fmt: skip
        dump, line = tampered(lines, kind, **fields)
        bad = tmp_path / "bad.jsonl"
        bad.write_bytes(dump)
        result = cli("--root", str(host), "import", str(bad))
        assert result.exit_code == 65 and result.stderr.startswith(f"error: line {line}: {kind}:")
        assert not host.exists()
        assert cli.json("--root", str(host), "memory", "list", "--all") == []
        assert cli("--root", str(host), "session", "show", "s1").exit_code == 3


def test_memories_v1_and_claude_code_transcripts_import_into_postgres(
    cli: Cli, home: Path, on_postgres: str
) -> None:
    from tests.cli import test_import_claude as transcripts
    from tests.cli import test_transfer as sqlite_side

    sqlite_side.test_memories_v1_import_maps_fields_and_keeps_ids_as_sources(cli, home)
    transcripts.test_a_transcript_becomes_a_session(cli)
    transcripts.test_tool_calls_results_and_thinking_are_searchable(cli)
    assert not (home / "memory.db").exists()  # all of it in the database


def test_import_redacts_what_it_writes_to_postgres(
    cli: Cli, home: Path, tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    home.mkdir(parents=True, mode=0o700)
    (home / "config.toml").write_text("redact = false\n")  # a dump holding the secret
    secret = "sk-proj-" + "A1b2C3d4" * 5
    cli.ok("log", "-s", "s1", "--role", "user", f"my key is {secret}")
    cli.ok("remember", f"the deploy key is {secret}")
    cli.ok("kv", "set", "deploy", json.dumps(secret))
    dump = tmp_path / "dump.jsonl"
    dump.write_bytes(cli.ok("export").stdout_bytes)
    host = tmp_path / "host" / ".soloqueue"
    host.mkdir(parents=True)
    (host / "config.toml").write_text("redact = true\n")
    monkeypatch.setenv("SOLOQUEUE_DATABASE_URL", database_url)
    report = cli.json("--root", str(host), "import", str(dump))
    assert report["redacted"] == {"turn": 1, "memory": 1, "kv": 1} and report["skipped"] == {}
    exported = cli.ok("--root", str(host), "export").stdout_bytes
    assert secret.encode() not in exported and b"[REDACTED:openai-key]" in exported
    for path in host.rglob("*"):
        assert path.is_dir() or secret.encode() not in path.read_bytes(), path
    with _psycopg(database_url) as conn:
        rows = conn.execute("SELECT content FROM quarantine_logs UNION ALL"
                            " SELECT content FROM memories UNION ALL"
                            " SELECT value FROM kv_store").fetchall()  # fmt: skip
    assert rows and all(secret not in content for (content,) in rows)


def _psycopg(url: str) -> Any:
    import psycopg

    return psycopg.connect(url, autocommit=True)


def test_turn_indexes_stay_gap_free_with_writers_during_an_import(
    cli: Cli, tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    batch = "\n".join(json.dumps({"role": "user", "content": f"turn {n}"}) for n in range(40))
    cli.ok("log", "--batch", "-s", "shared", input=batch)
    dump = tmp_path / "dump.jsonl"
    dump.write_bytes(cli.ok("export").stdout_bytes)
    monkeypatch.setenv("SOLOQUEUE_DATABASE_URL", database_url)
    script = (
        "import sys\nfrom soloqueue_mem import Store\n"
        "with Store(sys.argv[1]) as store:\n"
        "    for n in range(10):\n        store.log(f'writer turn {n}', session='shared')\n"
    )
    writers = [
        subprocess.Popen([sys.executable, "-c", script, str(tmp_path / f"w{n}")]) for n in range(3)
    ]
    importer = subprocess.run(
        [sys.executable, "-m", "soloqueue_mem", "--root", str(tmp_path / "imp"),
         "--format", "json", "import", str(dump)],
        capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    assert all(w.wait(timeout=120) == 0 for w in writers)
    assert importer.returncode == 0, importer.stderr
    report = json.loads(importer.stdout)
    with _psycopg(database_url) as conn:
        indexes = [
            i
            for (i,) in conn.execute(
                "SELECT turn_index FROM quarantine_logs WHERE session_id = 'shared' ORDER BY 1"
            )
        ]
        counters = conn.execute(
            "SELECT next_turn_index, turn_count FROM sessions WHERE session_id = 'shared'"
        ).fetchone()  # fmt: skip
    imported = 40 if report["added"].get("session") else 0  # else the writers came first
    assert imported or [c["key"] for c in report["conflicts"]] == ["default/default/shared"]
    assert indexes == list(range(30 + imported)) and counters == (30 + imported,) * 2


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_store_export_and_import_on_both_back_ends(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    from soloqueue_mem import Store
    from soloqueue_mem.errors import NotFound

    def use(name: str) -> None:
        if backend == "postgres":  # another database for each store
            server = request.getfixturevalue("pg_server")
            with _psycopg(server) as admin:
                admin.execute(f"CREATE DATABASE store_{name}")  # a constant name
            monkeypatch.setenv(
                "SOLOQUEUE_DATABASE_URL", server.replace("/postgres?", f"/store_{name}?")
            )

    use("a")
    with Store(tmp_path / "a") as store:
        store.log("first", session="s1")
        store.log("second", session="s1")
        store.remember("The user prefers tea", subject="user", predicate="drink")
        store.remember("The user prefers coffee", subject="user", predicate="drink")
        dump = tmp_path / "dump.jsonl"
        with open(dump, "w", encoding="utf-8") as out:
            assert store.export(out) == 1 + 1 + 2 + 2 + 1  # header, session, turns, memories, end
    use("b")
    with Store(tmp_path / "b") as other:
        report = other.import_dump(dump)
        assert report["added"] == {"session": 1, "memory": 2} and report["conflicts"] == []
        assert other.import_dump(dump)["added"] == {}
        again = tmp_path / "again.jsonl"
        with open(again, "w", encoding="utf-8") as out:
            other.export(out)
        with pytest.raises(NotFound):
            other.import_dump(tmp_path / "missing.jsonl")
    assert again.read_bytes() == dump.read_bytes()


def test_export_pages_through_a_session_and_keeps_to_its_scope(
    cli: Cli, tmp_path: Path, on_postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from soloqueue_mem.db import adapter

    batch = "\n".join(json.dumps({"role": "user", "content": f"turn {n}"}) for n in range(7))
    cli.ok("log", "--batch", "-s", "long", "-g", "work", input=batch)
    cli.ok("log", "-s", "other", "elsewhere")
    cli.ok("remember", "-g", "work", "the deploy is on Friday")
    cli.ok("remember", "the user prefers tea")
    monkeypatch.setattr(adapter, "PAGE", 2)  # cursors fetching 2 rows at a time
    fresh = tmp_path / "fresh" / ".soloqueue"  # a host with nothing on its disk
    records = _records(_export(cli, fresh, "--group", "work"))
    kinds = [r["kind"] for r in records]
    assert kinds == ["header", "session"] + ["turn"] * 7 + ["memory", "end"]
    assert [r["record"]["content"] for r in records[2:9]] == [f"turn {n}" for n in range(7)]
    assert records[0]["scope"] == {"group": "work", "agent": None}
    assert not fresh.exists()
