"""``import claude-code PATH...``: Claude Code transcripts into the session logs.

``run_import_claude_code`` is what the shared ``import`` command (``cli/transfer.py``)
calls for this kind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from soloqueue_mem.cli.boundary import report
from soloqueue_mem.cli.output import Format, emit_list, print_table
from soloqueue_mem.cli.progress import ProgressLine
from soloqueue_mem.cli.state import AppContext
from soloqueue_mem.errors import NotFound, PartialFailure
from soloqueue_mem.home import validate_id

KIND = "claude-code"


def transcript_files(paths: list[str]) -> list[Path]:
    """The files named, and the ``*.jsonl`` files under each folder named (sorted);
    NotFound before anything is read when one does not exist."""
    found: list[Path] = []
    for name in paths:
        path = Path(name).expanduser()
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*.jsonl") if p.is_file()))
        elif path.is_file():
            found.append(path)
        else:
            raise NotFound(f"no such transcript: {name}")
    return found


def run_import_claude_code(app: AppContext, paths: list[str], group: str, agent: str) -> None:
    """Import the transcripts; print one summary per file; report each bad line (exit
    65 after the good ones are imported, like ``log --batch``)."""
    validate_id("group", group)
    validate_id("agent", agent)
    files = transcript_files(paths)
    with (
        app.store() as store,
        ProgressLine(app.quiet, f"importing {len(files)} transcript(s)") as line,
    ):
        progress = line.advance if line is not None else None
        results = store.import_claude_code(files, group=group, agent=agent, progress=progress)
    rows: list[dict[str, Any]] = []
    for result in results:
        for rejected in result.rejected:
            report("bad_input", f"{result.path} line {rejected.line}: {rejected.reason}", 65)
        rows.append({**result._asdict(), "rejected": len(result.rejected)})
    _emit(rows, app.format)
    bad = sum(row["rejected"] for row in rows)
    if bad:
        raise PartialFailure(f"{bad} line(s) rejected, the others were imported")


def _emit(rows: list[dict[str, Any]], fmt: Format) -> None:
    if fmt is Format.table:
        print_table(
            None,
            ["path", "imported", "duplicates", "rejected", "sessions"],
            (
                (r["path"], r["imported"], r["duplicates"], r["rejected"], ", ".join(r["sessions"]))
                for r in rows
            ),
        )
    elif fmt is Format.text:
        for row in rows:
            typer.echo(f"{row['path']}\t{row['imported']}")
    else:
        emit_list(iter(rows), fmt)
