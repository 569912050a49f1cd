"""Terminal-safe text: logged content must never drive the user's terminal.

Rich strips only a few controls and passes ESC sequences (clear screen, OSC 52
clipboard, OSC 8 links) and C1 codes through, so every human-oriented renderer runs
untrusted text through :func:`for_terminal` first and prints it as plain ``Text``.
"""

from __future__ import annotations

import re
from functools import cache


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
