"""The exception tree every layer raises; the CLI maps it to exit codes once.

Each class carries the exit status of SPEC §4 and a short machine code that appears
in the JSON error object. Core code never chooses exit codes at catch sites.
"""

from __future__ import annotations


class SoloqueueError(Exception):
    """Base of every error a user can cause or fix. A subclass names its code and exit
    status beside its base (``class NotFound(SoloqueueError, code=..., exit_code=3)``)
    and keeps its parent's where it names none."""

    exit_code = 1
    code = "error"

    def __init_subclass__(cls, *, code: str | None = None, exit_code: int | None = None) -> None:
        super().__init_subclass__()
        if code is not None:
            cls.code = code
        if exit_code is not None:
            cls.exit_code = exit_code


class UsageError(SoloqueueError, code="usage", exit_code=2):
    """Options or arguments that do not make sense together."""


class NotFound(SoloqueueError, code="not_found", exit_code=3):
    """What was named (an id, a key, a session) is not in the store."""


class BadInput(SoloqueueError, code="bad_input", exit_code=65):
    """Input data that cannot be accepted; ``line`` is 1-based when known."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        self.reason = reason
        self.line = line
        super().__init__(f"line {line}: {reason}" if line is not None else reason)


class BadOption(BadInput):
    """A request's number out of its range (``limit`` 0). Over HTTP and MCP it is a
    field of the body, bad input (65); on the command line it is an option's value, which
    the CLI reports as every bad option value: a usage error (exit 2)."""


class InvalidId(BadInput, code="invalid_id"):
    """A group, agent, session or key id outside the allowed characters."""


class NoStore(SoloqueueError, code="no_store", exit_code=66):
    """The data directory does not exist, for a command that only uses one (a typo in
    ``--root`` must not pass unnoticed as an empty store)."""


class StorageError(SoloqueueError, code="io", exit_code=74):
    """The data directory or a database cannot be used safely."""


class SchemaTooNew(StorageError, code="schema_too_new"):
    """A database written by a newer version of soloqueue-mem."""


class Unsupported(SoloqueueError, code="unsupported", exit_code=69):
    """Not available on the chosen storage back end yet (PostgreSQL: issue 14)."""


class TempFail(SoloqueueError, code="temporary", exit_code=75):
    """Worth retrying: a lock is held or a database stayed busy past its timeout."""


class MissingExtra(SoloqueueError, code="missing_extra"):
    """An optional feature whose extra is not installed; the message names the install
    command (:func:`install_hint`)."""


def install_hint(extra: str) -> str:
    """How to add ``extra`` to this installation, e.g. ``install the server extra:
    /venv/bin/python -m pip install '/src/soloqueue-mem[server]'``.

    The package is on no index, so ``soloqueue-mem[extra]`` would not resolve: the hint
    names what this installation came from as its installer recorded it (PEP 610's
    ``direct_url.json``: the checkout, editable or not, or the wheel) and the Python
    it runs on; without that record, the form for a checkout."""
    import json
    import sys
    from importlib import metadata
    from urllib.parse import unquote, urlparse

    source, editable, installer, origin = ".", False, "pip", {}
    for dist in metadata.distributions(name="soloqueue-mem"):  # a checkout's egg-info has none
        record = dist.read_text("direct_url.json")
        if record:
            origin = json.loads(record)
            installer = (dist.read_text("INSTALLER") or "pip").strip()
            break
    if origin.get("url", "").startswith("file://"):
        source = unquote(urlparse(origin["url"]).path)
        editable = bool(origin.get("dir_info", {}).get("editable"))
    target = f"{'-e ' if editable else ''}'{source}[{extra}]'"
    if installer == "uv":  # uv's environments have no pip
        return f"install the {extra} extra: uv pip install --python {sys.executable} {target}"
    return f"install the {extra} extra: {sys.executable} -m pip install {target}"


class PartialFailure(SoloqueueError, code="partial", exit_code=65):
    """A batch finished, but some of its lines were rejected (already reported)."""
