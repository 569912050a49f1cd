"""export / import of the graph memory and the dense channel's vectors (dump
version 2), and import's write-time redaction."""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path

import pytest

from soloqueue_mem.graph import queue
from soloqueue_mem.graph.store import Scope, delete_node
from soloqueue_mem.memory import store
from soloqueue_mem.memory.model import Memory
from soloqueue_mem.semantic import dump as vectors
from tests.cli.test_graph import CONVERSATION, LOGIN, remember
from tests.cli.test_offload import write_config
from tests.conftest import second_root_is_sqlite, store_db, table_rows

MODEL = "test-model"


def export(cli, root: Path, *args: str) -> bytes:
    return cli.ok("--root", str(root), "export", *args).stdout_bytes


def embed(root: Path, kind: str, item_id: str, digest: str, values: tuple[float, ...]) -> None:
    """A vector linked to an item, as the dense channel stores them (no model needed)."""
    vector = struct.pack(f"<{len(values)}f", *values)
    cached = vectors.Cached(MODEL, digest, len(values), vector, "2026-11-26T08:00:00.000Z")
    link = vectors.Linked(MODEL, kind, item_id, "default", "default", digest)
    with store_db(root) as db:
        assert vectors.put_back_cached(db.conn, cached) in ("added", "existing")
        assert vectors.put_back_linked(db.conn, link) == "added"


def populate(cli, home: Path) -> dict[str, str]:
    """A graph with a dangling link and a queued task, a memory and a turn with
    vectors, and an orphan vector."""
    remember(cli, CONVERSATION)
    remember(cli, LOGIN)
    with store_db(home, "graph") as graph:
        with graph.write():
            delete_node(graph.conn, 5)  # the newest node: links into it dangle
        queue.enqueue(
            graph.conn, Scope("default", "default"), LOGIN, "2026-11-26T08:00:00.000Z", 10
        )
    memory = cli.json("remember", "The user's editor is helix")["id"]
    cli.ok("log", "-s", "s1", "--role", "user", "I deploy on Fridays")
    ((turn_id,),) = table_rows(home, "SELECT id FROM {turns}")
    embed(home, "memory", memory, "a" * 64, (0.6, 0.8))
    embed(home, "turn", str(turn_id), "b" * 64, (1.0, 0.0))
    embed(home, "episode", "gone", "c" * 64, (0.0, 1.0))  # an item that is not there
    return {"memory": memory}


def kinds_of(dump: bytes) -> list[str]:
    return [json.loads(line)["kind"] for line in dump.splitlines()]


@second_root_is_sqlite
@pytest.mark.usefixtures("store")
def test_graph_and_vectors_round_trip_byte_identical(cli, home, tmp_path):
    populate(cli, home)
    first = export(cli, home)
    header = json.loads(first.splitlines()[0])
    assert header["version"] == 3
    kinds = kinds_of(first)
    assert kinds.count("graph_node") == 4 and kinds.count("graph_focus") == 1
    assert kinds.count("graph_task") == 1
    assert kinds.count("embedding") == 3 and kinds.count("embedded_item") == 3
    records = [json.loads(line) for line in first.splitlines()]
    turn_link = next(r for r in records if r.get("kind") == "embedded_item" and r["session"])
    assert (turn_link["item_id"], turn_link["turn_index"]) == (None, 0)  # named, not a rowid
    dangling = [k for r in records if r["kind"] == "graph_node" for k in r["links"]]
    assert any(link["to_id"] == 5 for link in dangling)
    dump = tmp_path / "dump.jsonl"
    dump.write_bytes(first)
    other = tmp_path / "other" / ".soloqueue"
    report = cli.json("--root", str(other), "import", str(dump))
    assert report["conflicts"] == [] and report["redacted"] == {}
    assert report["added"]["graph_node"] == 4 and report["added"]["embedded_item"] == 3
    assert export(cli, other) == first
    # the graph works there, and a new node does not take the dangling link's id
    assert cli.json("--root", str(other), "graph", "recall", "--keywords", "JSONB")["results"]
    assert cli.json("--root", str(other), "graph", "stats")["graphs"][0]["dangling_links"] > 0
    remember_there = cli.json(
        "--root", str(other), "graph", "remember", "--sync", input=json.dumps(LOGIN)
    )
    assert remember_there["processed"]["tasks"] == 2  # the imported task ran too
    ((newer,),) = table_rows(
        other, "SELECT MIN(node_id) FROM graph_nodes WHERE node_id > 4", name="graph"
    )
    assert newer > 5
    # importing again changes nothing
    again = cli.json("import", str(dump))
    assert again["added"] == {} and again["conflicts"] == []
    assert again["existing"]["graph_node"] == 4 and again["existing"]["embedding"] == 3


