"""``soloqueue-mem export`` and ``import``: move a store's data in and out."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO, Annotated, Any

import typer

from soloqueue_mem.api.base import check_ids
from soloqueue_mem.cli.options import (
    AgentFilter,
    AgentOpt,
    GroupFilter,
    GroupOpt,
    command,
)
from soloqueue_mem.cli.output import emit_list, emit_object, stderr
from soloqueue_mem.cli.state import AppContext
from soloqueue_mem.errors import BadInput, NotFound, UsageError
from soloqueue_mem.home import validate_id

KINDS = ("dump", "memories-v1", "claude-code")
SNIFF_BYTES = 64 * 1024


@command
def export(
    app_ctx: AppContext,
    with_blobs: Annotated[
        bool, typer.Option("--with-blobs", help="Put artifacts' bytes in the dump (base64).")
    ] = False,
    output: Annotated[
        str | None, typer.Option("--output", "-o", help="Write to this file, not stdout.")
    ] = None,
    group: GroupFilter = None,
    agent: AgentFilter = None,
) -> None:
    """Write everything that is not derived as a versioned JSONL dump (always JSONL):
    sessions as logged, memories with their history, episodes, scratchpads, working
    memory, attachments, kv and session state, embeddings, the graph memory, artifact
    rows (and their blobs with --with-blobs), then an end record (counts, sha256).
    `import` reads it back."""
    check_ids(group=group, agent=agent)
    with ExitStack() as stack:
        out = _output(stack, output)
        store = stack.enter_context(app_ctx.store())
        store.export(out, group=group, agent=agent, with_blobs=with_blobs)
        out.flush()


def _output(stack: ExitStack, output: str | None) -> IO[str]:
    """stdout, or the file ``output`` that appears whole once the export is done."""
    if output is None or output == "-":
        return sys.stdout
    from soloqueue_mem.ops.dump_file import new_file

    return stack.enter_context(new_file(output))


@command
def import_command(
    app_ctx: AppContext,
    args: Annotated[
        list[str],
        typer.Argument(
            help="[KIND] PATH...: KIND is dump, memories-v1 or claude-code (told from the "
            "file when left out); PATH a file, or '-' for stdin.",
            metavar="[KIND] PATH...",
        ),
    ],
    group: GroupOpt = "default",
    agent: AgentOpt = "default",
) -> None:
    """Import data: an `export` dump (idempotent: what is there is left alone and
    conflicts are reported), a version 1 memories.json (into --group/--agent), or
    Claude Code transcripts."""
    kind = _kind(args)
    paths = args[1:] if kind else args
    if not paths:
        raise UsageError(f"give a PATH to import after {kind}")
    validate_id("group", group)
    validate_id("agent", agent)
    if kind is None and all(_is_transcript(path) for path in paths):
        kind = "claude-code"  # folders, or files whose first line is a transcript's
    if kind == "claude-code":
        from soloqueue_mem.cli.import_claude import run_import_claude_code

        run_import_claude_code(app_ctx, paths, group, agent)
        return
    reports = []
    for path in paths:
        with _source(path, app_ctx.config.max_dump_line_bytes) as source:
            chosen = kind or _sniff(source, path)
            if chosen == "claude-code":
                raise UsageError(f"{path} is a Claude Code transcript: import it on its own")
            report = _import_one(app_ctx, chosen, source, group, agent)
        reports.append({"path": path, "kind": chosen, **report})
        if chosen == "dump" and report["complete"] is None:
            stderr(f"warning: {path}: a dump written before end records (version 1 or 2): "
                   "whether it is whole cannot be checked", app_ctx.quiet)  # fmt: skip
        if report.get("conflicts"):
            stderr(f"warning: {path}: {len(report['conflicts'])} conflict(s)", app_ctx.quiet)
    if len(reports) == 1:
        emit_object(reports[0], app_ctx.format)
    else:
        emit_list(reports, app_ctx.format)


def _kind(args: list[str]) -> str | None:
    """The KIND given first, if one was; a first word that is neither a kind nor a
    file, followed by paths, is an unknown kind (a usage error)."""
    first = args[0]
    if first in KINDS:
        return first
    if len(args) > 1 and first != "-" and "/" not in first and not Path(first).exists():
        raise UsageError(f"unknown import kind {first!r} (use {', '.join(KINDS)})")
    return None


def _is_transcript(path: str) -> bool:
    """A folder (only transcripts are imported by folder) or a transcript file."""
    if path == "-":
        return False
    if Path(path).is_dir():
        return True
    from soloqueue_mem.bounded_io import open_regular

    try:
        with open_regular(path) as handle:
            return _sniff(handle, path) == "claude-code"
    except (OSError, BadInput, NotFound):
        return False


@contextmanager
def _source(path: str, cap: int) -> Iterator[IO[bytes]]:
    """The file to import, seekable (it is read twice): a regular file, or stdin
    spooled first (refused past ``cap`` bytes without a line break: an endless line)."""
    import tempfile

    from soloqueue_mem.bounded_io import open_regular, read_capped_line

    if path != "-":
        with open_regular(path) as given:
            yield given
        return
    if sys.stdin is None:
        raise UsageError("stdin is closed")
    with tempfile.TemporaryFile() as spool:
        number = 1
        while line := read_capped_line(sys.stdin.buffer, cap, "max_dump_line_bytes", number):
            spool.write(line)
            number += 1
        spool.seek(0)
        yield spool


def _sniff(source: IO[bytes], path: str) -> str:
    """The kind of file ``source`` is, from its first line."""
    from soloqueue_mem import jsonio
    from soloqueue_mem.ops.dump_format import FORMAT

    head = source.read(SNIFF_BYTES)
    source.seek(0)
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"["):
        return "memories-v1"
    first = text.split(b"\n", 1)[0]
    try:
        obj = jsonio.loads(first)
    except BadInput:
        obj = None
    if isinstance(obj, dict):
        if obj.get("kind") == "header" and obj.get("format") == FORMAT:
            return "dump"
        if "memories" in obj:
            return "memories-v1"
        if "sessionId" in obj or obj.get("type") in ("user", "assistant", "summary"):
            return "claude-code"
        if "turn_index" in obj and "role" in obj:
            raise BadInput(
                f"{path} is a session log: log it again with "
                "`soloqueue-mem log --batch --session S < FILE`"
            )
    if text.startswith(b"{") and b'"memories"' in head:
        return "memories-v1"
    raise BadInput(f"cannot tell what {path} holds: give KIND ({', '.join(KINDS)})")


def _import_one(
    app_ctx: AppContext, kind: str, source: IO[bytes], group: str, agent: str
) -> dict[str, Any]:
    if kind == "dump":
        with app_ctx.store() as store:
            return store.import_dump(source)
    cap = app_ctx.config.max_input_bytes
    data = source.read(cap + 1)
    if len(data) > cap:
        raise BadInput(f"the file is larger than max_input_bytes ({cap})")
    with app_ctx.store() as store:
        return store.import_memories_v1(data, group=group, agent=agent)
