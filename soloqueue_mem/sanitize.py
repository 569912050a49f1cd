"""Terminal-safe text: logged content must never drive the user's terminal.

Rich strips only a few controls and passes ESC sequences (clear screen, OSC 52
clipboard, OSC 8 links) and C1 codes through, so every human-oriented renderer runs
untrusted text through :func:`for_terminal` first and prints it as plain ``Text``.
"""

from __future__ import annotations

import re
from functools import cache

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any


@cache
def _unsafe() -> re.Pattern[str]:
    """C0 controls except \\t and \\n, DEL, C1 controls, and bidi/zero-width format
    characters; compiled on first use (a successful ``log`` prints no table, no error)."""
    return re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def _placeholder(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\x1b":
        return "\u241b"  # ␛
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def for_terminal(text: str) -> str:
    """Replace control and bidi characters with visible placeholders."""
    return _unsafe().sub(_placeholder, text)


class TerminalStream:
    """stdout when it is a terminal: every write passes through :func:`for_terminal`,
    whatever prints it (a renderer, a Markdown export, Typer, an artifact's bytes), so
    stored text never drives the terminal. Rich writes to the terminal itself (its
    ``rich_proxied_file``): it styles tables whose cells were sanitised already."""

    def __init__(self, raw: Any) -> None:
        self.rich_proxied_file = raw
        self.buffer = _TerminalBytes(raw)

    def write(self, text: str) -> int:
        self.rich_proxied_file.write(for_terminal(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, fileno, isatty, encoding ...
        return getattr(self.rich_proxied_file, name)


class _TerminalBytes:
    """``stdout.buffer`` on a terminal: bytes decoded as UTF-8 (a bad sequence shown as
    U+FFFD), sanitised, and written as text."""

    def __init__(self, text: Any) -> None:
        import codecs

        self.text = text
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def write(self, data: bytes) -> int:
        self.text.write(for_terminal(self.decoder.decode(bytes(data))))
        return len(data)

    def flush(self) -> None:
        self.text.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.text.buffer, name)
