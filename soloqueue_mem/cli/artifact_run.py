"""The body of ``artifact save`` and the rendering every ``artifact`` command shares.

Shared by the Typer commands (``cli.artifact``) and the fast parser (``cli.fast``),
so neither imports Typer here.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager as ContextManager
from contextlib import contextmanager
from typing import TYPE_CHECKING, BinaryIO, cast

from soloqueue_mem.api.shapes import artifact_json
from soloqueue_mem.cli.output import emit_object, print_table
from soloqueue_mem.cli.state import AppContext, opened
from soloqueue_mem.errors import BadInput, UsageError

if TYPE_CHECKING:
    import sqlite3

    from soloqueue_mem.artifacts.catalog import Artifact


def rows_table(rows: list[Artifact]) -> None:
    print_table(
        None,
        ["id", "title", "tags", "size", "created", "sha256"],
        (
            (a.id, a.title or "", " ".join(a.tags), a.size, a.created_at, a.content_hash[:12])
            for a in rows
        ),
    )


def open_catalog(app: AppContext, create: bool) -> ContextManager[sqlite3.Connection]:
    """This host's artifact catalog until the block ends; NotFound when there is none."""
    from soloqueue_mem.storage import catalog

    conn = catalog.open_catalog(app.home, app.config, create=create)
    return opened(conn, "no artifacts yet (no data directory or artifacts.db)")


@contextmanager
def open_source(source: str, cap: int, setting: str) -> Iterator[BinaryIO]:
    """The content to save: the regular file named ``source``, or stdin for ``-``,
    refused once it gives more than ``cap`` bytes (``setting`` names the cap)."""
    from soloqueue_mem.bounded_io import Capped, open_regular

    if source == "-":
        if sys.stdin is None:
            raise UsageError("stdin is closed")
        yield Capped(sys.stdin.buffer, cap, setting)  # type: ignore[misc]
        return
    with open_regular(source) as stream:
        yield Capped(stream, cap, setting)  # type: ignore[misc]


def _is_text(value: str) -> bool:
    """False for arguments that held bytes the locale could not decode (surrogates)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def redacted_source(stream: BinaryIO, app: AppContext) -> BinaryIO:
    """The content with its secrets replaced. Text is read whole (at most
    max_input_bytes); content that is not UTF-8 text (a NUL byte or bad UTF-8 in its
    first 64 KiB) is stored as given, streamed, so saving a large binary file works
    with redaction on."""
    import io

    from soloqueue_mem.redact import redacted_bytes

    head = stream.read(_SNIFF_BYTES)
    if not _looks_like_text(head):
        return cast("BinaryIO", _Rejoined(head, stream))
    cap = app.config.max_input_bytes
    data = head + stream.read(max(cap + 1 - len(head), 0))
    if len(data) > cap:
        raise BadInput(f"with redact on, text is read whole: at most max_input_bytes ({cap})")
    assert app.redactor is not None
    return io.BytesIO(redacted_bytes(data, app.redactor))


_SNIFF_BYTES = 64 * 1024


def _looks_like_text(head: bytes) -> bool:
    import codecs

    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return False
    return b"\0" not in head


class _Rejoined:
    """A stream of ``head`` and then the rest of ``stream``."""

    def __init__(self, head: bytes, stream: BinaryIO) -> None:
        self.head, self.stream = head, stream

    def read(self, size: int = -1) -> bytes:
        if not self.head:
            return self.stream.read(size)
        chunk, self.head = (
            (self.head, b"") if size < 0 or size >= len(self.head)
            else (self.head[:size], self.head[size:])
        )  # fmt: skip
        return chunk


def run_save(
    app: AppContext,
    source: str,
    title: str | None,
    tags: Sequence[str],
    group: str | None,
    author: str | None,
    mime: str | None,
) -> None:
    """Store ``source`` and print the new row with ``new_blob`` (see ``artifact save``)."""
    from soloqueue_mem.artifacts.store import NewArtifact, save
    from soloqueue_mem.home import validate_id

    if group is not None:
        validate_id("group", group)
    for name, value in (
        ("--title", title),
        ("--author", author),
        ("--mime", mime),
        *(("--tag", t) for t in tags),
    ):
        if value is not None and not _is_text(value):
            raise BadInput(f"{name} is not valid UTF-8 text")
    meta = NewArtifact(title, tuple(tags), group, author, mime)
    with open_source(source, app.config.max_artifact_bytes, "max_artifact_bytes") as given:
        stream = given if app.redactor is None else redacted_source(given, app)
        with open_catalog(app, create=True) as conn:
            saved = save(app.home, conn, stream, meta, app.now)
    data = {**artifact_json(saved.artifact), "new_blob": saved.new_blob}
    emit_object(data, app.format, table=lambda: rows_table([saved.artifact]))
