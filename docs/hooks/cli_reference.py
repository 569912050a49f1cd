"""MkDocs hook: ``reference/cli.md`` written at build time from the Typer app itself
(every command's usage, help, options and examples), so the reference cannot drift from
``--help``. ``tests/test_docs.py`` checks that every command and option is in it."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Any

PAGE = "reference/cli.md"
INTRO = """# Command-line reference

Generated from the program's own `--help` when the site is built. Every command also
takes the global options `--format/-f`, `--root` and `--quiet/-q` (before or after the
command); exit codes are listed in [JSON output and exit codes](contracts.md).
"""


def commands() -> Iterator[tuple[str, Any, Any]]:
    """``(path, command, context)`` for the root and every command under it, in order."""
    import typer

    from soloqueue_mem.cli.app import build_app

    root = typer.main.get_command(build_app())

    def walk(command: Any, ctx: Any) -> Iterator[tuple[str, Any, Any]]:
        yield ctx.command_path, command, ctx
        for name in getattr(command, "list_commands", lambda _: [])(ctx):
            sub = command.get_command(ctx, name)
            yield from walk(sub, typer.Context(sub, info_name=name, parent=ctx))

    yield from walk(root, typer.Context(root, info_name="soloqueue-mem"))


def _escaped(text: str) -> str:
    """``text`` on one line, ``<``/``>``/``&`` escaped outside its `code spans` (help
    text is plain text: ``<root>`` must not become an HTML tag)."""
    parts = re.split(r"(`[^`]*`)", " ".join(text.split()))
    escaped = (part if i % 2 else html.escape(part, quote=False) for i, part in enumerate(parts))
    return "".join(escaped)


def _prose(text: str) -> str:
    """Help text as Markdown: paragraphs re-flowed, ``\\b`` blocks kept as they are."""
    out = []
    for paragraph in text.strip().split("\n\n"):
        if paragraph.startswith("\b"):
            out.append("```text\n" + paragraph[1:].strip("\n") + "\n```")
        else:
            out.append(_escaped(paragraph))
    return "\n\n".join(out)


def _cell(text: str) -> str:
    return _escaped(text).replace("|", "\\|")


def _options(command: Any, ctx: Any) -> str:
    rows = []
    for param in command.params:
        record = param.get_help_record(ctx)
        if record is None:  # hidden
            continue
        names, meaning = record
        rows.append(f"| `{' '.join(names.split())}` | {_cell(meaning)} |")
    if not rows:
        return ""
    return "| option or argument | meaning |\n|---|---|\n" + "\n".join(rows)


def _examples(epilog: str | None) -> str:
    if not epilog:
        return ""
    calls = [line.strip() for line in epilog.splitlines()[2:] if line.strip()]
    return "Examples:\n\n```console\n" + "".join(f"$ {call}\n" for call in calls) + "```"


def render() -> str:
    """The whole reference page."""
    sections = [INTRO]
    for path, command, ctx in commands():
        usage = " ".join(command.collect_usage_pieces(ctx))
        parts = [
            f"## `{path}`",
            f"```text\n{path} {usage}\n```",
            _prose(command.help or ""),
            _options(command, ctx),
            _examples(command.epilog),
        ]
        sections.append("\n\n".join(part for part in parts if part))
    return "\n\n".join(sections) + "\n"


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    files.append(File.generated(config, PAGE, content=render()))
    return files
