"""The body of ``artifact save`` and the rendering every ``artifact`` command shares.

Shared by the Typer commands (``cli.artifact``) and the fast parser (``cli.fast``),
so neither imports Typer here.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager as ContextManager
from contextlib import contextmanager
from typing import TYPE_CHECKING, BinaryIO

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
    from soloqueue_mem.redact import redacted_stream

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
        stream = redacted_stream(given, app.redactor, app.config.max_input_bytes)
        with open_catalog(app, create=True) as conn:
            saved = save(app.home, conn, stream, meta, app.now)
    data = {**artifact_json(saved.artifact), "new_blob": saved.new_blob}
    emit_object(data, app.format, table=lambda: rows_table([saved.artifact]))
