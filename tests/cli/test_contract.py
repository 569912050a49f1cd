"""One CLI contract (issue 15 items 14-22): the same option means the same thing in
every command, and a bad option value is a usage error everywhere."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
import typer

from soloqueue_mem.cli import build_app
from soloqueue_mem.cli.app import hoist_global_flags
from soloqueue_mem.cli.options import MemoryType
from soloqueue_mem.memory.model import TYPES
from tests.conftest import run_process


def _leaf_commands() -> list[tuple[list[str], Any]]:
    found = []

    def walk(command: Any, path: list[str]) -> None:
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk(sub, [*path, name])
        else:
            found.append((path, command))

    walk(typer.main.get_command(build_app()), [])
    return found


def test_a_short_flag_means_one_thing_in_every_command():
    meaning: dict[str, set[str]] = {}
    for _, command in _leaf_commands():
        for param in command.params:
            longs = [o for o in param.opts if o.startswith("--")]
            for short in (o for o in param.opts if len(o) == 2):
                meaning.setdefault(short, set()).update(longs)
    meaning.setdefault("-q", set()).add("--quiet")  # the root's
    meaning.setdefault("-f", set()).add("--format")
    shared = {short: longs for short, longs in meaning.items() if len(longs) > 1}
    assert shared == {}


# `completion` prints a shell script, `demo` uses a throw-away store, `hook claude`
# answers in the harness's own JSON and `mcp`/`serve` speak their protocols: --format
# (and for the first two --root) has no meaning there; --quiet works after them too.
NO_FORMAT = (["completion"], ["demo"], ["hook", "claude"], ["mcp"], ["serve"])


@pytest.mark.parametrize(
    "path",
    [p for p, _ in _leaf_commands() if p not in NO_FORMAT],
    ids=" ".join,
)
def test_global_options_work_after_every_command(cli, path, tmp_path):
    args = [*path, "--quiet", "--format", "json", "--root", str(tmp_path / "r"), "--help"]
    result = cli(*args)
    assert result.exit_code == 0, (result.stdout, result.stderr)


@pytest.mark.parametrize("path", [["completion", "bash"], ["demo"], ["hook", "claude"]])
def test_quiet_works_after_the_other_commands_too(cli, path):
    assert cli(*path, "--quiet", "--help").exit_code == 0


@pytest.mark.usefixtures("store")
def test_quiet_after_the_command_is_the_global_flag(cli, home):
    result = cli("consolidate", "--quiet", "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""


def test_hoisting_leaves_arguments_after_double_dash():
    assert hoist_global_flags(["remember", "-q", "--", "-q"]) == ["-q", "remember", "--", "-q"]


def test_the_memory_type_choices_are_the_library_types():
    assert tuple(MemoryType) == TYPES


@pytest.mark.parametrize(
    "args",
    [
        ["remember", "x", "--type", "PREFERNCE"],
        ["remember", "x", "--importance", "5"],
        ["remember", "x", "--confidence", "-1"],
        ["memory", "list", "--type", "nope"],
        ["memory", "edit", "123456", "--importance", "2"],
        ["recall", "x", "--type", "nope"],
        ["memory", "list", "--limit", "-1"],
        ["episode", "list", "--limit", "-1"],
        ["session", "list", "--limit", "-1"],
        ["artifact", "list", "--limit", "-1"],
        ["episode", "search", "x", "--limit", "0"],
    ],
)
@pytest.mark.usefixtures("store")
def test_a_bad_choice_is_a_usage_error(cli, home, args):
    assert cli(*args).exit_code == 2
    assert os.listdir(home) == [".gitignore"]


def test_type_is_case_insensitive(cli, home):
    stored = cli.json("remember", "User prefers tabs", "--type", "preference")
    assert stored["type"] == "PREFERENCE"


def test_limit_zero_lists_everything(cli, home):
    for n in range(3):
        cli.ok("remember", f"fact number {n} about otters")
        cli.ok("log", "-s", f"s{n}", "hi")
    assert len(cli.json("memory", "list", "--limit", "1")) == 1
    assert len(cli.json("memory", "list", "--limit", "0")) == 3
    assert len(cli.json("session", "list", "--limit", "0")) == 3
    assert cli.json("episode", "list", "--limit", "0") == []
    assert cli.json("artifact", "list", "--limit", "0") == []


def test_since_accepts_compound_durations_and_day_names(cli, home):
    cli.ok("log", "-s", "s1", "otters hold hands")
    for since in ("1h30m", "yesterday", "today", "2026-11-26T07:00:00Z"):
        hits = cli.json("trace", "otters", "--since", since)
        assert [h["content"] for h in hits] == ["otters hold hands"], since


def test_a_bad_since_names_the_accepted_forms(cli, home):
    cli.ok("log", "-s", "s1", "otters")
    result = cli("trace", "otters", "--since", "last week")
    assert result.exit_code != 0
    assert "1h30m" in result.stderr and "yesterday" in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["remember", "x", "--bogus"],
        ["log", "--role", "nobody", "x"],
        ["recall"],
        ["--format", "json", "nosuchcommand"],
    ],
)
def test_a_usage_error_is_one_error_line(cli, home, args):
    result = cli(*args)
    assert result.exit_code == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    if "--format" in args:
        assert json.loads(result.stderr)["error"]["code"] == "usage"
    else:
        assert len(lines) == 1 and lines[0].startswith("error: ") and "--help" in lines[0]


def test_under_format_json_a_usage_error_is_a_json_object(cli, home):
    for args in (
        ["--format", "json", "remember", "x", "--type", "PREFERNCE"],
        ["remember", "x", "--importance", "5", "--format=json"],
        ["-f", "jsonl", "memory", "list", "--nope"],
    ):
        result = cli(*args)
        assert result.exit_code == 2 and result.stdout == ""
        error = json.loads(result.stderr)["error"]
        assert error["code"] == "usage" and error["exit_code"] == 2, args
    assert not home.exists()


def test_index_reports_its_errors_as_json_under_format_json(cli, store):
    for args, code in ((["index"], 2), (["index", "--embed", "--time-budget", "soon"], 65)):
        result = cli(*args, "--format", "json")
        assert result.exit_code == code and result.stdout == ""
        assert json.loads(result.stderr)["error"]["exit_code"] == code, args


@pytest.mark.usefixtures("store")
def test_the_real_program_reports_usage_errors_the_same_way(home):
    done = run_process("--format", "json", "remember", "x", "--type", "nope")
    assert done.returncode == 2 and done.stdout == b""
    assert json.loads(done.stderr)["error"]["code"] == "usage"
    plain = run_process("consolidate", "--quiet", "--dry-run", "--format", "json")
    assert plain.returncode == 0 and plain.stderr == b""


def test_path_is_a_bare_path_in_a_pipe(cli, home):
    assert cli.ok("path").stdout == f"{home}\n"  # CliRunner's stdout is not a terminal
    assert cli.json("path") == {"root": str(home), "exists": False}
    done = run_process("path")
    assert done.returncode == 0 and done.stdout == f"{home}\n".encode()


@pytest.mark.parametrize("command", [["consolidate"], ["gc"]])
def test_quiet_maintenance_prints_nothing_unless_a_format_is_given(cli, home, command):
    cli.ok("log", "-s", "s1", "hello")
    quiet = cli(*command, "--quiet")
    assert quiet.exit_code == 0 and quiet.stdout == "" and quiet.stderr == ""
    assert "dry_run" in cli.json("--quiet", *command)


def test_the_documented_cron_lines_name_the_store():
    from pathlib import Path

    docs = (Path(__file__).parents[2] / "docs").rglob("*.md")
    lines = [line for page in docs for line in page.read_text().splitlines()]
    cron = [line for line in lines if line[:1].isdigit() and "soloqueue-mem" in line]
    assert cron and all("--root " in line and "--quiet" in line for line in cron), cron


# -- one scope rule (§14) ---------------------------------------------------------------


def test_session_commands_take_the_session_from_the_environment(cli, home, monkeypatch):
    monkeypatch.setenv("SOLOQUEUE_AGENT", "claude")
    cli.ok("log", "-s", "cc-1", "hi")
    assert cli.json("session", "show", "cc-1")["agent"] == "claude"
    monkeypatch.setenv("SOLOQUEUE_SESSION", "cc-1")
    assert cli.json("session", "show")["session"] == "cc-1"
    assert cli.ok("session", "export").stdout.count("\n") == 1
    compressed = cli.json("context", "compress")
    assert compressed[-1]["content"] == "hi"
    built = cli.json("context", "build", "--max-context", "8000")
    assert built[-1] == {"role": "user", "content": "hi"}
    assert cli.json("session", "end")["session"] == "cc-1"


# -- one system message (§15) -----------------------------------------------------------


def test_context_build_sends_one_system_message(cli, home):
    piped = json.dumps([{"role": "system", "content": "You are terse."},
                        {"role": "user", "content": "hi"}])  # fmt: skip
    built = cli.json("context", "build", "--max-context", "8000", input=piped)
    assert built == [{"role": "system", "content": "You are terse."},
                     {"role": "user", "content": "hi"}]  # fmt: skip
    built = cli.json("context", "build", "--max-context", "8000", "--system", "Be kind.",
                     input=piped)  # fmt: skip
    assert [m["role"] for m in built] == ["system", "user"]
    assert built[0]["content"] == "Be kind."  # --system wins over the history's own


def test_context_build_with_nothing_piped_is_a_usage_error(cli, home):
    result = cli("context", "build", "--max-context", "8000", input="")
    assert result.exit_code == 2 and result.stdout == ""


# -- session export --as (§16) ----------------------------------------------------------


def test_session_export_as_and_its_deprecated_spelling(cli, home):
    cli.ok("log", "-s", "s1", "hi")
    expected = [{"role": "user", "content": "hi"}]
    assert json.loads(cli.ok("session", "export", "s1", "--as", "openai").stdout) == expected
    old = cli("session", "export", "s1", "--format", "openai")
    assert old.exit_code == 0 and json.loads(old.stdout) == expected
    assert "deprecated" in old.stderr and "--as" in old.stderr
    assert cli.ok("--format", "json", "session", "export", "s1", "--as", "md").stdout.startswith(
        "# Session s1"
    )


# -- --format text is text, tables hold no Python reprs (§16) ----------------------------

TEXT_COMMANDS = [
    ["stats"],
    ["consolidate"],
    ["gc"],
    ["session", "list"],
    ["artifact", "list"],
    ["kv", "list"],
    ["working", "list"],
    ["session", "end", "s1"],
]


@pytest.mark.parametrize("args", TEXT_COMMANDS, ids=" ".join)
def test_format_text_is_never_json_nor_a_table(cli, home, args):
    cli.ok("log", "-s", "s1", "hello there")
    out = cli.ok(*args, "--format", "text").stdout
    assert not out.lstrip().startswith(("{", "[")), out
    assert "┃" not in out and "━" not in out and "│" not in out, out
    assert "True" not in out and "{'" not in out, out


def test_tables_show_values_not_python_reprs(monkeypatch, capsys):
    from soloqueue_mem.cli import output

    monkeypatch.setattr(output, "_text_tables", False)
    output.emit_object({"exists": True, "identity": {"MEMORY.md": {"chars": 136}}, "ids": ["a"]},
                       output.Format.table)  # fmt: skip
    out = capsys.readouterr().out
    assert "identity.MEMORY.md.chars" in out and "136" in out and "yes" in out
    assert "True" not in out and "{'" not in out and "['a']" not in out


@pytest.mark.usefixtures("store")
def test_a_text_line_cannot_be_forged_by_a_stored_line_break(cli, home):
    cli.ok("kv", "set", "note", "--text", "one\nkey2\tforged")
    lines = cli.ok("kv", "list", "--format", "text").stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("note\t")


# -- tool calls in terminal tables, at 60 columns (§21) ----------------------------------

TOOL_CALL = json.dumps(
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
     "function": {"name": "read_file", "arguments": '{"path": "config.toml"}'}}]}
)  # fmt: skip


def test_a_tool_call_turn_is_not_blank_in_tables_at_60_columns(cli, home, monkeypatch):
    cli.ok("log", "-s", "s1", input=TOOL_CALL)
    monkeypatch.setenv("COLUMNS", "60")
    for args in (["trace", "read_file"], ["session", "show", "s1"]):
        out = cli.ok(*args, "--format", "table").stdout
        assert "read_file" in out and "config.toml" in out, out
        assert max(len(line) for line in out.splitlines()) <= 60, out


# -- the language setting (§22) ---------------------------------------------------------


def _english(home):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text('language = "en"\n')


def test_language_en_changes_the_llm_and_user_facing_fixed_text(cli, home):
    _english(home)
    cli.ok("remember", "User prefers dark themes", "--type", "PREFERENCE")
    assert cli.ok("recall", "dark themes", "--format", "text").stdout.startswith("[memory] ")
    pad = cli.json("scratchpad", "show")
    assert "## Recent progress" in pad["content"] and "近期进展" not in pad["content"]
    turn = cli.json("log", "-s", "s1", "--offload", "--role", "tool", "x" * 3000)
    assert turn["content"].startswith("[Output too large"), turn  # offload_language follows


def test_language_defaults_to_zh(cli, home):
    cli.ok("remember", "User prefers dark themes", "--type", "PREFERENCE")
    assert cli.ok("recall", "dark themes", "--format", "text").stdout.startswith("[记忆] ")
    assert "## 近期进展" in cli.json("scratchpad", "show")["content"]


def test_a_bad_language_is_refused(cli, home):
    home.mkdir(parents=True)
    (home / "config.toml").write_text('language = "fr"\n')
    assert cli("recall", "x").exit_code == 65


def test_the_english_prompts_keep_the_answer_format():
    from soloqueue_mem.lifecycle.prompts import extraction, summary

    record = {"role": "user", "content": "I use vim", "tool_calls": [], "tool_results": []}
    english = extraction.prompt(record, "en")
    assert "I use vim" in english and "NONE" in english and "分析" not in english
    assert summary.prompt([{"role": "user", "content": "t"}], "en").endswith("t")


def test_progress_added_to_an_english_pad_gets_an_english_heading():
    from soloqueue_mem.memory.scratchpad import with_progress

    text = with_progress("## Current projects\n- a\n", "did b")
    assert "## Recent progress\n- did b" in text


# -- a batch prints a summary, not every turn (§20) -------------------------------------

BATCH = "".join(json.dumps({"role": "user", "content": f"line {n}"}) + "\n" for n in range(5))


def test_a_batch_prints_a_summary_by_default(cli, home):
    result = cli.ok("log", "--batch", "-s", "b", input=BATCH)
    assert json.loads(result.stdout) == {"logged": 5, "duplicates": 0, "rejected": 0,
                                         "sessions": 1}  # fmt: skip
    again = json.loads(cli.ok("log", "--batch", "-s", "b", input=BATCH).stdout)
    assert again["duplicates"] == 5 and again["logged"] == 5  # the same file: nothing new


def test_a_batch_echoes_every_turn_with_echo_or_an_explicit_format(cli, home):
    echoed = json.loads(cli.ok("log", "--batch", "-s", "b", "--echo", input=BATCH).stdout)
    assert [t["content"] for t in echoed] == [f"line {n}" for n in range(5)]
    assert len(cli.jsonl("log", "--batch", "-s", "c", input=BATCH)) == 5
    assert len(cli.json("log", "--batch", "-s", "d", input=BATCH)) == 5


def test_the_batch_summary_on_the_fast_path_matches(home):
    done = run_process("log", "--batch", "-s", "b", input=BATCH.encode())
    assert done.returncode == 0
    assert json.loads(done.stdout)["logged"] == 5
    echoed = run_process("log", "--batch", "-s", "b", "--echo", input=BATCH.encode())
    assert len(json.loads(echoed.stdout)) == 5


@pytest.mark.usefixtures("store")
def test_artifacts_follow_the_group_variable(cli, home, monkeypatch, tmp_path):
    (tmp_path / "f.txt").write_text("hello")
    monkeypatch.setenv("SOLOQUEUE_GROUP", "g1")
    saved = cli.json("artifact", "save", str(tmp_path / "f.txt"))
    assert saved["group"] == "g1"
    assert [a["id"] for a in cli.json("artifact", "list")] == [saved["id"]]
    monkeypatch.setenv("SOLOQUEUE_GROUP", "g2")
    assert cli.json("artifact", "list") == []


# -- code health (§23) ------------------------------------------------------------------


def test_roles_and_search_thresholds_are_defined_once():
    from soloqueue_mem import roles
    from soloqueue_mem.cli.options import Role
    from soloqueue_mem.memory import backend
    from soloqueue_mem.sessions import events, ranking
    from soloqueue_mem.text import fts

    assert tuple(Role) == roles.ROLES and events.ROLES == frozenset(roles.ROLES)
    assert backend.BROAD_MATCHES is fts.BROAD_MATCHES is ranking.BROAD_MATCHES
    assert backend.RECENT_WINDOW is fts.RECENT_WINDOW is ranking.RECENT_WINDOW
