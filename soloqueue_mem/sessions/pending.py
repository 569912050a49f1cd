"""Markers of appends that may not be indexed yet, so readers need not scan every log.

A writer creates ``pending/<group>=<agent>=<session>`` (holding the key) before
it appends to a session's JSONL and removes it after the index transaction commits or
rolls back. A marker that survives means a writer died in between: ``trace`` then
scans that one session's unindexed tail, and the session's next ``log`` indexes it.
"""

from __future__ import annotations

import json
import os

from soloqueue_mem.errors import StorageError
from soloqueue_mem.home import Home, ensure_private_dir
from soloqueue_mem.sessions.events import SessionKey


def _marker(home: Home, key: SessionKey) -> str:
    name = "=".join(key)  # "=" cannot occur in an id, so the name is unambiguous
    if len(name) > 200:  # file names are limited to 255 bytes; ids may be 128 each
        import hashlib  # loads OpenSSL (~2 ms): only for very long ids

        name = hashlib.sha256(name.encode()).hexdigest()
    return home.path("pending", name)


def mark(home: Home, key: SessionKey) -> None:
    path = _marker(home, key)
    ensure_private_dir(home.dir, os.path.dirname(path))
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise StorageError(f"cannot create {path}: {exc.strerror}") from None
    try:
        os.write(fd, json.dumps(list(key)).encode())
    finally:
        os.close(fd)


def clear(home: Home, key: SessionKey) -> None:
    try:
        os.unlink(_marker(home, key))
    except FileNotFoundError:
        pass


def pending_sessions(home: Home) -> list[SessionKey]:
    """Sessions whose JSONL may hold turns the index lacks."""
    folder = home.path("pending")
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return []
    keys = []
    for name in names:
        try:
            with open(os.path.join(folder, name), "rb") as marker:
                group, agent, session = json.loads(marker.read())
            keys.append(SessionKey(group, agent, session))
        except (OSError, ValueError, TypeError):
            continue  # a marker torn by a crash: the session's next log repairs it
    return keys
