"""The one place errors become an ``error:`` line (or JSON object) and an exit code."""

from __future__ import annotations

import functools
import os
import sqlite3
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import typer

from soloqueue_mem import jsonio
from soloqueue_mem.errors import SoloqueueError
from soloqueue_mem.sanitize import for_terminal

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


def boundary(fn: F) -> F:
    """Wrap a command: our errors map to their exit codes, nothing shows a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except typer.Exit:
            raise
        except SoloqueueError as exc:
            report(exc.code, str(exc), exc.exit_code, getattr(exc, "line", None))
            raise typer.Exit(exc.exit_code) from None
        except BrokenPipeError:
            # A reader such as `head -1` went away: stop quietly, like git does.
            _silence_stdout()
            raise typer.Exit(141) from None
        except KeyboardInterrupt:
            raise typer.Exit(130) from None
        except sqlite3.Error as exc:
            report("io", f"database error: {exc}", 74)
            raise typer.Exit(74) from None
        except Exception as exc:  # noqa: BLE001 - the last line of defence
            if os.environ.get("SOLOQUEUE_DEBUG"):
                raise
            report(
                "unexpected",
                f"unexpected {type(exc).__name__}: {exc} (set SOLOQUEUE_DEBUG=1 for a traceback)",
                1,
            )
            raise typer.Exit(1) from None

    return wrapper  # type: ignore[return-value]


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
