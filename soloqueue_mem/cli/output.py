"""Output: one format resolver and the renderers every command shares.

Precedence: an explicit ``--format`` wins; ``auto`` is a Rich table when stdout is a
terminal and JSON otherwise. JSON is the documented, additive-only contract; tables
are for people and may change. ``csv`` and ``tsv`` print what JSON would, as rows of
the listed items' fields (one header line); ``--fields`` picks and orders the fields
of every listed item, whatever the format. Logged text passes through our sanitiser before any
human-oriented rendering, and is printed as Rich ``Text``, never as markup.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from enum import StrEnum

from soloqueue_mem import jsonio
from soloqueue_mem.errors import UsageError
from soloqueue_mem.sanitize import for_terminal

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import Any


class Format(StrEnum):
    auto = "auto"
    table = "table"
    json = "json"
    jsonl = "jsonl"
    text = "text"
    csv = "csv"
    tsv = "tsv"


DELIMITERS = {Format.csv: ",", Format.tsv: "\t"}
SHORT_COLUMN = 20  # a table column no wider than this stays on one line if it can
LONG_COLUMN = 20  # the least a wider column (the text) keeps of a narrow terminal


def resolve_format(fmt: Format, stdout_is_tty: bool | None = None) -> Format:
    """The format a command renders: csv and tsv take the JSON path (the rows are
    written delimited by :func:`emit_list` and :func:`emit_object`)."""
    if fmt in DELIMITERS:
        return Format.json
    if fmt is not Format.auto:
        return fmt
    if stdout_is_tty is None:
        stdout_is_tty = sys.stdout.isatty()
    return Format.table if stdout_is_tty else Format.json


_text_tables = False
_delimiter: str | None = None  # csv or tsv: the JSON path writes delimited rows
_fields: list[str] | None = None


def use_text_tables(enabled: bool) -> None:
    """Under ``--format text`` a table is printed as plain lines (see ``print_table``)."""
    global _text_tables
    _text_tables = enabled


def use_delimited(fmt: Format) -> None:
    """Under ``--format csv`` or ``tsv``, listings are written as delimited rows."""
    global _delimiter
    _delimiter = DELIMITERS.get(fmt)


def use_fields(spec: str | None) -> None:
    """``--fields a,b,c``: only these fields of each listed item, in this order."""
    global _fields
    if spec is None:
        _fields = None
        return
    names = [name.strip() for name in spec.split(",")]
    if not all(names):
        raise UsageError(f"--fields: expected names separated by commas, got {spec!r}")
    _fields = names


def _chosen(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with only the ``--fields`` asked for (UsageError naming the known ones
    when one is not a field of it)."""
    if _fields is None:
        return row
    unknown = [name for name in _fields if name not in row]
    if unknown:
        raise UsageError(f"--fields: no field {unknown[0]!r} (known: {', '.join(row)})")
    return {name: row[name] for name in _fields}


def _field_text(value: Any) -> str:
    """A value in a CSV/TSV cell: as JSON writes it, without quotes for text."""
    if isinstance(value, str):
        return value
    return "" if value is None else jsonio.dumps_compact(value)


def _delimited(rows: Iterable[dict[str, Any]]) -> None:
    """Rows as CSV/TSV: a header of the first row's fields, then one line per row
    (nested values as compact JSON, null as empty)."""
    import csv

    writer = csv.writer(sys.stdout, delimiter=_delimiter or ",", lineterminator="\n")
    columns: list[str] | None = None
    for row in rows:
        if columns is None:
            columns = list(row)
            writer.writerow(columns)
        writer.writerow([_field_text(row.get(c)) for c in columns])
    sys.stdout.flush()


