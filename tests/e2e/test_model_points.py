"""The model at each point the design puts one (seeds 001 and 003), against a fake
chat-completions server on loopback: session end (memories with an update hint, the
episode summary, the scratchpad rewrite), the dedup judgment of a cluster, the identity
compile and the persona of promoted traits. Each request's prompt is checked, and each
answer is used; a malformed, slow or refused model leaves the rules' result and
loses no turn."""

from __future__ import annotations

import json
import socket

import pytest

from tests.e2e.test_consolidate_llm import (  # noqa: F401 - model_env: a fixture
    USER_TURN,
    ChatServer,
    model_env,
    queue_rows,
)

with_model = pytest.mark.usefixtures("model_env")

TURN = "The nightly report job now runs on the analytics host every day at 06:00."
OLD_FACT = "The nightly report job runs on the batch host"
UPDATE = {
    "type": "FACT",
    "content": "The nightly report job runs on the analytics host at 06:00",
    "is_update": True,
    "update_hint": "where the nightly report job runs",
}
SUMMARY = "The user moved the nightly report job to the analytics host."
PAD = "## 当前项目\n- reports\n\n## 近期进展\n- moved the report job\n"


def prompts(server: ChatServer) -> list[str]:
    return [request["messages"][0]["content"] for request in server.requests]


@with_model
def test_session_end_asks_the_model_for_memories_summary_and_scratchpad(cli, home, monkeypatch):
    cli.ok("remember", OLD_FACT)
    cli.ok("log", "-s", "s1", "--role", "user", TURN)
    replies = [(200, json.dumps([UPDATE])), (200, SUMMARY), (200, PAD)]
    with ChatServer(replies) as server:
        monkeypatch.setenv("SOLOQUEUE_LLM_URL", server.url)
        cli.ok("session", "end", "s1")
    extraction, summary, scratchpad = prompts(server)
    assert TURN in extraction and '"update_hint"' in extraction
    assert TURN in summary
    assert "## 近期进展" in scratchpad and SUMMARY in scratchpad  # the pad and the episode
    assert {r["model"] for r in server.requests} == {"test-model"}
    current = {m["content"]: m for m in cli.json("memory", "list")}
    assert OLD_FACT not in current  # superseded through the hint, though it had no key
    assert current[UPDATE["content"]]["source"] == "llm"
    assert cli.json("episode", "list")[0]["summary"] == SUMMARY
    assert cli.json("scratchpad", "show")["content"] == PAD


def stamps(folder) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*.md")}


def refused_url() -> str:
    with socket.socket() as probe:  # a port nothing listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@with_model
@pytest.mark.parametrize("failure", ["malformed", "slow", "refused"])
def test_a_failing_model_leaves_the_rules_result_and_loses_no_turn(cli, home, monkeypatch, failure):
    cli.ok("log", "-s", "s1", "--role", "user", USER_TURN)
    replies = {"malformed": (200, "sure! {not json"), "slow": (200, None)}
    with ChatServer([replies.get(failure, (200, "NONE"))] * 3) as server:
        url = refused_url() if failure == "refused" else server.url
        monkeypatch.setenv("SOLOQUEUE_LLM_URL", url)
        cli.ok("session", "end", "s1")
    # The first point (extraction) tried llm_attempts times; the model is then taken
    # to be away for the rest of the run.
    assert len(server.requests) == (0 if failure == "refused" else 3)
    assert any("/srv/app" in m["content"] for m in cli.json("memory", "list"))  # the rules'
    assert "/srv/app" in cli.json("episode", "list")[0]["summary"]  # the rules' summary
    assert "## 近期进展" in cli.json("scratchpad", "show")["content"]  # the rules' line
    assert queue_rows(home) == [(0, "pending", 1)]  # the turn waits for the model


SOUL = "# Soul\nI am Ada, a careful assistant. I never guess.\n"
COMPILED_SOUL = "- Ada: careful, never guesses\n"
PERSONA = "- Wants answers in Chinese, short.\n"


@with_model
def test_consolidate_asks_for_the_dedup_judgment_the_persona_and_the_identity(
    cli, home, monkeypatch
):
    near = "The staging cluster runs Kubernetes 1.29 with three worker nodes in eu-west"
    cli.ok("remember", near, "--importance", "0.9")  # the rules' best of the cluster
    cli.ok("remember", near + " region")
    for _ in range(2):  # said twice: a trait
        cli.ok("remember", "以后回答都用中文", "--type", "RULE", "--subject", "user")
    (home / "identity").mkdir(mode=0o700)
    (home / "identity" / "SOUL.md").write_text(SOUL)
    replies = [
        (200, json.dumps({"best": 2, "duplicates": [1]})),
        (200, PERSONA),
        (200, COMPILED_SOUL),
    ]
    with ChatServer(replies) as server:
        monkeypatch.setenv("SOLOQUEUE_LLM_URL", server.url)
        report = cli.json("consolidate")
    judged, persona, soul, *rest = prompts(server)
    assert f"1. {near}\n2. {near} region" in judged
    assert "以后回答都用中文" in persona
    assert "I am Ada" in soul
    assert report["model"]["points"] == {"dedup": 1, "persona": 1, "identity": 1 + len(rest)}
    kept = [m["content"] for m in cli.json("memory", "list") if near in m["content"]]
    assert kept == [near + " region"]  # the model's pick, not the rules'
    custom = (home / "identity" / "personas" / "user_custom.md").read_text()
    assert custom.endswith(PERSONA)
    assert (home / "identity" / "compiled" / "SOUL.md").read_text() == COMPILED_SOUL.strip()
    written = stamps(home / "identity")
    with ChatServer([]) as server:  # nothing changed: no file rewritten, nothing asked
        monkeypatch.setenv("SOLOQUEUE_LLM_URL", server.url)
        cli.json("consolidate")
    assert prompts(server) == []
    assert stamps(home / "identity") == written


def test_without_a_model_the_traits_are_promoted_by_rule(cli, home):
    for _ in range(2):
        cli.ok("remember", "Prefers tabs over spaces", "--type", "PREFERENCE", "--subject", "user")
    cli.ok("remember", "Likes green tea", "--type", "PREFERENCE", "--subject", "user")  # once
    cli.ok("consolidate")
    custom = (home / "identity" / "personas" / "user_custom.md").read_text()
    assert "- Prefers tabs over spaces\n" in custom and "green tea" not in custom
