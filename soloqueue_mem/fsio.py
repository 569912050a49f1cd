"""Low-level file writing shared by the session logs and the blob store."""

from __future__ import annotations

import os


def write_all(fd: int, data: bytes) -> None:
    """``os.write`` until every byte is written (a single write may be short)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
