"""``--help`` teaches: an example for every command, no internal jargon, choices that
read whole at 80 columns, and ``mcp --help`` naming every tool the server offers."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator

import pytest
import typer

from soloqueue_mem.cli.app import build_app


def _commands() -> Iterator[tuple[list[str], typer.core.TyperCommand]]:
    """Every command and group under the root, with its path."""
    root = typer.main.get_command(build_app())

    def walk(group, path, ctx):
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            yield [*path, name], command
            if hasattr(command, "list_commands"):
                yield from walk(command, [*path, name], typer.Context(command, parent=ctx))

    yield from walk(root, [], typer.Context(root, info_name="soloqueue-mem"))


COMMANDS = list(_commands())


@pytest.mark.parametrize(
    ("path", "command"), COMMANDS, ids=[" ".join(path) for path, _ in COMMANDS]
)
def test_help_has_an_example_and_whole_choices(cli, path, command):
    out = cli(*path, "--help", env={"COLUMNS": "80"}).stdout
    examples = out.partition("Examples:\n")[2]
    assert f"soloqueue-mem {' '.join(path)}" in examples, out
    assert not re.search(r"\bseeds?\b", out, re.IGNORECASE), out
    for param in command.params:
        choices = getattr(param.type, "choices", None)
        if choices and not getattr(param, "hidden", False):
            whole = "|".join(str(c) for c in choices).lower()  # shown in lower case
            assert whole in out.lower(), (param.name, out)


def test_mcp_help_names_every_tool(cli, store):
    pytest.importorskip("mcp", reason="the [mcp] extra is not installed: pip install '.[mcp]'")
    from soloqueue_mem import Store
    from soloqueue_mem.api.mcp_server import Scope, build_server

    with Store() as opened:
        tools = asyncio.run(build_server(opened, Scope(None, None)).list_tools())
    help_text = " ".join(cli.ok("mcp", "--help").stdout.split())
    assert len(tools) == 10
    for tool in tools:
        assert re.search(rf"\b{tool.name}\b", help_text), tool.name


def test_remember_at_a_terminal_says_what_it_did_in_one_line(cli, store):
    def remember(text: str) -> str:
        args = ("--subject", "user", "--predicate", "editor", "--type", "preference")
        return cli.ok("--format", "table", "remember", text, *args).stdout

    created = remember("User prefers vim")
    assert re.fullmatch(
        r"created (\w+) \(PREFERENCE, confidence 0\.50\): User prefers vim\n", created
    )
    first = created.split()[1]
    confirmed = remember("User prefers vim")
    assert confirmed == f"confirmed {first} (PREFERENCE, confidence 0.75): User prefers vim\n"
    superseded = remember("User prefers emacs")
    assert re.fullmatch(
        rf"superseded {first} with \w+ \(PREFERENCE, .*\): User prefers emacs\n", superseded
    )


def test_the_demo_suggests_current_flags(cli):
    out = cli.ok("--format", "table", "demo").stdout
    assert "session export SESSION --as openai" in out
    assert "--format openai" not in out
