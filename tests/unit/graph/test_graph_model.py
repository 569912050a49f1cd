"""The model path of the graph worker against a real chat-completions server on
loopback: segmentation, content and relation names from the model; retries with
exponential backoff; a failed segmentation sends the task to the tail and creates
nothing; failed content processing keeps the rules' result."""

from __future__ import annotations

import json

from soloqueue_mem.graph.params import Params
from soloqueue_mem.graph.steps import Steps
from soloqueue_mem.graph.worker import drain
from soloqueue_mem.lifecycle.llm import Llm
from tests.e2e.test_consolidate_llm import ChatServer
from tests.unit.graph.helpers import NOW, SCOPE, graph_db, rules_steps

MESSAGES = [{"role": "user", "content": "我养了一只猫叫咪咪。它每天都睡觉。"}]
PIECES = json.dumps(["我养了一只猫叫咪咪。", "咪咪每天都睡觉。"], ensure_ascii=False)


def content(text: str, phrase: str, keywords: list[str]) -> str:
    return json.dumps({"content": text, "phrase": phrase, "keywords": keywords}, ensure_ascii=False)


def model_steps(home, server: ChatServer, attempts: int, sleeps: list[float]) -> Steps:
    llm = Llm(f"{server.url}/chat/completions", "m", None, 2.0, attempts, 1.0, 30.0)
    return Steps(rules_steps(home).lexicon, llm, sleeps.append)


def test_the_model_segments_processes_and_names_relations(home):
    db = graph_db(home)
    db.enqueue(SCOPE, [{"role": "user", "content": "主人是小王。"}], NOW, 10)
    drain(db, rules_steps(home), Params())  # one focus node, made by the rules
    replies = [
        (200, PIECES),
        (200, content("我养了一只猫叫咪咪。", "养猫咪咪", ["猫", "咪咪"])),
        (200, content("咪咪每天都睡觉。", "咪咪睡觉", ["咪咪", "睡觉"])),
        (200, "属于"),
        (200, "涉及"),
    ]
    sleeps: list[float] = []
    with ChatServer(replies) as server:
        db.enqueue(SCOPE, MESSAGES, NOW, 10)
        report = drain(db, model_steps(home, server, 15, sleeps), Params())
    assert report["tasks"] == 1 and report["nodes"] == 2 and sleeps == []
    first, second = db.nodes_of(SCOPE)[1:]
    assert (first.content, first.phrase, first.keywords) == (
        "我养了一只猫叫咪咪。",
        "养猫咪咪",
        ["猫", "咪咪"],
    )
    assert second.content == "咪咪每天都睡觉。"  # 它 resolved by the model
    to_focus = {lk.to_id: lk.relation for lk in db.out_links(first.id)}
    assert to_focus[1] == "属于"
    assert {lk.to_id: lk.relation for lk in db.out_links(1)}[second.id] == "涉及"


def test_segmentation_retries_with_backoff_then_goes_to_the_tail_creating_nothing(home):
    db = graph_db(home)
    sleeps: list[float] = []
    with ChatServer([(500, "")] * 7) as server:
        db.enqueue(SCOPE, MESSAGES, NOW, 10)
        report = drain(db, model_steps(home, server, 7, sleeps), Params())
        assert len(server.requests) == 7
    assert sleeps == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0]  # doubling from 1 s, capped at 30 s
    assert report == {"tasks": 0, "nodes": 0, "requeued": 1, "compressed": 0, "deleted": 0}
    (task,) = db.pending()
    assert task.id == 2 and task.attempts == 1 and task.messages == MESSAGES
    assert db.nodes_of(SCOPE) == []


def test_failed_content_processing_keeps_the_rules_result_and_relation_is_left_out(home):
    db = graph_db(home)
    db.enqueue(SCOPE, [{"role": "user", "content": "主人是小王。"}], NOW, 10)
    drain(db, rules_steps(home), Params())
    replies = [(200, json.dumps(["咪咪是一只猫。"], ensure_ascii=False)), (200, "not json")]
    replies += [(200, "not json"), (200, ""), (500, "")]  # content and relation fail twice
    with ChatServer(replies) as server:
        db.enqueue(SCOPE, MESSAGES, NOW, 10)
        drain(db, model_steps(home, server, 2, []), Params())
    node = db.nodes_of(SCOPE)[-1]
    assert node.content == "咪咪是一只猫。" and node.phrase == "咪咪是一只猫"
    assert {lk.to_id: lk.relation for lk in db.out_links(node.id)}[1] is None
