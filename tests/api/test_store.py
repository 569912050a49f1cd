"""The Store API's contract: each method on a real data directory, and its errors."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime

import pytest

from soloqueue_mem import Store
from soloqueue_mem.config import Config
from soloqueue_mem.errors import BadInput, InvalidId, NotFound, SoloqueueError, UsageError
from tests.conftest import store_db


@pytest.fixture
def store(home):
    with Store() as opened:
        yield opened


def test_importing_the_package_does_not_import_the_api():
    probe = "import sys, soloqueue_mem; print('soloqueue_mem.api.store' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, check=True)
    assert out.stdout.strip() == b"False"


def test_root_config_and_clock_are_the_callers(tmp_path, store_backend):
    pinned = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    with Store(
        tmp_path / "elsewhere", config=Config(offload_threshold=10), clock=lambda: pinned
    ) as s:
        assert s.root == tmp_path / "elsewhere"
        assert s.config.offload_threshold == 10
        (turn,) = s.log("hello", session="s1")
        assert turn.timestamp.startswith("2030-01-02T03:04:05")
    if store_backend == "sqlite":  # on PostgreSQL the turn is in the database the URL names
        assert (tmp_path / "elsewhere" / "memory.db").is_file()


def test_reading_an_absent_store_creates_nothing_and_finds_nothing(store, home):
    assert store.memories() == []
    assert store.sessions() == []
    assert store.artifacts() == []
    assert store.trace("anything") == []
    assert store.recall("anything").hits == []
    assert store.stats()["exists"] is False
    assert store.verify()["exit_code"] == 0
    assert store.gc()["phase2"] == {"ran": False}
    assert not home.exists()
    for call in (
        lambda: store.memory("1234"),
        lambda: store.forget("1234"),
        lambda: store.artifact("1"),
        lambda: store.artifact_read("1"),
        lambda: store.kv_get("k"),
        lambda: store.session_end("s1"),
        lambda: store.session_export("s1"),
    ):
        with pytest.raises(NotFound) as caught:
            call()
        assert caught.value.exit_code == 3
    assert not home.exists()


def test_log_then_trace_and_sessions(store):
    (first,) = store.log("the deploy failed on staging", session="s1")
    second, third = store.log(
        [
            {"role": "assistant", "content": "checking the staging logs"},
            {"role": "user", "content": "thanks"},
        ],
        session="s1",
    )
    assert (first.turn_index, second.turn_index, third.turn_index) == (0, 1, 2)
    hits = store.trace("staging", session="s1")
    assert {h.turn.content for h in hits} == {first.content, second.content}
    assert store.trace("staging", role="user")[0].turn.content == first.content
    (row,) = store.sessions()
    assert (row.session, row.turn_count) == ("s1", 3)


def test_log_rejects_a_bad_item_and_stores_nothing(store, home):
    with pytest.raises(BadInput, match="item 2"):
        store.log([{"role": "user", "content": "ok"}, {"content": "no role"}], session="s1")
    assert store.sessions() == []
    with pytest.raises(InvalidId):
        store.log("hi", session="../escape")


def test_remember_recall_memories_forget(store):
    made = store.remember("User prefers vim", type="PREFERENCE", subject="user", predicate="editor")
    assert made.action == "created"
    again = store.remember(
        "User prefers vim", type="PREFERENCE", subject="user", predicate="editor"
    )
    assert again.action == "confirmed" and again.memory.id == made.memory.id
    changed = store.remember(
        "User prefers helix", type="PREFERENCE", subject="user", predicate="editor"
    )
    assert changed.action == "superseded"
    result = store.recall("which editor does the user prefer", type="PREFERENCE")
    assert [h.candidate.memory.id for h in result.hits] == [changed.memory.id]
    assert [m.id for m in store.memories()] == [changed.memory.id]
    assert len(store.memories(include_inactive=True)) == 2
    assert store.memory(changed.memory.id[:8]).content == "User prefers helix"
    gone = store.forget(changed.memory.id)
    assert set(gone.ids) == {made.memory.id, changed.memory.id}
    assert store.memories(include_inactive=True) == []


def test_remember_with_an_event_id_is_safe_to_retry(store):
    first = store.remember("User lives in Lisbon", event_id="turn-7")
    again = store.remember("User lives in Lisbon", event_id="turn-7")
    assert (first.duplicate, again.duplicate) == (False, True)
    assert again.memory.id == first.memory.id
    assert again.memory.confidence == first.memory.confidence
    with pytest.raises(BadInput):
        store.remember("x", event_id="")


def test_remember_checks_before_writing(store, home):
    with pytest.raises(BadInput):
        store.remember("x", type="NOT_A_TYPE")
    with pytest.raises(BadInput):
        store.remember("x", importance=2.0)
    assert not home.exists()
    with pytest.raises(UsageError):
        store.forget()


def test_artifacts_save_read_ranges_list(store):
    payload = bytes(range(256)) * 40
    saved = store.artifact_save(payload, title="bytes", tags=["user:persistent"])
    assert saved.new_blob
    ref = str(saved.artifact.id)
    assert store.artifact_read(ref).data == payload
    part = store.artifact_read(saved.artifact.content_hash, offset=1000, length=300)
    assert part.data == payload[1000:1300] and part.offset == 1000 and not part.complete
    tail = store.artifact_read(ref, offset=len(payload) - 5, length=100)
    assert tail.data == payload[-5:] and tail.complete
    assert store.artifact_read(ref, offset=len(payload) + 10).data == b""
    assert [a.id for a in store.artifacts(tag="user:persistent")] == [saved.artifact.id]
    assert store.artifact(ref).title == "bytes"
    with pytest.raises(UsageError):
        store.artifact_read(ref, offset=-1)
    with pytest.raises(NotFound):
        store.artifact("999")


def test_sessions_end_export_compress_and_context(store):
    store.log("I always use pytest for tests", session="s1")
    store.log("ok, pytest it is", role="assistant", session="s1")
    store.kv_set("language", "zh")
    exported = store.session_export("s1", format="openai")
    assert '"ok, pytest it is"' in exported
    assert store.session_export("s1").count("\n") == 2
    assert "pytest" in store.session_export("s1", format="md")
    with pytest.raises(UsageError):
        store.session_export("s1", format="xml")
    built = store.context_build(session="s1", max_context=8000, with_memory=True, query="pytest")
    messages = built.built.messages
    assert messages[0]["role"] == "system" and "language: zh" in messages[0]["content"]
    assert messages[-1]["content"] == "ok, pytest it is"
    given = store.context_build(messages=[{"role": "user", "content": "hi"}], model="gpt-4o")
    assert given.built.messages[-1] == {"role": "user", "content": "hi"}
    with pytest.raises(UsageError):
        store.context_build(max_context=1000)
    compressed = store.context_compress("s1", keep=1)
    assert compressed.messages[-1]["content"] == "ok, pytest it is"
    ended = store.session_end("s1")
    assert (ended.session, ended.ended_at[:4]) == ("s1", "2026")


def test_kv_values_round_trip(store):
    entry = store.kv_set("limits", {"tokens": 700, "tags": ["a"]}, agent="bot")
    assert store.kv_get("limits", agent="bot").value == {"tokens": 700, "tags": ["a"]}
    assert entry.scope == ("default", "bot")
    with pytest.raises(NotFound):
        store.kv_get("limits")
    with pytest.raises(InvalidId):
        store.kv_set("bad key", 1)


def test_maintenance_reports(store):
    store.log("a turn", session="s1")
    assert store.consolidate(dry_run=True)["dry_run"] is True
    assert store.gc(dry_run=True, deep=True)["phase2"]["ran"] is True
    assert store.verify()["exit_code"] == 0
    stats = store.stats()
    assert stats["exists"] is True and stats["counts"]["turns"] == 1


def test_every_error_is_a_soloqueue_error_with_an_exit_code(store):
    with pytest.raises(SoloqueueError) as caught:
        store.trace("x", limit=0)
    assert caught.value.exit_code == 65


def test_close_then_reuse(store):
    store.log("one", session="s1")
    store.close()
    store.log("two", session="s1")
    assert len(store.trace("one two")) == 2


def test_one_store_serves_several_threads(store):
    import threading

    store.log("数据库连接超时 database timeout", session="s1")
    assert store.trace("数据库")  # the lexicon is opened in this thread
    found: list[int] = []

    def search() -> None:
        found.append(len(store.trace("数据库 timeout")) + len(store.recall("数据库").hits))

    workers = [threading.Thread(target=search) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert found == [found[0]] * 4 and found[0] >= 2


def test_seed_004_working_promote_and_query(store):
    assert store.working_add("ok", group="g").dropped  # the entry filter drops acknowledgements
    added = store.working_add("the user is comparing Postgres and SQLite today", group="g")
    assert added.entry is not None
    assert store.working(group="g") == [added.entry] and store.working(group="h") == []
    assert store.working_clear(group="g") == 1 and store.working(group="g") == []
    added = store.working_add("the user is comparing Postgres and SQLite today", group="g")
    text = "We chose SQLite for the embedded store. " * 30
    promoted = store.promote(text, group="g")
    assert promoted.chunks == len(promoted.stored) > 1 and promoted.existing == 0
    assert store.promote(text, group="g").existing == promoted.chunks
    answer = store.query("the embedded store in SQLite", group="g").as_json()
    sources = [r["source"] for r in answer["results"]]
    assert sources[0] == "hot" and "cold" in sources and answer["cold_search"] == "lexical"
    assert store.query("anything", group="other").results == []
    with pytest.raises(BadInput):
        store.promote("   ")


GRAPH_TALK = [
    {"role": "user", "content": "我们决定用 PostgreSQL 做用户系统的数据库。"},
    {"role": "assistant", "content": "We should deploy PostgreSQL on Kubernetes next week."},
]


def test_graph_remember_queues_then_work_recall_and_focus(store, home):
    from soloqueue_mem.graph.recall import as_text

    assert store.graph_recall("postgresql").found == []  # no graph.db: nothing, nothing made
    assert not (home / "graph.db").exists()
    queued = store.graph_remember(GRAPH_TALK, agent="alice")
    assert queued["task_id"] == "1" and "processed" not in queued
    assert store.graph_focus(agent="alice") == []  # queued, not yet processed
    assert store.graph_work()["tasks"] == 1
    focus = store.graph_focus(agent="alice")
    assert len(focus) == 2
    found = store.graph_recall(["PostgreSQL", "kubernetes"], agent="alice")
    assert as_text(found, store.config.language).startswith("[记忆] ")
    assert {f.node.content for f in found.found} == {m["content"] for m in GRAPH_TALK}
    assert store.graph_focus(agent="alice") == focus  # recall never changes the focus
    assert store.graph_recall("postgresql", agent="bob").found == []  # one graph per agent


def test_graph_remember_sync_and_its_errors(store):
    done = store.graph_remember(GRAPH_TALK[:1], sync=True)
    assert done["processed"]["tasks"] == 1
    assert len(store.graph_recall("PostgreSQL").found) == 1
    with pytest.raises(BadInput):
        store.graph_remember([{"role": "user", "content": "  "}])
    with pytest.raises(BadInput):
        store.graph_remember([{"content": "no role"}])
    with pytest.raises(UsageError):
        store.graph_recall(" , ")
    with pytest.raises(InvalidId):
        store.graph_recall("x", agent="../x")


def test_export_writes_the_graph_memory_too(store, tmp_path):
    """graph.db's nodes are in Store.export's dump, as in the CLI's ``export``, and a
    dump given as an open binary file (the CLI's spooled stdin) imports them back."""
    import io
    import json

    store.graph_remember(GRAPH_TALK[:1], sync=True)
    out = io.StringIO()
    store.export(out)
    kinds = [json.loads(line).get("kind") for line in out.getvalue().splitlines()]
    assert kinds.count("graph_node") == 1
    with Store(tmp_path / "copy") as copy:
        report = copy.import_dump(io.BytesIO(out.getvalue().encode()))
        again = io.StringIO()
        copy.export(again)
    assert report["complete"] is True
    assert again.getvalue().splitlines()[1:] == out.getvalue().splitlines()[1:]


def test_episodes_list_show_and_search(store):
    store.log("我们决定用 PostgreSQL 做用户系统的数据库。", session="s1")
    (episode_id,) = store.session_end("s1").episodes
    assert [e.id for e in store.episodes(session="s1")] == [episode_id]
    assert store.episodes(session="s2") == []
    assert store.episode(episode_id[:8]).id == episode_id
    assert [e.id for e in store.search_episodes("PostgreSQL", group="default")] == [episode_id]
    assert store.search_episodes("Kubernetes") == []
    with pytest.raises(InvalidId):
        store.episodes(agent="not an id")


def test_context_compress_queues_the_compressed_turns_for_the_graph_when_set(tmp_path):
    from soloqueue_mem.graph import queue

    with Store(tmp_path / "s", config=Config(context_compress_feeds_graph=True)) as s:
        s.log("We deploy the billing service with Helm charts", session="s1")
        s.log("Helm it is", role="assistant", session="s1")
        s.log("thanks", session="s1")
        assert s.context_compress("s1", keep=1).fresh_records
        s.context_compress("s1", keep=1)  # nothing new: nothing queued again
    with store_db(tmp_path / "s", "graph") as db:
        (task,) = queue.pending(db.conn)
    assert [m["content"] for m in task.messages] == [
        "We deploy the billing service with Helm charts",
        "Helm it is",
    ]


def test_memories_have_the_cli_s_update_history_restore_and_plain_hit_text(store):
    first = store.remember("Deploys go out on Fridays", subject="team", predicate="deploy-day")
    later = store.remember("Deploys go out on Tuesdays", subject="team", predicate="deploy-day")
    assert later.action == "superseded"
    fixed = store.update(
        later.memory.id, content="Deploys go out on Tuesdays at 10:00", tags=["ops"]
    )
    assert (fixed.content, fixed.tags) == ("Deploys go out on Tuesdays at 10:00", ["ops"])
    versions = store.history(fixed.id)
    assert [m.id for m in versions] == [first.memory.id, fixed.id]
    (hit,) = store.recall("when do deploys go out", limit=1).hits
    assert hit.text == "Deploys go out on Tuesdays at 10:00"  # the prefix is the LLM's only
    assert (
        store.recall("when do deploys go out", limit=1, prefixed=True).hits[0].text.startswith("[")
    )
    with pytest.raises(NotFound):
        store.restore("0" * 32)
    with pytest.raises(UsageError):
        store.update(fixed.id)


def test_add_logs_extracts_and_says_what_changed(store):
    said = [
        {"role": "user", "content": "Our database is PostgreSQL 16."},
        {"role": "assistant", "content": "Noted."},
    ]
    first = store.add(said, group="shop")
    (added,) = first.added
    assert (added.group, added.predicate) == ("shop", "database")
    assert not first.confirmed and not first.superseded
    again = store.add(said, group="shop")
    assert [m.id for m in again.confirmed] == [added.id] and not again.added
    assert again.session != first.session
    moved = store.add([{"role": "user", "content": "Our database is MySQL 8."}], group="shop")
    (new,) = moved.superseded
    assert "MySQL 8" in new.content and moved.replaced == [added.id]


def test_scratchpad_template_then_set_redacted_and_checked(store, home):
    assert "当前项目" in store.scratchpad().content and not home.exists()
    pad = store.scratchpad_set("## 当前项目\nkey sk-abcdefghijklmnopqrstuvwxyz0123456789\n")
    assert "sk-abcdefghijklmnopqrstuvwxyz0123456789" not in pad.content
    assert store.scratchpad().content == pad.content
    assert store.scratchpad(agent="other").content != pad.content
    with pytest.raises(BadInput):
        store.scratchpad_set("x" * 2001)


def test_attach_redacts_the_content_it_stores(store):
    from io import BytesIO

    from soloqueue_mem.memory.attach import NewAttachment

    secret = "sk-abcdefghijklmnopqrstuvwxyz0123456789"
    new = NewAttachment("notes.txt", "default", "default", description="key " + secret)
    row = store.attach(BytesIO(f"deploy key {secret}\n".encode()), new)
    stored = store.artifact_read(str(row.artifact_id)).data
    assert secret.encode() not in stored and b"[REDACTED:" in stored
    assert secret not in row.description


def test_a_plan_moved_to_another_day_leaves_the_day_it_had_stale(home):
    """A remembered move of a plan ("推迟到 12/22", the day it had named beside it)
    replaces 12/18: the turn that said 12/18 comes back below it, marked by it."""
    moments = iter([datetime(2026, 11, 20, 9, tzinfo=UTC), datetime(2026, 11, 27, 9, tzinfo=UTC)])
    now = next(moments)
    with Store(clock=lambda: now) as store:
        store.log("年会定在 12/18，在南山那家酒店办。", session="s1")
        now = next(moments)
        moved = store.remember("酒店那边说 12/18 已经订满了，年会被推迟到 12/22").memory
        hits = [hit.candidate for hit in store.recall("年会是哪天办？").hits]
    assert hits[0].memory is not None and hits[0].memory.id == moved.id
    (said,) = [c for c in hits if c.content.startswith("年会定在 12/18")]
    assert said.superseded_by == moved.id
