"""Retention as seed 001 and 003 §7.4 define it, through the real CLI: what the user
stated lives until its ``expires_at``, re-stating or recalling a fact extends it, a
stated duration (a plan's date) is kept as given, and only SHORT_TERM memories the
user did not state decay. Time moves with SOLOQUEUE_NOW."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

import pytest
import typer
import typer.testing

from soloqueue_mem.cli import build_app
from soloqueue_mem.clock import iso
from tests.conftest import Cli

FIRST_NIGHT = datetime(2026, 11, 27, 3, tzinfo=UTC)
NIGHTS = 31  # one past the 30 days of a LONG_TERM fact


class Fact(NamedTuple):
    keyword: str  # a word of the stored content, asked as it is
    last_night: int | None  # the last night it is still there; None: every night
    recalled: bool  # asked every night (a recall renews it unless its expiry is fixed)


@pytest.fixture
def cli(monkeypatch) -> Cli:
    """The same in-process CLI, with the app converted to a command once instead of on
    every call (typer's test runner does it per call): the nightly loop makes ~280
    calls. Without typer's private hook this is only slower."""
    command = typer.main.get_command(build_app())
    monkeypatch.setattr(typer.testing, "_get_command", lambda app: command, raising=False)
    return Cli()


def at(monkeypatch, when: str | datetime) -> None:
    monkeypatch.setenv("SOLOQUEUE_NOW", when if isinstance(when, str) else iso(when))


def memory_hits(cli, query: str) -> list[str]:
    return [h["content"] for h in cli.json("recall", query) if h["kind"] == "memory"]


def shown(cli, memory_id: str) -> dict:
    return cli.json("memory", "show", memory_id)


REMEMBERED = [
    (Fact("postgresql", None, True), ["The production database runs on PostgreSQL 16"]),
    (Fact("keybindings", None, True), ["User prefers vim keybindings", "--type", "PREFERENCE"]),
    (
        Fact("force", None, True),
        ["Never force-push to the main branch", "--type", "RULE", "--duration", "permanent"],
    ),
    (Fact("kafka", 10, True), ["We plan to move billing to Kafka", "--duration", "10d"]),
    (Fact("noon", 3, True), ["The staging token rotates at noon", "--duration", "3d"]),
    (Fact("gull", 30, False), ["The office wifi network is called Gull"]),
    (  # an agent's own short note, not the user's: it decays
        Fact("runner", 1, False),
        [
            "The build cache is warm on runner r7",
            "--source",
            "agent",
            "--duration",
            "3d",
            "--importance",
            "0.3",
        ],
    ),  # fmt: skip
]
SAID = {  # what the user says in a logged session -> what extraction keeps, and how long
    "My editor is Helix.": (Fact("helix", None, True), "LONG_TERM"),
    "I prefer dark themes.": (Fact("themes", None, True), "PERMANENT"),
    "Never commit secrets to git.": (Fact("secrets", None, True), "PERMANENT"),
    "The staging cluster has 12 nodes.": (Fact("cluster", 30, False), "LONG_TERM"),
    # who the user is stays until a new value replaces it (extract._lasting)
    "I live in Lisbon.": (Fact("lisbon", None, False), "PERMANENT"),
}


def log_user_session(cli) -> None:
    turns = [{"role": "user", "content": text} for text in SAID]
    turns.append({"role": "assistant", "content": "Noted."})
    cli.ok("log", "--batch", "-s", "onboarding", input="\n".join(map(json.dumps, turns)))
    cli.ok("session", "end", "onboarding")


def test_thirty_nights_keep_what_the_user_stated_within_its_retention(cli, monkeypatch):
    ids = {fact.keyword: cli.json("remember", *args)["id"] for fact, args in REMEMBERED}
    log_user_session(cli)
    extracted = {m["content"].lower(): m for m in cli.json("memory", "list")}
    for fact, priority in SAID.values():  # seed 001: facts 30 days, the rest permanent
        [content] = [c for c in extracted if fact.keyword in c]
        assert extracted[content]["priority"] == priority
        ids[fact.keyword] = extracted[content]["id"]
    facts = [fact for fact, _ in REMEMBERED] + [fact for fact, _ in SAID.values()]

    for night in range(1, NIGHTS + 1):
        at(monkeypatch, FIRST_NIGHT + timedelta(days=night - 1))
        report = cli.json("consolidate")
        assert report["decay"] == {"archived": 0, "demoted": 1 if night == 1 else 0}, night
        listed = " | ".join(m["content"].lower() for m in cli.json("memory", "list"))
        for fact in facts:
            alive = fact.last_night is None or night <= fact.last_night
            assert (fact.keyword in listed) == alive, (night, fact)
            if fact.recalled:
                hits = [c.lower() for c in memory_hits(cli, fact.keyword)]
                assert any(fact.keyword in c for c in hits) == alive, (night, fact)

    last = FIRST_NIGHT + timedelta(days=NIGHTS - 1)
    for keyword in ("postgresql", "helix"):  # recalled nightly: 30 days from the last recall
        assert shown(cli, ids[keyword])["expires_at"] == iso(last + timedelta(days=30))
    for keyword in ("keybindings", "force", "themes", "secrets", "lisbon"):
        assert shown(cli, ids[keyword])["expires_at"] is None
    everything = " | ".join(m["content"].lower() for m in cli.json("memory", "list", "--all"))
    for gone in ("kafka", "noon", "gull", "cluster", "runner"):
        assert gone not in everything  # expired is deleted, not archived


def test_recalling_a_fact_extends_it_and_never_shortens_it(cli, monkeypatch):
    fact = cli.json("remember", "The CI runners live in eu-west-1")
    lesson = cli.json("remember", "pytest failed: missing fixture db", "--type", "ERROR")
    plan = cli.json("remember", "We plan to freeze deploys for the audit", "--duration", "10d")
    assert (fact["fixed_expiry"], lesson["fixed_expiry"], plan["fixed_expiry"]) == (
        False, False, True
    )  # fmt: skip
    assert fact["expires_at"] == "2026-12-26T08:00:00.000Z"

    at(monkeypatch, "2026-11-27T08:00:00Z")  # a day on: 30 days from now is later
    assert memory_hits(cli, "eu-west-1") == [fact["content"]]
    assert shown(cli, fact["id"])["expires_at"] == "2026-12-27T08:00:00.000Z"
    assert memory_hits(cli, "fixture") == [lesson["content"]]  # an ERROR's 7 days restart
    assert shown(cli, lesson["id"])["expires_at"] == "2026-12-04T08:00:00.000Z"
    assert memory_hits(cli, "audit") == [plan["content"]]  # a stated date does not move
    assert shown(cli, plan["id"])["expires_at"] == plan["expires_at"]

    cli.ok("memory", "edit", fact["id"], "--duration", "60d")  # longer than a recall gives
    assert shown(cli, fact["id"])["fixed_expiry"] is True
    memory_hits(cli, "eu-west-1")
    assert shown(cli, fact["id"])["expires_at"] == "2027-01-26T08:00:00.000Z"


def test_restating_a_fact_extends_it(cli, monkeypatch):
    first = cli.json("remember", "The CI runners live in eu-west-1")
    at(monkeypatch, "2026-12-16T08:00:00Z")
    again = cli.json("remember", "the CI runners live in eu-west-1.")
    assert again["action"] == "confirmed" and again["id"] == first["id"]
    assert again["expires_at"] == "2027-01-15T08:00:00.000Z"
    assert again["fixed_expiry"] is False
