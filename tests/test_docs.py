"""Documentation and generated files stay in step with the app."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from soloqueue_mem.cli.completion import Shell, script_for

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("shell", list(Shell))
def test_completion_scripts_are_current(shell):
    committed = (ROOT / "completions" / f"soloqueue-mem.{shell}").read_text()
    assert committed == script_for(shell), (
        f"completions/soloqueue-mem.{shell} is stale: run "
        f"`soloqueue-mem completion {shell} > completions/soloqueue-mem.{shell}`"
    )


def test_every_command_has_help_and_a_readme_entry(cli):
    from soloqueue_mem.cli import COMMANDS

    readme = (ROOT / "README.md").read_text()
    for name in COMMANDS:
        assert cli.ok(name, "--help").stdout.strip(), name
        assert re.search(rf"soloqueue-mem {name}\b", readme), (
            f"README does not show `soloqueue-mem {name}`"
        )


def test_readme_test_command_is_what_ci_runs():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    extras = "test,semantic,tokenizers,mcp,server,postgres"
    command = f"python3 -m pip install '.[{extras}]' && python3 -m pytest"
    assert command in readme and command in ci


def _python_blocks(section: str) -> list[str]:
    """The ```python blocks of the README section titled ``section``."""
    readme = (ROOT / "README.md").read_text()
    start = readme.index(f"\n## {section}\n")
    end = readme.find("\n## ", start + 1)
    return re.findall(r"```python\n(.*?)```", readme[start:end], flags=re.DOTALL)


def test_the_python_example_runs(capsys):
    (example,) = _python_blocks("Use it from Python")
    exec(compile(example, "README.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "[记忆] User prefers vim"
    assert printed[2:] == ["memory", "100 False", "3"]