def cell(value: Any) -> str:
    """A value as a person reads it: never a Python repr (``{'chars': 1}``, ``True``)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict | list | tuple):
        return jsonio.dumps_compact(value)
    return str(value)


def _table_cell(value: Any) -> str:
    """``cell``, with a list of texts one per line (not JSON) and a stored UTC time to
    the minute (``2026-11-29 10:43Z``): a table is for a person, and the full form
    wraps over three lines of a narrow column."""
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return "\n".join(str(v) for v in value)
    text = cell(value)
    if len(text) >= 17 and text[10:11] == "T" and text.endswith("Z") and _is_time(text):
        return f"{text[:10]} {text[11:16]}Z"
    return text


def _is_time(text: str) -> bool:
    from datetime import datetime

    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def flat_pairs(obj: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """A nested object as (dotted key, value) pairs, for a table or text."""
    pairs: list[tuple[str, Any]] = []
    for key, value in obj.items():
        if isinstance(value, dict) and value:
            pairs += flat_pairs(value, f"{prefix}{key}.")
        else:
            pairs.append((f"{prefix}{key}", value))
    return pairs


def turn_summary(content: str | None, tool_calls: Any, tool_results: Any) -> str:
    """A turn in a table cell: its text, then ``→ name(input)`` per tool call and
    ``← result`` per tool result (shortened), so a tool-call turn is never blank."""
    parts = [content or ""]
    parts += [f"→ {c['name']}({jsonio.dumps(c['input'])[:80]})" for c in tool_calls or []]
    parts += [f"← {str(r['content'])[:120]}" for r in tool_results or []]
    return "\n".join(p for p in parts if p)


def write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def emit_object(
    obj: dict[str, Any],
    fmt: Format,
    table: Callable[[], None] | None = None,
    text: Callable[[], str] | None = None,
) -> None:
    """A single result: one JSON object, or the given table/text rendering (else the
    object's fields, one per row or line); csv/tsv: one row."""
    if _delimiter is not None and fmt in (Format.json, Format.jsonl):
        _delimited([_chosen(obj)])
    elif fmt in (Format.json, Format.jsonl):
        write(jsonio.dumps(obj) + "\n")
    elif fmt is Format.table and table is not None:
        table()
    elif fmt is Format.text and text is not None:
        print_text_block(text())
    else:
        print_table(None, ["what", "value"], flat_pairs(obj))


def emit_list(
    rows: Iterable[dict[str, Any]],
    fmt: Format,
    table: Callable[[], None] | None = None,
    text: Callable[[], str] | None = None,
) -> None:
    """A list as a JSON array (streamed) or one object per line; for a person, the
    caller's ``text`` (text format) or ``table`` (table and text formats), else a table
    of the rows' fields; ``--fields`` picks them."""
    if text is not None and fmt is Format.text:
        print_text_block(text())
        return
    if table is not None and fmt in (Format.table, Format.text):
        table()
        return
    if _fields is not None:
        rows = (_chosen(row) for row in rows)
    if _delimiter is not None and fmt in (Format.json, Format.jsonl):
        _delimited(rows)
        return
    if fmt in (Format.table, Format.text):
        listed = list(rows)
        columns = list(listed[0]) if listed else []
        print_table(None, columns, ([row.get(c) for c in columns] for row in listed))
        return
    if fmt is Format.jsonl:
        for row in rows:
            write(jsonio.dumps(row) + "\n")
        return
    out = sys.stdout
    iterator = iter(rows)
    first = next(iterator, None)  # a batch that fails before its first row prints nothing
    if first is None:
        out.write("[]\n")
        out.flush()
        return
    out.write("[\n  " + jsonio.dumps(first))
    try:
        for row in iterator:
            out.write(",\n  " + jsonio.dumps(row))
    finally:  # rows already printed are acknowledged: the array stays valid JSON
        out.write("\n]\n")
        out.flush()


def print_table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """A Rich table on stdout; every cell is sanitised and added as plain Text. Under
    ``--format text``: one line per row, cells separated by tabs (no title, no header),
    a cell's own tabs and line breaks shown as spaces so it cannot forge a row."""
    if _text_tables:
        lines = ("\t".join(" ".join(cell(c).split()) for c in row) + "\n" for row in rows)
        print_text_block("".join(lines))
        return
    from rich.console import Console  # ~60 ms: only for people at a terminal
    from rich.table import Table
    from rich.text import Text

    class StdoutConsole(Console):
        def on_broken_pipe(self) -> None:
            """To the boundary (exit 141, as documented), not Rich's exit 1."""
            raise BrokenPipeError

    console = StdoutConsole()
    cells = [[for_terminal(_table_cell(value)) for value in row] for row in rows]
    table = Table(title=title, show_lines=False)
    for column, width in zip(columns, _column_widths(columns, cells, console.width), strict=True):
        table.add_column(column, overflow="fold", min_width=width, max_width=width)
    for row in cells:
        table.add_row(*(Text(value) for value in row))
    console.print(table)


def _column_widths(columns: Sequence[str], cells: list[list[str]], room: int) -> list[int | None]:
    """The width of each short column (ids, types, scores, times; None: the text takes
    the rest): whole when the room allows, narrowest first, else its longest word, so
    a cell is broken between words (a time: date, then hour), never inside one
    (``PREFEREN|CE``). Each wider column keeps ``LONG_COLUMN`` of the room; when even
    the words do not fit, every width is left to Rich."""
    from rich.cells import cell_len

    def widest(pieces: Iterable[str]) -> int:
        return max((cell_len(piece) for piece in pieces), default=0)

    whole = [
        widest([c, *(ln for row in cells for ln in row[n].splitlines())])
        for n, c in enumerate(columns)
    ]
    short = [n for n, width in enumerate(whole) if width <= SHORT_COLUMN]
    widths: list[int | None] = [None] * len(columns)
    for n in short:
        widths[n] = widest([columns[n], *(w for row in cells for w in row[n].split())])
    room -= 3 * len(columns) + 1 + LONG_COLUMN * (len(columns) - len(short))  # borders
    room -= sum(widths[n] or 0 for n in short)
    if room < 0:
        return [None] * len(columns)
    for n in sorted(short, key=lambda n: whole[n]):
        grow = whole[n] - (widths[n] or 0)
        if grow <= room:
            widths[n], room = whole[n], room - grow
    return widths


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
