"""The exception tree every layer raises; the CLI maps it to exit codes once.

Each class carries the exit status of SPEC §4 and a short machine code that appears
in the JSON error object. Core code never chooses exit codes at catch sites.
"""

from __future__ import annotations


class SoloqueueError(Exception):
    """Base of every error a user can cause or fix."""

    exit_code = 1
    code = "error"


class UsageError(SoloqueueError):
    """Options or arguments that do not make sense together."""

    exit_code = 2
    code = "usage"


class NotFound(SoloqueueError):
    exit_code = 3
    code = "not_found"


class BadInput(SoloqueueError):
    """Input data that cannot be accepted; ``line`` is 1-based when known."""

    exit_code = 65
    code = "bad_input"

    def __init__(self, reason: str, line: int | None = None) -> None:
        self.reason = reason
        self.line = line
        super().__init__(f"line {line}: {reason}" if line is not None else reason)


class BadOption(BadInput):
    """A request's number out of its range (``limit`` 0). Over HTTP and MCP it is a
    field of the body, bad input (65); on the command line it is an option's value, which
    the CLI reports as every bad option value: a usage error (exit 2)."""


class InvalidId(BadInput):
    code = "invalid_id"


class NoStore(SoloqueueError):
    """The data directory does not exist, for a command that only uses one (a typo in
    ``--root`` must not pass unnoticed as an empty store)."""

    exit_code = 66
    code = "no_store"


class StorageError(SoloqueueError):
    """The data directory or a database cannot be used safely."""

    exit_code = 74
    code = "io"


class SchemaTooNew(StorageError):
    code = "schema_too_new"


class Unsupported(SoloqueueError):
    """Not available on the chosen storage back end yet (PostgreSQL: issue 14)."""

    exit_code = 69
    code = "unsupported"


class TempFail(SoloqueueError):
    """Worth retrying: a lock is held or a database stayed busy past its timeout."""

    exit_code = 75
    code = "temporary"


class MissingExtra(SoloqueueError):
    """An optional feature whose extra is not installed; the message names the install
    command (:func:`install_hint`)."""

    code = "missing_extra"


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


class PartialFailure(SoloqueueError):
    """A batch finished, but some of its lines were rejected (already reported)."""

    exit_code = 65
    code = "partial"
