"""One spec (``cli/spec.py``) spells the options of the commands with a Typer-free fast
path: the Typer commands and the fast parser's tables both come from it (issue 15 §23).
These checks hold the Typer side to it, option by option."""

from __future__ import annotations

import pytest
import typer.main

from soloqueue_mem.cli import fast, spec
from soloqueue_mem.cli.app import build_app

FAST = {
    command.words: command
    for command in (
        fast.LOG,
        fast.SAVE,
        fast.TRACE,
        fast.RECALL,
        fast.GRAPH_REMEMBER,
        fast.GRAPH_RECALL,
        fast.HOOK,
    )
}


def click_command(words: tuple[str, ...]):
    command = typer.main.get_command(build_app(words[0]))
    for word in words:
        command = command.commands[word]  # type: ignore[attr-defined]
    return command


def described(params) -> set[tuple]:
    """Each option as (spellings, kind, variable)."""
    found = set()
    for param in params:
        if param.param_type_name != "option" or "--version" in param.opts:
            continue
        kind = spec.FLAG if param.is_flag else spec.LIST if param.multiple else spec.VALUE
        found.add((tuple(param.opts), kind, param.envvar))
    return found


def test_every_fast_command_has_a_spec_and_a_parser():
    assert set(FAST) == set(spec.COMMANDS)


@pytest.mark.parametrize("words", list(spec.COMMANDS), ids=" ".join)
def test_the_typer_command_declares_exactly_its_spec(words):
    command = click_command(words)
    assert described(command.params) == {
        (opt.names, opt.kind, opt.envvar) for opt in spec.COMMANDS[words]
    }
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    assert FAST[words].arguments == (sum(a.required for a in arguments), len(arguments))


def test_the_global_options_are_the_spec():
    group = typer.main.get_command(build_app("log"))
    assert described(group.params) == {(opt.names, opt.kind, opt.envvar) for opt in spec.GLOBAL}


@pytest.mark.parametrize("words", list(spec.COMMANDS), ids=" ".join)
def test_the_fast_tables_are_the_spec(words):
    options = FAST[words].options
    tables = {spec.VALUE: options.values, spec.FLAG: options.flags, spec.LIST: options.lists}
    for opt in spec.COMMANDS[words]:
        assert all(tables[opt.kind][name] == opt.key for name in opt.names)
        assert options.envvars.get(opt.key) == opt.envvar
    assert sum(map(len, tables.values())) == sum(len(o.names) for o in spec.COMMANDS[words])
