"""CLI ↔ API parity: the Store's values, shaped by ``soloqueue_mem.api.shapes``, are the
JSON the CLI prints, for the same store."""

from __future__ import annotations

import json

import pytest

from soloqueue_mem import Store
from soloqueue_mem.api import shapes


@pytest.fixture
def filled(home, cli):
    cli.ok("log", "-s", "s1", "the staging deploy failed with a timeout")
    cli.ok("log", "-s", "s1", "--role", "assistant", "retrying the staging deploy")
    cli.ok("log", "-s", "s2", "-g", "team", "lunch at noon")
    cli.ok("remember", "--type", "PREFERENCE", "--subject", "user", "--predicate", "editor", "vim")
    cli.ok("remember", "deploys go through staging first", "--tag", "ops")
    cli.ok("artifact", "save", "-", "--title", "notes", "-t", "user:persistent", input=b"x" * 5000)
    cli.ok("kv", "set", "language", '"zh"')
    cli.ok("session", "end", "s2", "-g", "team")  # an episode and the team's scratchpad
    with Store() as store:
        yield store


def sized_apart(stats: dict) -> dict:
    """``stats`` less the PostgreSQL database's size in bytes, which the server changes
    on its own between two calls (its maps and statistics); SQLite's files keep theirs."""
    databases = {name: dict(db) for name, db in stats["databases"].items()}
    databases.get("postgresql", {}).pop("bytes", None)
    return {**stats, "databases": databases}


def test_reads_match_the_cli(filled, cli):
    store = filled
    cases = [
        (
            ["trace", "staging deploy"],
            [shapes.trace_hit_json(h) for h in store.trace("staging deploy")],
        ),
        (
            ["trace", "lunch", "-g", "team"],
            [shapes.trace_hit_json(h) for h in store.trace("lunch", group="team")],
        ),
        (["memory", "list"], [shapes.memory_json(m) for m in store.memories()]),
        (
            ["memory", "list", "--tag", "ops"],
            [shapes.memory_json(m) for m in store.memories(tag="ops")],
        ),
        (["session", "list"], [shapes.session_json(r) for r in store.sessions()]),
        (["artifact", "list"], [shapes.artifact_json(a) for a in store.artifacts()]),
        (["artifact", "show", "1"], shapes.artifact_json(store.artifact("1"))),
        (["kv", "get", "language"], shapes.entry_json(store.kv_get("language"))),
        (["working", "list"], [shapes.working_json(e) for e in store.working()]),
        (["episode", "list"], [shapes.episode_json(e) for e in store.episodes()]),
        (["scratchpad", "show", "-g", "team"], store.scratchpad(group="team")._asdict()),
        (["scratchpad", "show"], store.scratchpad()._asdict()),
        (["stats"], sized_apart(store.stats())),
        (["verify"], store.verify()),
    ]
    for args, from_api in cases:
        from_cli = cli.json(*args)
        assert (sized_apart(from_cli) if args == ["stats"] else from_cli) == from_api, args
    assert store.working() and store.episodes() and store.scratchpad(group="team").updated_at
    memory_id = store.memories()[0].id
    assert cli.json("memory", "show", memory_id) == shapes.memory_json(store.memory(memory_id))
    (turn,) = cli.json("session", "show", "s1")["turns"][:1]
    assert json.loads(store.session_export("s1").splitlines()[0]) == turn
    exported = cli.ok("session", "export", "s1", "--format", "openai").stdout
    assert exported == store.session_export("s1", format="openai")
    assert cli.ok("artifact", "read", "1").stdout_bytes == store.artifact_read("1").data


@pytest.mark.sqlite_only(
    "the twin is a copy of the data directory; on PostgreSQL both copies use one database "
    "(and recall counts accesses)"
)
def test_recall_matches_the_cli(filled, cli, home, tmp_path):
    """On two identical copies (recall counts what it returns as accessed)."""
    import shutil

    shutil.copytree(home, tmp_path / "copy")
    from_cli = cli.json("recall", "staging deploy", "--explain")
    with Store(tmp_path / "copy") as twin:
        hits = twin.recall("staging deploy", prefixed=True).hits  # the JSON an LLM reads
        from_api = [shapes.recall_hit_json(h, True, twin.config) for h in hits]
    assert from_cli and from_cli == from_api


def test_writes_give_the_cli_shapes(filled, cli):
    from_cli = cli.json("log", "-s", "s3", "a")
    (logged,) = filled.log("b", session="s3")
    from_api = shapes.turn_json(logged)
    assert set(from_api) == set(from_cli)
    assert {**from_api, "id": "", "content": "", "turn_index": 0} == {
        **from_cli,
        "id": "",
        "content": "",
        "turn_index": 0,
    }
    made = cli.json("remember", "cli memory", "--subject", "x", "--predicate", "y")
    remembered = shapes.remembered_json(filled.remember("api memory", subject="x", predicate="z"))
    assert set(made) == set(remembered)
    ended = shapes.session_ended_json(filled.session_end("s3"))
    assert set(ended) == set(cli.json("session", "end", "s1"))
    forgotten = shapes.forgotten_json(filled.forget(remembered["id"]))
    assert set(forgotten) == set(cli.json("memory", "forget", made["id"]))
    built = filled.context_build(session="s1", max_context=4000, manifest=True)
    manifest = cli.json("context", "build", "-s", "s1", "--max-context", "4000", "--manifest")
    assert shapes.manifest_json(built) == manifest
