"""Stored text inside line-oriented output (recall's ``[记忆]`` blocks, ``trace``'s
``[s1#3 user …]`` lines): every line after the first is indented, so text a user or a
tool wrote can never start a line that reads as a record, a header or a separator."""

from __future__ import annotations

CONTINUATION = "\n  "


def within_record(text: str) -> str:
    """``text`` with its further lines (after any line break) indented two spaces."""
    return CONTINUATION.join(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
