"""Documentation and generated files stay in step with the app."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from soloqueue_mem.cli.completion import Shell, script_for

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


@pytest.mark.parametrize("shell", list(Shell))
def test_completion_scripts_are_current(shell):
    committed = (ROOT / "completions" / f"soloqueue-mem.{shell}").read_text()
    assert committed == script_for(shell), (
        f"completions/soloqueue-mem.{shell} is stale: run "
        f"`soloqueue-mem completion {shell} > completions/soloqueue-mem.{shell}`"
    )


def test_every_command_has_help_and_an_entry_at_a_glance(cli):
    from soloqueue_mem.cli import COMMANDS

    glance = (DOCS / "reference" / "commands.md").read_text()
    for name in COMMANDS:
        assert cli.ok(name, "--help").stdout.strip(), name
        assert re.search(rf"soloqueue-mem {name}\b", glance), (
            f"docs/reference/commands.md does not show `soloqueue-mem {name}`"
        )


def test_readme_test_command_is_what_ci_runs():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    extras = "test,semantic,tokenizers,mcp,server,postgres,dictionary"
    command = f"python3 -m pip install '.[{extras}]' && python3 -m pytest"
    assert command in readme and command in ci


def test_readme_is_a_front_door_whose_links_resolve():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 300
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme):
        if "://" not in target:
            assert (ROOT / target).is_file(), target


def test_no_page_cites_notes_the_reader_cannot_open():
    pages = [ROOT / "README.md", *DOCS.rglob("*.md")]
    for page in pages:
        cited = re.findall(r"\bseeds? \d{3}", page.read_text(), flags=re.IGNORECASE)
        assert not cited, (page, cited)


def _cli_reference():
    spec = importlib.util.spec_from_file_location(
        "cli_reference", DOCS / "hooks" / "cli_reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generated_cli_reference_covers_every_command_and_option():
    reference = _cli_reference()
    page = reference.render()
    for path, command, ctx in reference.commands():
        assert f"## `{path}`" in page, path
        section = page.split(f"## `{path}`\n", 1)[1].split("\n## ", 1)[0]
        for param in command.params:
            shown = param.get_help_record(ctx)  # what --help shows; None when hidden
            if shown is not None:
                assert f"| `{' '.join(shown[0].split())}` |" in section, (path, param.name)
        if path != "soloqueue-mem":
            assert f"$ {path}" in section, f"{path}: no example"


def _python_blocks(page: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.DOTALL)


def test_the_python_example_runs(capsys):
    (example,) = _python_blocks(DOCS / "howto" / "python.md")
    exec(compile(example, "docs/howto/python.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "User prefers vim"  # Store hits: the text without the LLM's mark
    assert printed[2:] == ["memory", "100 False", "3"]