@pytest.mark.usefixtures("store")
def test_a_scoped_export_takes_the_vectors_its_items_use(cli, home, tmp_path):
    populate(cli, home)
    cli.ok("log", "-s", "s9", "-g", "work", "--role", "user", "elsewhere")
    scoped = export(cli, home, "--group", "work")
    assert "embedding" not in kinds_of(scoped) and "graph_node" not in kinds_of(scoped)
    whole = [json.loads(line) for line in export(cli, home, "--group", "default").splitlines()]
    assert {r["content_hash"][0] for r in whole if r["kind"] == "embedding"} == {"a", "b", "c"}


@second_root_is_sqlite
@pytest.mark.usefixtures("store")
def test_conflicting_items_bring_no_links_or_vectors_of_theirs(cli, home, tmp_path):
    ids = populate(cli, home)
    dump = tmp_path / "dump.jsonl"
    dump.write_bytes(export(cli, home))
    other = tmp_path / "other" / ".soloqueue"
    cli.ok("--root", str(other), "init")
    cli.ok("--root", str(other), "graph", "remember", "--sync", input=json.dumps(LOGIN))
    records = [json.loads(line) for line in dump.read_bytes().splitlines()]
    (memory,) = [r for r in records if r["kind"] == "memory"]
    changed = {k: v for k, v in memory.items() if k != "kind"} | {"content": "something else"}
    with store_db(other) as db:
        assert store.put_back(db.conn, Memory(**changed)) == "added"
    links_before = table_rows(other, "SELECT * FROM graph_links ORDER BY 1, 2", name="graph")
    report = cli.json("--root", str(other), "import", str(dump))
    reasons = {(c["kind"], c["key"], c["reason"]) for c in report["conflicts"]}
    assert ("memory", ids["memory"], "conflict") in reasons  # another text under its id
    assert ("graph_node", "1", "conflict") in reasons  # node 1 there is another node
    assert ("embedded_item", f"{MODEL}/memory/{ids['memory']}", "item-conflict") in reasons
    links = table_rows(other, "SELECT * FROM graph_links WHERE from_id = 1", name="graph")
    assert links == [link for link in links_before if link[0] == 1]
    held = table_rows(
        other, "SELECT content_hash FROM embedded_items WHERE item_id = ?", ids["memory"]
    )
    assert held == []  # the vector is of the dump's text, not of the memory there


@second_root_is_sqlite
@pytest.mark.usefixtures("store")
def test_bad_graph_or_vector_records_are_refused_whole(cli, home, tmp_path):
    populate(cli, home)
    records = [json.loads(line) for line in export(cli, home).splitlines()]
    for kind, change, message in (
        ("embedding", {"dim": 3}, "vector is not 3 float32 values"),
        ("embedding", {"vector": "***"}, "vector is not base64"),
        ("embedded_item", {"item_id": "x"}, "a turn is named by session and turn_index"),
        ("graph_node", {"links": [{"to_id": 2, "strength": 2, "relation": None}]}, "strength"),
        ("graph_focus", {"node_ids": []}, "a focus list names one or more node ids"),
    ):
        bad = [dict(r) for r in records]
        target = next(
            r for r in bad if r["kind"] == kind and (kind != "embedded_item" or r["session"])
        )
        target.update(change)
        path = tmp_path / f"bad-{kind}.jsonl"
        path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in bad))
        other = tmp_path / f"other-{kind}"
        result = cli("--root", str(other), "import", str(path))
        assert result.exit_code == 65, result.stderr
        assert message in result.stderr and not other.exists()


