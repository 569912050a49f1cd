"""Searchable text from an attachment's bytes, with the standard library only.

Plain text and Markdown are taken as they are, JSON as its keys and string values,
HTML without its tags, scripts and styles. Anything else (images, PDFs, archives,
bytes that are not UTF-8) gives no text: its description and transcription are what
recall finds it by. The text is capped at ``MAX_CHARS``.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from typing import Any

MAX_BYTES = 1 << 20  # only the first MiB of a file is read for its text
MAX_CHARS = 20_000
TEXT_SUFFIXES = {".txt": "text", ".text": "text", ".md": "text", ".markdown": "text",
                 ".rst": "text", ".csv": "text", ".log": "text", ".json": "json",
                 ".html": "html", ".htm": "html"}  # fmt: skip
MIME_KINDS = {"application/json": "json", "text/html": "html"}


def kind_of(filename: str, mime_type: str) -> str | None:
    """``text``, ``json``, ``html`` or None (no text is extracted)."""
    suffix = "." + filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
    if suffix in TEXT_SUFFIXES:
        return TEXT_SUFFIXES[suffix]
    if mime_type in MIME_KINDS:
        return MIME_KINDS[mime_type]
    return "text" if mime_type.startswith("text/") else None


def extract_text(head: bytes, filename: str, mime_type: str) -> str:
    """The searchable text of a file whose first bytes are ``head`` ('' for none)."""
    kind = kind_of(filename, mime_type)
    if kind is None:
        return ""
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:  # not merely a character cut at the MiB boundary
            return ""
        text = head[: exc.start].decode("utf-8")
    if kind == "json":
        text = _json_text(text)
    elif kind == "html":
        text = _html_text(text)
    return " ".join(text.split())[:MAX_CHARS] if kind != "text" else text.strip()[:MAX_CHARS]


def _json_text(text: str) -> str:
    try:
        value = json.loads(text)
    except ValueError:
        return text  # cut at the MiB boundary, or not JSON after all: the raw text
    return " ".join(_strings(value))


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [part for key, item in value.items() for part in (key, *_strings(item))]
    if isinstance(value, list):
        return [part for item in value for part in _strings(item)]
    return [] if value is None or isinstance(value, bool) else [str(value)]


class _TextOnly(HTMLParser):
    """Collects the text of a page, leaving out scripts, styles and templates."""

    SKIPPED = frozenset({"script", "style", "template", "noscript"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIPPED:
            self.skipping += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIPPED and self.skipping:
            self.skipping -= 1

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)


def _html_text(text: str) -> str:
    parser = _TextOnly()
    parser.feed(text)
    parser.close()
    return " ".join(parser.parts)
