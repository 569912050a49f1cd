"""The body of ``log``, shared by the Typer command and the fast parser (no Typer)."""

from __future__ import annotations

import sys
from collections.abc import Iterator

from soloqueue_mem import jsonio
from soloqueue_mem.api.shapes import turn_json
from soloqueue_mem.cli.boundary import report
from soloqueue_mem.cli.output import Format, emit_list, print_table, stderr
from soloqueue_mem.cli.state import AppContext
from soloqueue_mem.errors import BadInput, PartialFailure, UsageError
from soloqueue_mem.home import validate_id
from soloqueue_mem.sessions.events import Event, parse_event
from soloqueue_mem.sessions.writer import Flush, Item, LoggedTurn, Rejected
from soloqueue_mem.storage import open_backend
from soloqueue_mem.storage.catalog import offloader as new_offloader

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import Any

    from soloqueue_mem.storage.base import Backend


def _stdin() -> Any:
    if sys.stdin is None:  # started with stdin closed (`<&-`)
        raise UsageError("stdin is closed: give the text as an argument")
    return sys.stdin.buffer


def _event_from_args(
    text: str, role: str, event_id: str | None, metadata: str | None, max_bytes: int
) -> Event:
    if text == "-":
        data = _stdin().read(max_bytes + 1)
        if len(data) > max_bytes:
            raise BadInput(f"input is larger than {max_bytes} bytes")
        text = jsonio.decode_utf8(data)
    obj: dict[str, Any] = {"role": role, "content": text}
    if event_id is not None:
        obj["event_id"] = event_id
    if metadata is not None:
        obj["metadata"] = jsonio.loads(metadata)
    jsonio.check_value(obj)  # arguments that were not valid UTF-8 arrive as surrogates
    return parse_event(obj)


def _acknowledging(items: Iterator[Item]) -> Iterator[Item]:
    """The batch's items, flushing stdout whenever the reader is about to wait for input.

    Trigger: a live producer (a hook) waits for each acknowledgement before it writes
    the next event. Why: a flush per printed turn cost a write per turn on a large
    import; here the output is flushed once per wait. Outcome: the writer asks for the
    item after a :class:`Flush` only once it has committed that chunk and its turns
    have been printed, so they are all on their way before the read blocks.
    """
    for item in items:
        yield item
        if isinstance(item, Flush):
            sys.stdout.flush()


def run_log(
    app: AppContext,
    text: str | None,
    role: str,
    batch: bool,
    event_id: str | None,
    metadata: str | None,
    offload: bool,
    group: str,
    agent: str,
    session: str | None,
    echo: bool = False,
) -> None:
    """Validate, read the input, log it, print the stored turns (see ``log --help``):
    for a batch without ``--echo`` or an explicit ``--format``, a summary instead."""
    validate_id("group", group)
    validate_id("agent", agent)
    if session is not None:
        validate_id("session", session)
    if batch and text is not None:
        raise UsageError("--batch reads stdin; do not also give TEXT")
    if text is None and not batch and sys.stdin is not None and sys.stdin.isatty():
        raise UsageError(
            'give the text as an argument (log --role user "hi") or pipe JSON to stdin'
        )
    config = app.config
    if batch:
        from soloqueue_mem.sessions.intake import read_batch, with_batch_keys  # not for TEXT

        lines = read_batch(_stdin(), config.max_line_bytes)
        items: Any = _acknowledging(with_batch_keys(lines, app.redactor))
    elif text is not None:
        items = [(None, _event_from_args(text, role, event_id, metadata, config.max_input_bytes))]
    else:
        from soloqueue_mem.sessions.intake import read_document

        items = [(None, event) for event in read_document(_stdin(), config.max_input_bytes)]
    written = config._replace(redact=False) if batch else config  # redacted above
    backend = open_backend(app.home, written)
    offloader = new_offloader(app.home, config, app.now, all_content=offload)
    extract = config.extract_on_log
    logged: list[LoggedTurn] | None = [] if extract else None  # bounded memory
    try:
        results = backend.log(items, (group, agent, session), app.now, offloader)
        committed = _Committed(results)
        single = not batch and len(items) == 1
        try:
            if batch and not echo and app.format_option is Format.auto:
                rejected = _emit_summary(app, committed, logged)
            else:
                rejected = _emit(committed, app.format, batch=batch, single=single, logged=logged)
        except KeyboardInterrupt:
            if batch:
                stderr(
                    f"interrupted: {committed.lines} line(s) committed "
                    "(logging the same file again adds only the others)"
                )
            raise
        if logged:
            extract_in_background(app, logged, backend)
    finally:
        offloader.close()
        backend.close()
    if rejected and not batch:
        raise BadInput(rejected[0].reason, rejected[0].line)
    if rejected:
        raise PartialFailure(f"{len(rejected)} line(s) rejected, the others were logged")


