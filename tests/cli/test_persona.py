"""`recall --persona NAME`: a persona file the user writes (identity/personas/NAME.md,
front matter `favours: SKILL, ERROR`) puts those memory types first among hits that
hold as much of the query; it never lifts one that holds less, and without the option
recall is unchanged (seed 003 §5.5)."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import run_process, second_root_is_sqlite

TECH = "---\nfavours: SKILL, ERROR\n---\nAnswers as a senior engineer.\n"


def remember(cli, text: str, type_: str, importance: str) -> None:
    cli.ok("remember", text, "--type", type_, "--importance", importance)


@pytest.fixture
def memories(cli, store):
    remember(cli, "The deploy script reads the cache settings from staging", "FACT", "0.9")
    remember(cli, "Deploy fails when the cache is cold: warm it first", "ERROR", "0.3")
    remember(cli, "Deploy the cache warmer before the deploy window", "SKILL", "0.2")
    remember(cli, "The nightly deploy uses the blue cluster", "SKILL", "0.9")
    return store


def contents(cli, *args: str) -> list[str]:
    return [h["content"] for h in cli.json("recall", "deploy cache", *args)]


def persona(home, name: str, text: str) -> None:
    folder = home / "identity" / "personas"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(text, encoding="utf-8")


@second_root_is_sqlite
def test_default_recall_is_the_same_with_persona_files_present(cli, memories, tmp_path):
    twin = tmp_path / "twin"
    shutil.copytree(memories, twin)  # recalling counts access: each store is asked once
    persona(twin, "tech_expert", TECH)
    persona(twin, "user_custom", "- prefers short answers\n")
    asked = ("--format", "json", "recall", "deploy cache", "--explain")
    assert cli.ok("--root", str(twin), *asked).stdout == cli.ok(*asked).stdout


def test_a_persona_puts_its_types_first_among_equal_matches_only(cli, memories):
    plain = contents(cli)  # on SQLite the important FACT leads; PostgreSQL's ts_rank differs
    persona(memories, "tech_expert", TECH)
    favoured = contents(cli, "--persona", "tech_expert")
    assert sorted(favoured) == sorted(plain)  # the order changes, never what is found
    assert set(favoured[:2]) == {
        "Deploy fails when the cache is cold: warm it first",
        "Deploy the cache warmer before the deploy window",
    }
    assert favoured[2] == "The deploy script reads the cache settings from staging"
    # holding one of the two words, the SKILL stays below every hit holding both
    assert favoured[3] == "The nightly deploy uses the blue cluster"
    assert sorted(favoured) == sorted(plain)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "unknown persona 'tech_expert'"),
        ("Answers as a senior engineer.\n", "no 'favours:' line"),
        ("---\nfavours: SKILLS\n---\n", "favours SKILLS"),
    ],
)
def test_a_persona_that_is_not_there_or_favours_nothing_is_a_usage_error(
    cli, memories, text, message
):
    if text is not None:
        persona(memories, "tech_expert", text)
    done = run_process("recall", "deploy cache", "--persona", "tech_expert")
    assert done.returncode == 2 and done.stdout == b""
    (line,) = done.stderr.decode().splitlines()
    assert line.startswith("error: ") and message in line


def test_a_persona_name_is_no_path(cli, memories):
    result = cli("recall", "deploy cache", "--persona", "../USER")
    assert result.exit_code == 2 and "not a persona name" in result.stderr
