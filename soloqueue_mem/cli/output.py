"""Output: one format resolver and the renderers every command shares.

Precedence: an explicit ``--format`` wins; ``auto`` is a Rich table when stdout is a
terminal and JSON otherwise. JSON is the documented, additive-only contract; tables
are for people and may change. Logged text passes through our sanitiser before any
human-oriented rendering, and is printed as Rich ``Text``, never as markup.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from enum import StrEnum
from typing import Any

from soloqueue_mem import jsonio
from soloqueue_mem.sanitize import for_terminal


class Format(StrEnum):
    auto = "auto"
    table = "table"
    json = "json"
    jsonl = "jsonl"
    text = "text"


def resolve_format(fmt: Format, stdout_is_tty: bool | None = None) -> Format:
    if fmt is not Format.auto:
        return fmt
    if stdout_is_tty is None:
        stdout_is_tty = sys.stdout.isatty()
    return Format.table if stdout_is_tty else Format.json


def write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def emit_object(
    obj: dict[str, Any],
    fmt: Format,
    table: Callable[[], None] | None = None,
    text: Callable[[], str] | None = None,
) -> None:
    """A single result: one JSON object, or the given table/text rendering."""
    if (
        fmt in (Format.json, Format.jsonl)
        or (fmt is Format.table and table is None)
        or (fmt is Format.text and text is None)
    ):
        write(jsonio.dumps(obj) + "\n")
    elif fmt is Format.table and table is not None:
        table()
    elif text is not None:
        print_text_block(text())


def emit_list(rows: Iterable[dict[str, Any]], fmt: Format) -> None:
    """A list as a JSON array (streamed) or one object per line."""
    if fmt is Format.jsonl:
        for row in rows:
            write(jsonio.dumps(row) + "\n")
        return
    first = True
    out = sys.stdout
    out.write("[")
    for row in rows:
        out.write(("\n  " if first else ",\n  ") + jsonio.dumps(row))
        first = False
    out.write("\n]\n" if not first else "]\n")
    out.flush()


def print_table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """A Rich table on stdout; every cell is sanitised and added as plain Text."""
    from rich.console import Console  # ~60 ms: only for people at a terminal
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, show_lines=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*(Text(for_terminal("" if cell is None else str(cell))) for cell in row))
    Console().print(table)


def print_text_block(text: str) -> None:
    """Untrusted text for a person: sanitised, printed without markup."""
    write(for_terminal(text))


def report_wanted(quiet: bool, fmt: Format) -> bool:
    """A maintenance command's report is printed unless ``--quiet`` was given without an
    explicit ``--format`` (a cron line's ``--quiet`` means: say nothing)."""
    return not quiet or fmt is not Format.auto


def stderr(message: str, quiet: bool = False) -> None:
    if not quiet:
        sys.stderr.write(for_terminal(message) + "\n")
