"""Which group a Claude Code hook writes to: one per project unless configured to share.

A project is the git work tree holding the hook's ``cwd`` (the nearest folder upwards
with a ``.git`` entry), else ``cwd`` itself. Its group is the folder's name, made a
valid id, plus a short hash of its full path: readable in ``memory list`` and stable
across sessions, and two projects both called ``api`` stay apart. ``hook_group`` in
``config.toml`` names one group for every project instead; ``--group`` (or
``SOLOQUEUE_GROUP``) on the hook command wins over both.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Any, NamedTuple

HASH_CHARS = 6
NAME_CHARS = 40
FALLBACK = "default"  # no --group, no hook_group, no usable cwd
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class HookGroup(NamedTuple):
    """The group a hook uses and why: ``project`` (its folder), ``shared``
    (``hook_group``), ``given`` (``--group``) or ``default`` (no cwd)."""

    group: str
    mode: str
    project: str | None = None


def hook_group(given: str | None, shared: str, cwd: Any) -> HookGroup:
    """The hook's group from ``--group``, else the ``hook_group`` setting, else the
    project of the payload's ``cwd``."""
    if given is not None:
        return HookGroup(given, "given")
    if shared:
        return HookGroup(shared, "shared")
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        return HookGroup(FALLBACK, "default")
    root = project_root(cwd)
    return HookGroup(project_group(root), "project", root)


def project_root(cwd: str) -> str:
    """The git work tree holding ``cwd`` (a ``.git`` folder or file), else ``cwd``."""
    path = os.path.normpath(cwd)
    folder = path
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return path
        folder = parent


def project_group(root: str) -> str:
    """A valid group id for the project at ``root``: ``name-1a2b3c``."""
    digest = hashlib.sha256(root.encode("utf-8", "surrogateescape")).hexdigest()[:HASH_CHARS]
    name = _UNSAFE.sub("-", os.path.basename(root)).strip("-._")[:NAME_CHARS].rstrip("-._")
    return f"{name}-{digest}" if name else f"project-{digest}"
