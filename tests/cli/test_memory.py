"""`remember` and `memory list|show|edit|forget|history`: typed, expiring, self-updating
semantic memories (SPEC §3.4). Time is pinned with SOLOQUEUE_NOW; moving it forward is
how expiry is shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import missing_store_is_sqlite, tree_snapshot

EX_USAGE, EX_NOT_FOUND, EX_DATAERR = 2, 3, 65

# The JSON field names of a memory are a contract other tools read (additive only:
# a field may be added, none renamed or removed).
MEMORY_KEYS = {
    "id",
    "group",
    "agent",
    "type",
    "priority",
    "content",
    "subject",
    "predicate",
    "source",
    "source_episode_id",
    "tags",
    "importance",
    "confidence",
    "access_count",
    "decay_rate",
    "created_at",
    "updated_at",
    "last_accessed_at",
    "expires_at",
    "superseded_by",
}


def remember(cli, *args: str, input: str | None = None) -> dict:
    return cli.json("remember", *args, input=input)


def listed(cli, *args: str) -> list[str]:
    return [m["content"] for m in cli.json("memory", "list", *args)]


def recalled(cli, query: str, *args: str) -> list[str]:
    return [h["content"] for h in cli.json("recall", query, *args)]


def at(monkeypatch, when: str) -> None:
    monkeypatch.setenv("SOLOQUEUE_NOW", when)


def assert_one_error(result, code: int) -> str:
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert "Traceback" not in result.stderr
    return lines[0]


# -- writing ---------------------------------------------------------------------------


def test_remember_an_argument_prints_the_stored_memory(cli):
    out = remember(
        cli,
        "The user prefers vim",
        "--type",
        "PREFERENCE",
        "--subject",
        "user",
        "--predicate",
        "editor",
        "--importance",
        "0.8",
        "--confidence",
        "0.6",
        "--tag",
        "tools",
        "--tag",
        "editor",
        "--source",
        "chat",
    )
    assert MEMORY_KEYS | {"action", "superseded", "event_id", "duplicate"} <= set(out)
    assert out["action"] == "created" and out["superseded"] == []
    assert out["event_id"] is None and out["duplicate"] is False
    assert len(out["id"]) == 32 and int(out["id"], 16) >= 0
    assert out["content"] == "The user prefers vim"
    assert (out["group"], out["agent"]) == ("default", "default")
    assert (out["type"], out["subject"], out["predicate"]) == ("PREFERENCE", "user", "editor")
    assert (out["importance"], out["confidence"]) == (0.8, 0.6)
    assert out["tags"] == ["editor", "tools"]  # sorted, deduplicated
    assert out["source"] == "chat" and out["access_count"] == 0
    assert out["created_at"] == out["updated_at"] == "2026-11-26T08:00:00.000Z"
    assert out["last_accessed_at"] is None and out["superseded_by"] is None
    shown = cli.json("memory", "show", out["id"])
    remember_only = ("action", "superseded", "event_id", "duplicate")
    assert shown == {k: v for k, v in out.items() if k not in remember_only}


def test_text_format_prints_the_id_only(cli):
    memory_id = cli.ok("remember", "a plain fact", "--format", "text").stdout
    assert len(memory_id) == 33 and memory_id.endswith("\n")
    assert cli.json("memory", "show", memory_id.strip())["content"] == "a plain fact"


def test_remember_dash_reads_the_text_from_stdin(cli):
    out = remember(cli, "-", input="  the deploy key lives in vault  \n")
    assert out["content"] == "the deploy key lives in vault"


def test_a_json_object_on_stdin_carries_every_field(cli):
    obj = {
        "content": "Always run the linter before committing",
        "type": "rule",
        "subject": "repo",
        "predicate": "lint",
        "importance": 1,
        "confidence": 0.9,
        "duration": "permanent",
        "tags": ["ci"],
        "source": "import",
        "source_episode_id": "ep-1",
        "group": "team",
        "agent": "bob",
    }
    out = remember(cli, input=json.dumps(obj))
    assert out["type"] == "RULE" and out["priority"] == "PERMANENT" and out["expires_at"] is None
    assert (out["group"], out["agent"], out["source_episode_id"]) == ("team", "bob", "ep-1")
    assert out["importance"] == 1.0 and out["tags"] == ["ci"]


def test_a_json_array_is_stored_whole(cli):
    items = [{"content": "first imported fact"}, {"content": "second", "agent": "bob"}]
    out = remember(cli, input=json.dumps(items))
    assert [m["content"] for m in out] == ["first imported fact", "second"]
    assert [m["agent"] for m in out] == ["default", "bob"]


@pytest.mark.parametrize(
    "bad",
    [
        {"content": "x", "importance": 1.5},
        {"content": "x", "duration": "forever"},
        {"content": "x", "type": "OPINION"},
        {"content": "x", "colour": "red"},
        {"content": 7},
        {"content": "x", "tags": "a,b"},
        {"content": "x", "agent": "../etc"},
        "not an object",
    ],
)
def test_one_bad_item_rejects_the_whole_array(cli, home, bad):
    cli.ok("remember", "already here")
    before = tree_snapshot(home)
    result = cli("remember", input=json.dumps([{"content": "good item"}, bad]))
    assert assert_one_error(result, EX_DATAERR).startswith("error: item 2: ")
    assert tree_snapshot(home) == before
    assert listed(cli) == ["already here"]


def test_batch_stores_good_lines_and_reports_bad_ones_by_number(cli):
    lines = [
        json.dumps({"content": "batch one"}),
        "{not json",
        "",
        json.dumps({"content": "batch three", "type": "NOPE"}),
        json.dumps({"content": "batch four", "tags": ["t"], "agent": "bob"}),
        json.dumps({"content": "batch five", "duration": "soon"}),
    ]
    result = cli("--format", "jsonl", "remember", "--batch", input="\n".join(lines) + "\n")
    assert result.exit_code == EX_DATAERR
    stored = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(m["line"], m["content"], m["agent"]) for m in stored] == [
        (1, "batch one", "default"),
        (5, "batch four", "bob"),
    ]
    errors = [json.loads(line)["error"] for line in result.stderr.splitlines()]
    assert [(e["code"], e.get("line"), e["exit_code"]) for e in errors] == [
        ("bad_input", 2, 65),
        ("bad_input", 4, 65),
        ("bad_input", 6, 65),
        ("partial", None, 65),
    ]
    assert "unknown memory type 'NOPE'" in errors[1]["message"]
    assert errors[3]["message"] == "3 line(s) rejected, the others were stored"
    assert sorted(listed(cli, "--agent", "default")) == ["batch one"]
    assert listed(cli, "--agent", "bob") == ["batch four"]


def test_batch_errors_in_text_mode_name_the_line(cli):
    batch = '{"content": "fine"}\n{"content": "x", "duration": "soon"}\n'
    result = cli("--format", "text", "remember", "--batch", input=batch)
    assert result.exit_code == EX_DATAERR and len(result.stdout.split()) == 1
    assert result.stderr.splitlines() == [
        "error: line 2: not a duration: 'soon' (use permanent, session (1 day), or a length"
        " such as 24h, 7d, 30d)",
        "error: 1 line(s) rejected, the others were stored",
    ]


def test_a_batch_of_only_bad_lines_creates_no_store(cli, home):
    result = cli("remember", "--batch", input='{"content": ""}\n[1]\n')
    assert result.exit_code == EX_DATAERR
    assert not home.exists()


def test_batch_and_text_together_is_a_usage_error(cli, home):
    assert_one_error(cli("remember", "x", "--batch", input=""), EX_USAGE)
    assert not home.exists()


# -- types, retention and priorities ---------------------------------------------------


@pytest.mark.parametrize(
    ("args", "priority", "expires_at"),
    [
        ([], "LONG_TERM", "2026-12-26T08:00:00.000Z"),  # FACT: 30 days
        (["--type", "FACT"], "LONG_TERM", "2026-12-26T08:00:00.000Z"),
        (["--type", "ERROR"], "LONG_TERM", "2026-12-03T08:00:00.000Z"),  # 7 days
        (["--type", "RULE"], "TRANSIENT", "2026-11-27T08:00:00.000Z"),  # 24 hours
        (["--type", "RULE", "--duration", "permanent"], "PERMANENT", None),
        (["--type", "PREFERENCE"], "PERMANENT", None),
        (["--type", "SKILL"], "PERMANENT", None),
        (["--type", "skill"], "PERMANENT", None),
        (["--duration", "session"], "TRANSIENT", "2026-11-27T08:00:00.000Z"),
        (["--duration", "12h"], "TRANSIENT", "2026-11-26T20:00:00.000Z"),
        (["--duration", "3d"], "SHORT_TERM", "2026-11-29T08:00:00.000Z"),
        (["--duration", "permanent"], "PERMANENT", None),
        (["--type", "PREFERENCE", "--duration", "7d"], "LONG_TERM", "2026-12-03T08:00:00.000Z"),
    ],
)
def test_type_defaults_and_durations(cli, args, priority, expires_at):
    out = remember(cli, "something worth keeping", *args)
    assert (out["priority"], out["expires_at"]) == (priority, expires_at)


def test_expired_memories_are_not_listed_or_recalled_but_list_all_shows_them(cli, monkeypatch):
    remember(cli, "the staging server is flaky", "--type", "RULE")  # 24 h
    remember(cli, "the staging password rotates monthly")  # FACT, 30 d
    remember(cli, "staging lives in eu-west", "--type", "PREFERENCE")  # permanent
    assert len(recalled(cli, "staging", "--channels", "memories")) == 3

    at(monkeypatch, "2026-11-27T07:59:59Z")  # a second before the rule expires
    assert "the staging server is flaky" in listed(cli)

    at(monkeypatch, "2026-11-27T08:00:00Z")  # expires_at is exclusive
    assert sorted(listed(cli)) == [
        "staging lives in eu-west",
        "the staging password rotates monthly",
    ]
    assert "the staging server is flaky" not in recalled(cli, "staging flaky server")
    assert "the staging server is flaky" in listed(cli, "--all")

    at(monkeypatch, "2027-06-01T00:00:00Z")
    assert listed(cli) == ["staging lives in eu-west"]
    assert recalled(cli, "staging password flaky eu-west") == ["staging lives in eu-west"]
    assert len(listed(cli, "--all")) == 3


def test_an_expired_memory_can_be_stated_again(cli, monkeypatch):
    first = remember(cli, "the build cache is warm", "--duration", "1h")
    at(monkeypatch, "2026-11-26T10:00:00Z")
    again = remember(cli, "the build cache is warm", "--duration", "1h")
    assert again["action"] == "created" and again["id"] != first["id"]
    assert listed(cli) == ["the build cache is warm"]


# -- restating and superseding ---------------------------------------------------------


def test_restating_raises_confidence_instead_of_duplicating(cli, monkeypatch):
    first = remember(cli, "The user prefers dark mode.", "--type", "PREFERENCE")
    assert first["confidence"] == 0.5
    at(monkeypatch, "2026-11-26T09:00:00Z")
    again = remember(cli, "the user PREFERS dark mode")  # case and punctuation
    assert again["action"] == "confirmed" and again["id"] == first["id"]
    assert again["confidence"] == 0.75
    assert again["content"] == "The user prefers dark mode."  # the first wording stays
    assert again["updated_at"] == "2026-11-26T09:00:00.000Z"
    third = remember(cli, "ＴＨＥ ＵＳＥＲ prefers  dark—mode!!")  # full-width, dashes
    assert third["action"] == "confirmed" and third["confidence"] == 0.875
    assert listed(cli, "--all") == ["The user prefers dark mode."]
    assert cli.json("stats")["counts"]["memories"] == 1


def test_restating_keeps_the_longer_retention_and_merges_tags(cli):
    fact = remember(cli, "postgres runs on port 5433", "--tag", "db")
    assert fact["expires_at"] == "2026-12-26T08:00:00.000Z"
    shorter = remember(cli, "postgres runs on port 5433", "--duration", "1h", "--tag", "ports")
    assert shorter["expires_at"] == "2026-12-26T08:00:00.000Z"
    assert shorter["tags"] == ["db", "ports"]
    forever = remember(cli, "Postgres runs on port 5433!", "--duration", "permanent")
    assert (forever["priority"], forever["expires_at"]) == ("PERMANENT", None)
    assert listed(cli, "--tag", "ports") == ["postgres runs on port 5433"]


def test_the_same_text_in_another_scope_is_a_separate_memory(cli):
    a = remember(cli, "likes green tea", "--agent", "alice")
    b = remember(cli, "likes green tea", "--agent", "bob")
    assert b["action"] == "created" and a["id"] != b["id"]


def test_subject_and_predicate_supersede_and_history_reads_oldest_first(cli, monkeypatch):
    sp = ("--subject", "user", "--predicate", "editor", "--type", "PREFERENCE")
    vim = remember(cli, "the user edits with vim", *sp)
    at(monkeypatch, "2026-11-27T08:00:00Z")
    emacs = remember(cli, "the user edits with emacs", *sp)
    assert emacs["action"] == "superseded" and emacs["superseded"] == [vim["id"]]
    at(monkeypatch, "2026-11-28T08:00:00Z")
    helix = remember(cli, "the user edits with helix", *sp)
    assert helix["superseded"] == [emacs["id"]]

    for ref in (vim["id"], emacs["id"][:8], helix["id"]):
        chain = cli.json("memory", "history", ref)
        assert [m["content"] for m in chain] == [
            "the user edits with vim",
            "the user edits with emacs",
            "the user edits with helix",
        ]
        assert [m["superseded_by"] for m in chain] == [emacs["id"], helix["id"], None]
    text = cli.ok("memory", "history", helix["id"], "--format", "text").stdout
    assert text.splitlines()[0] == "2026-11-26T08:00:00.000Z\tthe user edits with vim"

    assert listed(cli) == ["the user edits with helix"]
    assert len(listed(cli, "--all")) == 3
    assert recalled(cli, "vim") == []  # only the superseded version mentions vim
    assert recalled(cli, "user edits with vim emacs helix") == ["the user edits with helix"]


def test_restating_with_a_subject_and_predicate_makes_it_the_current_value(cli, monkeypatch):
    plain = remember(cli, "the editor is vim")  # stored without subject/predicate
    at(monkeypatch, "2026-11-26T09:00:00Z")
    emacs = remember(cli, "the user likes emacs", "--subject", "user", "--predicate", "editor")
    at(monkeypatch, "2026-11-26T10:00:00Z")
    again = remember(cli, "The editor is VIM.", "--subject", "user", "--predicate", "editor")
    assert (again["action"], again["id"], again["superseded"]) == (
        "confirmed",
        plain["id"],
        [emacs["id"]],
    )
    assert (again["subject"], again["predicate"], again["confidence"]) == ("user", "editor", 0.75)
    assert listed(cli) == ["the editor is vim"]
    assert listed(cli, "--subject", "user") == ["the editor is vim"]
    assert recalled(cli, "emacs editor") == ["the editor is vim"]
    # History follows the chain, not creation order: emacs came between the two statements.
    chain = cli.json("memory", "history", emacs["id"])
    assert [m["content"] for m in chain] == ["the user likes emacs", "the editor is vim"]


def test_restating_under_another_attribute_supersedes_nothing(cli):
    remember(cli, "vim", "--subject", "user", "--predicate", "editor")
    team = remember(cli, "the team uses emacs", "--subject", "team", "--predicate", "editor")
    again = remember(cli, "VIM", "--subject", "team", "--predicate", "editor")
    assert again["action"] == "confirmed" and again["superseded"] == []
    assert (again["subject"], again["predicate"]) == ("user", "editor")  # unchanged
    assert cli.json("memory", "show", team["id"])["superseded_by"] is None


def test_tags_added_by_restating_and_removed_by_edit_are_searched_correctly(cli):
    first = remember(cli, "alpha beta", "--tag", "tagone")
    again = remember(cli, "Alpha, beta!", "--tag", "tagtwo")
    assert again["id"] == first["id"] and again["tags"] == ["tagone", "tagtwo"]
    assert recalled(cli, "tagtwo") == ["alpha beta"]
    cli.ok("memory", "edit", first["id"], "--untag", "tagone")
    assert recalled(cli, "tagone") == []
    assert recalled(cli, "tagtwo") == ["alpha beta"]
    cli.ok("memory", "forget", first["id"])
    assert recalled(cli, "alpha tagtwo") == []


def test_only_the_same_subject_predicate_and_scope_supersede(cli):
    remember(cli, "user editor is vim", "--subject", "user", "--predicate", "editor")
    other_predicate = remember(
        cli, "user shell is zsh", "--subject", "user", "--predicate", "shell"
    )
    other_agent = remember(
        cli, "user editor is nano", "--subject", "user", "--predicate", "editor", "-a", "bob"
    )
    subject_only = remember(cli, "user is in Berlin", "--subject", "user")
    for out in (other_predicate, other_agent, subject_only):
        assert out["action"] == "created" and out["superseded"] == []
    assert len(listed(cli)) == 4


# -- show, edit, forget ----------------------------------------------------------------


@pytest.fixture
def fixed_ids(monkeypatch):
    """Memory ids handed out in order, so prefixes can be chosen."""
    from soloqueue_mem.memory import store

    ids = iter(
        [
            "abcd0000000000000000000000000001",
            "abcd0000000000000000000000000002",
            "abce0000000000000000000000000003",
        ]
    )

    monkeypatch.setattr(store, "_new_id", lambda: next(ids))


def test_show_by_unique_prefix_and_id_errors(cli, fixed_ids):
    for text in ("one", "two", "three"):
        cli.ok("remember", text)
    assert cli.json("memory", "show", "abce")["content"] == "three"
    assert cli.json("memory", "show", "ABCE0")["content"] == "three"
    assert cli.json("memory", "show", "abcd0000000000000000000000000002")["content"] == "two"
    assert cli.ok("memory", "show", "abce", "--format", "text").stdout == "three\n"
    assert "ambiguous" in assert_one_error(cli("memory", "show", "abcd"), EX_USAGE)
    assert "prefix of 4+" in assert_one_error(cli("memory", "show", "abc"), EX_DATAERR)
    assert_one_error(cli("memory", "show", "zzzz"), EX_DATAERR)
    assert_one_error(cli("memory", "show", "ffff"), EX_NOT_FOUND)
    assert_one_error(cli("memory", "history", "ffff"), EX_NOT_FOUND)
    assert_one_error(cli("memory", "edit", "abcd", "--content", "x"), EX_USAGE)
    assert_one_error(cli("memory", "forget", "abcd"), EX_USAGE)
    assert len(listed(cli)) == 3


@missing_store_is_sqlite
def test_commands_on_a_missing_store_say_not_found_and_create_nothing(cli, home):
    for args in (
        ["memory", "show", "abcd"],
        ["memory", "history", "abcd"],
        ["memory", "forget", "abcd"],
        ["memory", "edit", "abcd", "--content", "x"],
    ):
        assert_one_error(cli(*args), 66)  # no data directory
    assert_one_error(cli("memory", "list"), 66)
    assert not home.exists()


def test_edit_changes_the_searchable_text(cli):
    memory = remember(cli, "the build uses gradle", "--tag", "build")
    edited = cli.json(
        "memory", "edit", memory["id"], "--content", "the build uses bazel", "--importance", "0.9"
    )
    assert edited["id"] == memory["id"] and edited["content"] == "the build uses bazel"
    assert edited["importance"] == 0.9 and edited["tags"] == ["build"]
    assert recalled(cli, "gradle") == []
    assert recalled(cli, "bazel") == ["the build uses bazel"]
    assert listed(cli, "--all") == ["the build uses bazel"]  # corrected in place


def test_edit_adds_and_removes_tags_and_changes_type_and_duration(cli):
    memory = remember(cli, "deploys happen on fridays", "--tag", "old")
    edited = cli.json(
        "memory",
        "edit",
        memory["id"][:6],
        "--tag",
        "ops",
        "--tag",
        "calendar",
        "--untag",
        "old",
        "--type",
        "rule",
        "--duration",
        "permanent",
    )
    assert edited["tags"] == ["calendar", "ops"]
    assert (edited["type"], edited["priority"], edited["expires_at"]) == ("RULE", "PERMANENT", None)
    assert listed(cli, "--tag", "ops") == ["deploys happen on fridays"]
    assert listed(cli, "--tag", "old") == []
    assert listed(cli, "--type", "RULE") == ["deploys happen on fridays"]


def test_edit_rejects_nothing_to_change_and_bad_values_without_writing(cli, home):
    memory = remember(cli, "keep me as I am")
    before = tree_snapshot(home)
    assert "nothing to change" in assert_one_error(cli("memory", "edit", memory["id"]), EX_USAGE)
    for args in (["--duration", "later"], ["--tag", "two words"], ["--content", "   "]):
        assert_one_error(cli("memory", "edit", memory["id"], *args), EX_DATAERR)
    for args in (["--importance", "1.5"], ["--type", "OPINION"]):  # a bad option value
        assert cli("memory", "edit", memory["id"], *args).exit_code == EX_USAGE
    assert tree_snapshot(home) == before


def test_forget_erases_the_whole_chain(cli, monkeypatch, store_backend):
    sp = ("--subject", "team", "--predicate", "lead")
    old = remember(cli, "the team lead is Ana", *sp)
    at(monkeypatch, "2026-11-27T08:00:00Z")
    new = remember(cli, "the team lead is Bo", *sp)
    keep = remember(cli, "the team meets on mondays")
    out = cli.json("memory", "forget", new["id"][:8])
    assert sorted(out["forgotten"]) == sorted([old["id"], new["id"]])
    # SQLite's write-ahead log is checkpointed; PostgreSQL keeps the bytes until VACUUM
    assert out["wal_cleared"] is (store_backend == "sqlite")
    assert listed(cli, "--all") == ["the team meets on mondays"]
    assert_one_error(cli("memory", "show", old["id"]), EX_NOT_FOUND)
    assert recalled(cli, "team lead Ana Bo") == ["the team meets on mondays"]
    assert cli.json("stats")["counts"]["memories"] == 1
    assert cli.ok("memory", "forget", keep["id"], "--format", "text").stdout == keep["id"] + "\n"


def test_forgetting_an_old_version_keeps_the_newer_one(cli, monkeypatch):
    sp = ("--subject", "team", "--predicate", "lead")
    old = remember(cli, "the team lead is Ana", *sp)
    at(monkeypatch, "2026-11-27T08:00:00Z")
    remember(cli, "the team lead is Bo", *sp)
    assert cli.json("memory", "forget", old["id"])["forgotten"] == [old["id"]]
    assert listed(cli, "--all") == ["the team lead is Bo"]


def test_forget_is_all_or_nothing(cli, home):
    a = remember(cli, "memory a")
    before = tree_snapshot(home)
    assert_one_error(cli("memory", "forget", a["id"], "ffffffff"), EX_NOT_FOUND)
    assert tree_snapshot(home) == before
    assert listed(cli) == ["memory a"]


# -- listing ---------------------------------------------------------------------------


def test_list_filters(cli, monkeypatch):
    remember(cli, "alpha fact", "--tag", "x", "--subject", "proj")
    at(monkeypatch, "2026-11-26T09:00:00Z")
    remember(cli, "beta rule", "--type", "RULE", "--tag", "y")
    at(monkeypatch, "2026-11-26T10:00:00Z")
    remember(cli, "gamma skill", "--type", "SKILL", "--agent", "bob", "--tag", "x")
    at(monkeypatch, "2026-11-26T11:00:00Z")
    remember(cli, "delta in another group", "--group", "g2")

    assert listed(cli) == ["delta in another group", "gamma skill", "beta rule", "alpha fact"]
    assert listed(cli, "--type", "rule") == ["beta rule"]
    assert listed(cli, "--tag", "x") == ["gamma skill", "alpha fact"]
    assert listed(cli, "--subject", "proj") == ["alpha fact"]
    assert listed(cli, "--agent", "bob") == ["gamma skill"]
    assert listed(cli, "--group", "g2") == ["delta in another group"]
    assert listed(cli, "--group", "default", "--agent", "default", "--tag", "x") == ["alpha fact"]
    assert listed(cli, "--limit", "2") == ["delta in another group", "gamma skill"]
    assert listed(cli, "--agent", "nobody") == []
    text = cli.ok("memory", "list", "--type", "SKILL", "--format", "text").stdout
    assert text.endswith("\tSKILL\tgamma skill\n")
    rows = cli.jsonl("memory", "list")
    assert len(rows) == 4 and all(MEMORY_KEYS <= set(row) for row in rows)
    assert cli.json("stats")["counts"]["memories"] == 4


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--type", "OPINION"], EX_USAGE),
        (["--limit", "-1"], EX_USAGE),
        (["--group", "../up"], EX_DATAERR),
        (["--agent", "a b"], EX_DATAERR),
    ],
)
def test_list_rejects_bad_filters(cli, args, code):
    remember(cli, "x")
    assert_one_error(cli("memory", "list", *args), code)


# -- bad input -------------------------------------------------------------------------


@pytest.fixture(params=["fresh", "existing"])
def store_state(request, cli, home: Path, tmp_path: Path):
    """A store that does not exist yet, or one with a memory; returns a checker."""
    if request.param == "existing":
        cli.ok("remember", "an earlier memory")
    before = tree_snapshot(tmp_path)

    def unchanged() -> None:
        assert tree_snapshot(tmp_path) == before
        if request.param == "fresh":
            assert not home.exists()

    return unchanged


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        # a bad option value is a usage error (issue 15 §17)
        (["x", "--importance", "1.5"], EX_USAGE, "'--importance': 1.5 is not in the range"),
        (["x", "--importance", "-0.1"], EX_USAGE, "'--importance': -0.1 is not in the range"),
        (["x", "--confidence", "2"], EX_USAGE, "'--confidence': 2.0 is not in the range"),
        (["x", "--type", "OPINION"], EX_USAGE, "'OPINION' is not one of"),
        (["x", "--duration", "forever"], EX_DATAERR, "not a duration: 'forever'"),
        (["x", "--duration", "0h"], EX_DATAERR, "duration must be positive"),
        (["x", "--tag", "two words"], EX_DATAERR, "bad tag 'two words'"),
        (["x", "--tag", ""], EX_DATAERR, "bad tag"),
        (["x", "--group", "../escape"], EX_DATAERR, "invalid group id"),
        (["x", "--agent", "bad/agent"], EX_DATAERR, "invalid agent id"),
        (["   "], EX_DATAERR, "a memory needs some content"),
        (["a\x00b"], EX_DATAERR, "NUL"),
        (["y" * 16_001], EX_DATAERR, "longer than 16000 characters"),
        (["x", "--batch"], EX_USAGE, "--batch reads stdin"),
    ],
)
def test_bad_values_are_rejected_with_one_line_and_nothing_written(
    cli, store_state, args, code, message
):
    line = assert_one_error(cli("remember", *args, input=""), code)
    assert message in line
    store_state()


@pytest.mark.parametrize(
    "stdin",
    ["", "   \n", "{", '{"content": "x"} trailing', "42", '{"type": "FACT"}'],
)
def test_bad_json_documents_are_rejected(cli, store_state, stdin):
    assert_one_error(cli("remember", input=stdin), EX_DATAERR)
    store_state()


def test_bad_input_as_a_json_error_object(cli, home):
    result = cli("--format", "json", "remember", "x", "--duration", "forever")
    assert result.exit_code == EX_DATAERR and result.stdout == ""
    error = json.loads(result.stderr)["error"]
    assert error["code"] == "bad_input" and error["exit_code"] == EX_DATAERR
    assert not home.exists()


def test_forget_rewrites_the_identity_files_at_once(cli, home):
    """What an agent reads first (MEMORY.md, USER.md, and so context build) must not keep
    a forgotten memory until the next consolidate (issue 15 §4)."""
    gone = cli.json("remember", "User's passport number is X1234567", "--type", "FACT",
                    "--subject", "user", "--predicate", "passport")["id"]  # fmt: skip
    cli.ok("remember", "User prefers dark themes", "--type", "PREFERENCE", "--subject", "user")
    assert cli.json("memory", "forget", "--format", "json", gone)["identity_rewritten"] is False
    gone = cli.json("remember", "User's passport number is X1234567", "--type", "FACT",
                    "--subject", "user", "--predicate", "passport")["id"]  # fmt: skip
    cli.ok("consolidate")
    for name in ("MEMORY.md", "USER.md"):
        assert "X1234567" in (home / "identity" / name).read_text()
    out = cli.json("memory", "forget", gone)
    assert out["forgotten"] == [gone] and out["identity_rewritten"] is True
    for name in ("MEMORY.md", "USER.md"):
        text = (home / "identity" / name).read_text()
        assert "X1234567" not in text and "dark themes" in text