@second_root_is_sqlite
def test_import_redacts_what_it_writes_when_redact_is_on(cli, home, tmp_path):
    write_config(home, "redact = false\n")  # a store whose dump holds the secrets
    secret = "sk-proj-" + "A1b2C3d4" * 5
    cli.ok("log", "-s", "s1", "--role", "user", f"my key is {secret}")
    memory = cli.json("remember", f"the deploy key is {secret}, the proxy's CORP-0badf00d")["id"]
    cli.ok("kv", "set", "deploy", json.dumps({"api_key": "hunter2hunter2", "note": secret}))
    remember(cli, [{"role": "user", "content": f"我们用 {secret} 调用 OpenAI 接口。"}])
    embed(home, "memory", memory, "d" * 64, (1.0, 0.0))
    output = {"tool_use_id": "c1", "content": "x" * 3000 + " " + secret, "is_error": False}
    result = {"role": "tool", "content": "", "tool_results": [output]}
    cli.ok("log", "-s", "s1", input=json.dumps(result))  # offloaded: a blob
    notes = tmp_path / "notes.txt"
    notes.write_text(f"deploy with {secret}\n")
    cli.ok("attach", str(notes), "--description", "deploy notes")
    photo = tmp_path / "cat.jpg"
    photo.write_bytes(b"\xff\xd8 a cat")
    cli.ok("attach", str(photo), "--description", "a cat")  # binary: as it is
    dump = tmp_path / "dump.jsonl"
    dump.write_bytes(export(cli, home, "--with-blobs"))
    assert secret.encode() in base64.b64decode(
        next(json.loads(line)["data"] for line in dump.read_bytes().splitlines()
             if b'"kind":"blob"' in line)
    )  # fmt: skip
    other = tmp_path / "other" / ".soloqueue"
    write_config(other, 'redact = true\n[redact_patterns]\n"corp-token" = "CORP-[0-9a-f]{8}"\n')
    report = cli.json("--root", str(other), "import", str(dump))
    assert report["conflicts"] == []
    assert report["redacted"]["memory"] == 1
    assert report["redacted"]["turn"] == 2  # the offloaded output's preview too
    assert report["redacted"]["kv"] == 1 and report["redacted"]["graph_node"] >= 1
    assert report["redacted"]["embedded_item"] == 1  # a vector of the secret's text
    assert report["redacted"]["blob"] == 2 and report["redacted"]["artifact"] == 2
    assert report["redacted"]["attachment"] == 1
    assert report["added"]["artifact"] == 3
    for path in other.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
            assert b"hunter2hunter2" not in path.read_bytes(), path
            assert b"CORP-0badf00d" not in path.read_bytes(), path  # redact_patterns
    again = cli.json("--root", str(other), "import", str(dump))  # still idempotent
    assert again["added"] == {} and again["conflicts"] == []
    hits = cli.json("--root", str(other), "recall", "deploy key")
    assert any("[REDACTED:openai-key]" in hit["content"] for hit in hits)
    verified = cli.json("--root", str(other), "verify", "--full")
    assert verified["summary"]["error"] == 0, verified
    openai = cli.json("--root", str(other), "session", "export", "s1", "--as", "openai")
    artifact_id = openai[-1]["content"].split("已保存为制品: ")[1].split("。")[0]
    read = cli.ok("--root", str(other), "artifact", "read", artifact_id).stdout
    assert read == "x" * 3000 + " [REDACTED:openai-key]"


@second_root_is_sqlite
def test_a_version_1_dump_is_still_read(cli, home, tmp_path):
    cli.ok("remember", "The user's editor is helix")
    lines = export(cli, home).splitlines()
    header = json.loads(lines[0])
    assert header["version"] == 3
    old = tmp_path / "v1.jsonl"  # an old dump: no end record
    old.write_bytes(b"\n".join([json.dumps({**header, "version": 1}).encode(), *lines[1:-1]]))
    other = tmp_path / "other" / ".soloqueue"
    result = cli("--root", str(other), "--format", "json", "import", str(old))
    report = json.loads(result.stdout)
    assert report["added"] == {"memory": 1} and report["conflicts"] == []
    assert report["complete"] is None and "whether it is whole cannot be checked" in result.stderr
    assert not (other / "graph.db").exists()  # no graph records: no graph.db
