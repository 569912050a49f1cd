"""The one place errors become an ``error:`` line (or JSON object) and an exit code."""

from __future__ import annotations

import functools
import os
import sqlite3
import sys
from collections.abc import Callable

from soloqueue_mem import jsonio
from soloqueue_mem.errors import BadOption, SoloqueueError, UsageError
from soloqueue_mem.sanitize import for_terminal

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import Any, TypeVar

    F = TypeVar("F", bound=Callable[..., Any])

_json_errors = False


def use_json_errors(enabled: bool) -> None:
    """Errors go to stderr as ``{"error": {...}}`` when --format json/jsonl was given."""
    global _json_errors
    _json_errors = enabled


def report(code: str, message: str, exit_code: int, line: int | None = None) -> None:
    """One error on stderr: ``error: message``, or a JSON object in JSON mode."""
    if _json_errors:
        error: dict[str, object] = {"code": code, "message": message, "exit_code": exit_code}
        if line is not None:
            error["line"] = line
        sys.stderr.write(jsonio.dumps({"error": error}) + "\n")
    else:
        sys.stderr.write(f"error: {for_terminal(message)}\n")
    sys.stderr.flush()


def run_guarded(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> int:
    """Call ``fn``; return the exit status its outcome maps to. Nothing escapes as a
    traceback unless ``SOLOQUEUE_DEBUG`` is set."""
    try:
        fn(*args, **kwargs)
        sys.stdout.flush()  # a reader gone by now is exit 141 too, not a shutdown warning
        return 0
    except BadOption as exc:  # an option's value here, a body's field over HTTP
        report(UsageError.code, str(exc), UsageError.exit_code)
        return UsageError.exit_code
    except SoloqueueError as exc:
        report(exc.code, str(exc), exc.exit_code, getattr(exc, "line", None))
        return exc.exit_code
    except BrokenPipeError:
        # A reader such as `head -1` went away: stop quietly, like git does.
        _silence_stdout()
        return 141
    except KeyboardInterrupt:
        return 130
    except sqlite3.Error as exc:
        report("io", f"database error: {exc}", 74)
        return 74
    except Exception as exc:
        if os.environ.get("SOLOQUEUE_DEBUG") or _is_typer_exit(exc):
            raise
        report(
            "unexpected",
            f"unexpected {type(exc).__name__}: {exc} (set SOLOQUEUE_DEBUG=1 for a traceback)",
            1,
        )
        return 1


def _is_typer_exit(exc: BaseException) -> bool:
    """Typer's own exits and usage errors pass through to Typer."""
    return type(exc).__module__.startswith(("typer", "click"))


def boundary(fn: F) -> F:
    """Wrap a Typer command: our errors map to their exit codes once, here."""
    import typer  # the modules that use this decorator have imported it already

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        code = run_guarded(fn, *args, **kwargs)
        if code:
            raise typer.Exit(code)

    return wrapper  # type: ignore[return-value]


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
