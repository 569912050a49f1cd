"""The body of ``hook claude``, shared by the Typer command and the fast parser.

Fail-open: whatever goes wrong (bad payload, bad options, a busy or broken store), the
agent's session goes on. The error is appended to ``logs/hook-errors.jsonl`` and
printed as an ``error:`` line on stderr, and the exit status is still 0: Claude Code
reads exit 2 as "block this prompt or tool call".
"""

from __future__ import annotations

import os
import sys
from typing import Any

from soloqueue_mem.cli.boundary import report
from soloqueue_mem.cli.state import AppContext
from soloqueue_mem.errors import BadInput, SoloqueueError, UsageError
from soloqueue_mem.home import validate_id

HOOK = "claude"


def run_claude_hook(
    app: AppContext,
    event: str | None,
    group: str | None,
    agent: str,
    usage_error: str | None = None,
) -> int:
    """Run one Claude Code hook call; always 0."""
    name = event
    try:
        if usage_error is not None:
            raise UsageError(usage_error)
        name, outcome = _handle(app, event, group, agent)
    except Exception as exc:  # fail-open: every error is logged, none escapes
        if os.environ.get("SOLOQUEUE_DEBUG"):
            raise
        _record(app, name, exc)
        return 0
    if outcome.output is not None:
        sys.stdout.write(outcome.output + "\n")
    if outcome.logged and app.config.extract_on_log:
        from soloqueue_mem.cli.log_run import extract_in_background

        _guarded(app, name, extract_in_background, app, outcome.logged)
    return 0


def _handle(app: AppContext, event: str | None, group: str | None, agent: str) -> tuple[str, Any]:
    from soloqueue_mem.cli.state import check_command
    from soloqueue_mem.integrations.claude_hooks import parse_payload, run_hook

    check_command(app, "hook claude")
    scope = (None if group is None else validate_id("group", group), validate_id("agent", agent))
    name, payload = parse_payload(_payload(app.config.max_input_bytes), event)
    with app.backend() as backend:
        return name, run_hook(app.home, app.config, app.now, scope, name, payload, backend)


def _payload(max_bytes: int) -> bytes:
    if sys.stdin is None or sys.stdin.isatty():
        raise UsageError("expected the hook's JSON payload on stdin")
    data = sys.stdin.buffer.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise BadInput(f"payload is larger than {max_bytes} bytes")
    return data


def _guarded(app: AppContext, event: str | None, fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except Exception as exc:  # noqa: BLE001 - fail-open: logged, never raised
        _record(app, event, exc)


def _record(app: AppContext, event: str | None, exc: Exception) -> None:
    """Report ``exc`` on stderr and append it to the hook error log, if there is one."""
    from soloqueue_mem.integrations.hook_errors import append_error

    if isinstance(exc, SoloqueueError):
        code, message = exc.code, str(exc)
    else:
        code, message = "unexpected", f"unexpected {type(exc).__name__}: {exc}"
    report(code, message, 0)
    try:
        append_error(app.home, HOOK, event, code, message, app.now)
    except Exception as failure:  # noqa: BLE001 - the store is unusable: stderr is all
        report("io", f"cannot log the hook error: {failure}", 0)