class _Committed:
    """The writer's results, counting the lines it committed (logged or duplicates)."""

    def __init__(self, results: Iterator[LoggedTurn | Rejected]) -> None:
        self.results = results
        self.lines = 0

    def __iter__(self) -> Iterator[LoggedTurn | Rejected]:
        for result in self.results:
            self.lines += not isinstance(result, Rejected)
            yield result


def extract_in_background(
    app: AppContext, logged: list[LoggedTurn], backend: Backend | None = None
) -> None:
    """Start a worker for the candidate turns of sessions that are not full yet (asking
    ``backend``, the open one, or the configured back end)."""
    from soloqueue_mem.lifecycle.on_log import targets

    chosen = targets(
        (t.group, t.agent, t.session, t.turn_index, t.role, t.content, t.duplicate) for t in logged
    )
    if chosen and backend is not None:
        chosen = backend.open_extraction_sessions(chosen)
    elif chosen:
        opened = open_backend(app.home, app.config)
        try:
            chosen = opened.open_extraction_sessions(chosen)
        finally:
            opened.close()
    if chosen:
        from soloqueue_mem.cli.extract_worker import start

        start(app.home.root, chosen)


def _emit_summary(app: AppContext, results: Any, logged: list[LoggedTurn] | None) -> list[Rejected]:
    """A batch's counts instead of every turn (a 50k-line batch echoed 21 MB), with a
    progress line on a terminal; the rejected lines are reported as they come."""
    from soloqueue_mem.cli.output import emit_object, write
    from soloqueue_mem.cli.progress import ProgressLine

    rejected: list[Rejected] = []
    turns = duplicates = 0
    sessions: set[tuple[str, str, str]] = set()
    with ProgressLine(app.quiet, "logging turns") as line:
        for result in results:
            if isinstance(result, Rejected):
                rejected.append(result)
                where = f"line {result.line}: " if result.line is not None else ""
                report("bad_input", f"{where}{result.reason}", 65, result.line)
                continue
            turns += 1
            duplicates += result.duplicate
            sessions.add((result.group, result.agent, result.session))
            if logged is not None:
                logged.append(result)
            if line is not None:
                line.advance(1)
    summary = {
        "logged": turns,
        "duplicates": duplicates,
        "rejected": len(rejected),
        "sessions": len(sessions),
    }
    emit_object(
        summary,
        app.format,
        table=lambda: write(
            f"logged {turns} turn(s) in {len(sessions)} session(s): "
            f"{duplicates} duplicate(s), {len(rejected)} rejected\n"
        ),
    )
    return rejected


def _emit(
    results: Any, fmt: Format, batch: bool, single: bool, logged: list[LoggedTurn] | None
) -> list[Rejected]:
    """Print the acknowledged turns (and collect them in ``logged`` when given); return
    the rejected lines."""
    rejected: list[Rejected] = []

    def accepted() -> Any:
        for result in results:
            if isinstance(result, Rejected):
                rejected.append(result)
                if not batch:
                    continue  # the whole call fails with this reason
                where = f"line {result.line}: " if result.line is not None else ""
                report("bad_input", f"{where}{result.reason}", 65, result.line)
                continue
            if logged is not None:
                logged.append(result)
            yield result

    if fmt is Format.table:
        rows = list(accepted())
        if rows:
            print_table(
                None,
                ["session", "turn", "role", "id", "content"],
                (
                    (
                        f"{r.group}/{r.agent}/{r.session}",
                        r.turn_index,
                        r.role,
                        r.id,
                        r.content[:80] + (" (duplicate)" if r.duplicate else ""),
                    )
                    for r in rows
                ),
            )
    elif fmt is Format.text:
        for r in accepted():
            sys.stdout.write(f"{r.session}#{r.turn_index}\n")
    elif single and fmt is Format.json:
        rows = [turn_json(r) for r in accepted()]
        if rows:
            sys.stdout.write(jsonio.dumps(rows[0]) + "\n")
    elif batch and fmt is Format.jsonl:  # flushed when the reader waits (_acknowledging)
        for r in accepted():
            sys.stdout.write(jsonio.dumps(turn_json(r)) + "\n")
        sys.stdout.flush()
    else:
        emit_list((turn_json(r) for r in accepted()), fmt)
    return rejected
