"""Text a command reads from a file or stdin (``-``): never more than
``max_input_bytes`` (an endless pipe is refused after cap + 1 bytes; a named FIFO or
device before it is opened), decoded strictly as UTF-8."""

from __future__ import annotations

import sys

from soloqueue_mem import jsonio
from soloqueue_mem.errors import BadInput, NotFound, UsageError

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from pathlib import Path


def argument_or_stdin(value: str) -> str:
    """``value``, or for ``-`` the first 64 KiB of stdin (a query, a scratchpad)."""
    if value != "-":
        return value
    if sys.stdin is None:
        raise UsageError("stdin is closed")
    return jsonio.decode_utf8(sys.stdin.buffer.read(64 * 1024))


def read_source(source: str, cap: int) -> str:
    """The UTF-8 text of the file ``source``, or of stdin for ``-``."""
    if source != "-":
        from pathlib import Path  # not at import: recall reads its query with this module

        return read_file(Path(source), cap)
    if sys.stdin is None:
        raise UsageError("stdin is closed")
    return _checked(sys.stdin.buffer.read(cap + 1), cap)


def read_file(path: Path, cap: int) -> str:
    """The UTF-8 text of the regular file at ``path`` (``-`` is a file name here)."""
    from soloqueue_mem.bounded_io import open_regular

    try:
        with open_regular(path) as handle:
            data = handle.read(cap + 1)
    except NotFound as exc:  # as it always was here: what the user gave cannot be read
        raise BadInput(str(exc)) from None
    except OSError as exc:
        raise BadInput(f"cannot read {path}: {exc.strerror}") from None
    return _checked(data, cap)


def _checked(data: bytes, cap: int) -> str:
    if len(data) > cap:
        raise BadInput(f"input is larger than max_input_bytes ({cap})")
    return jsonio.decode_utf8(data)
