"""The model table: a model's context limit and the encoding that counts its tokens.

Built-in entries cover current families; ``[models."name"]`` in config.toml overrides
an entry or adds one (``context``, ``encoding``, ``margin``). A name finds the longest
entry it equals or extends with ``-`` or ``:`` (``gpt-4o-2024-08-06`` → ``gpt-4o``,
``qwen3:8b`` → ``qwen3``).

``margin`` > 0 marks a proxy: the model has its own tokenizer, so a tiktoken encoding
stands in for it and the limit is divided by ``1 + margin``: the largest undercount
measured on Chinese, English and code against the model's own tokenizer where a wheel
ships it (``benchmarks/bench_context.py``), else a guess. ``own`` names the model's own
encoding where the ``[tokenizers]`` extra ships it (Qwen, Llama 3 and 4): installed,
it counts exactly and the proxy and its margin are not used (:func:`counting`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from soloqueue_mem.errors import UsageError


class ModelInfo(NamedTuple):
    context: int
    encoding: str
    margin: float = 0.0  # > 0: the encoding is a proxy for the model's tokenizer
    own: str | None = None  # the model's own encoding, from the [tokenizers] extra


O200K, CL100K = "o200k_base", "cl100k_base"

BUILT_IN: Mapping[str, ModelInfo] = {
    # OpenAI: tiktoken's own encodings, exact
    "gpt-5": ModelInfo(400_000, O200K),
    "gpt-5-chat": ModelInfo(128_000, O200K),
    "gpt-4.1": ModelInfo(1_047_576, O200K),
    "gpt-4.5": ModelInfo(128_000, O200K),
    "gpt-4o": ModelInfo(128_000, O200K),
    "chatgpt-4o": ModelInfo(128_000, O200K),
    "o1": ModelInfo(200_000, O200K),
    "o1-mini": ModelInfo(128_000, O200K),
    "o1-preview": ModelInfo(128_000, O200K),
    "o3": ModelInfo(200_000, O200K),
    "o4-mini": ModelInfo(200_000, O200K),
    "gpt-oss": ModelInfo(131_072, O200K),  # o200k_harmony: o200k's ranks plus special tokens
    "gpt-4-turbo": ModelInfo(128_000, CL100K),
    "gpt-4": ModelInfo(8_192, CL100K),
    "gpt-4-32k": ModelInfo(32_768, CL100K),
    "gpt-3.5-turbo": ModelInfo(16_385, CL100K),
    # Other tokenizers: the model's own where the [tokenizers] extra ships it, else a
    # proxy encoding and its margin. Qwen: o200k undercounts English by 4.1%
    # (overcounts Chinese by 25%); Llama 3: cl100k never undercounts (+0.0% English,
    # +56% Chinese); Llama 4: o200k undercounts English by 1.0%; DeepSeek-V3: o200k
    # undercounts code by 6.0%, English by 4.2%. Claude and GLM ship no tokenizer in a
    # wheel: their margins are unmeasured guesses (README).
    "claude": ModelInfo(200_000, CL100K, 0.25),
    "qwen": ModelInfo(131_072, O200K, 0.05, "qwen"),
    "qwen2.5": ModelInfo(131_072, O200K, 0.05, "qwen"),
    "qwen3": ModelInfo(131_072, O200K, 0.05, "qwen"),
    "deepseek": ModelInfo(128_000, O200K, 0.06),
    "glm": ModelInfo(128_000, O200K, 0.15),
    "llama3": ModelInfo(8_192, CL100K, 0.02, "llama3"),
    "llama-3": ModelInfo(8_192, CL100K, 0.02, "llama3"),
    "llama3.1": ModelInfo(131_072, CL100K, 0.02, "llama3"),
    "llama-3.1": ModelInfo(131_072, CL100K, 0.02, "llama3"),
    "llama3.2": ModelInfo(131_072, CL100K, 0.02, "llama3"),
    "llama-3.2": ModelInfo(131_072, CL100K, 0.02, "llama3"),
    "llama3.3": ModelInfo(131_072, CL100K, 0.02, "llama3"),
    "llama-3.3": ModelInfo(131_072, CL100K, 0.02, "llama3"),
    "llama4": ModelInfo(1_048_576, O200K, 0.02, "llama4"),
    "llama-4": ModelInfo(1_048_576, O200K, 0.02, "llama4"),
    "llama-4-scout": ModelInfo(10_485_760, O200K, 0.02, "llama4"),
}


def model_info(model: str, configured: Mapping[str, ModelInfo] | None = None) -> ModelInfo:
    """The entry ``model`` finds in the table, config.toml's entries first."""
    table = {**BUILT_IN, **(configured or {})}
    name = model.strip().lower()
    for known in sorted(table, key=len, reverse=True):
        if name == known or name.startswith((known + "-", known + ":")):
            return table[known]
    raise UsageError(
        f"unknown model {model!r}: give --max-context N, or add it to config.toml as "
        f'[models."{name}"] with context = N (and encoding = "o200k_base" or "cl100k_base")'
    )


def counting(info: ModelInfo) -> tuple[str, float]:
    """The encoding that counts for the model and the margin its error needs: the
    model's own encoding when installed, else the entry's (proxy) encoding."""
    from soloqueue_mem.context.tokens import available

    if info.own and available(info.own):
        return info.own, 0.0
    return info.encoding, info.margin


def configured_models(table: Mapping[str, Mapping[str, object]]) -> dict[str, ModelInfo]:
    """config.toml's ``[models]`` as entries: a field left out comes from the built-in
    entry the name finds, else ``cl100k_base`` and no margin (config.py requires
    ``context`` then)."""
    entries: dict[str, ModelInfo] = {}
    for name, fields in table.items():
        try:
            base = model_info(name)
        except UsageError:
            base = None
        context = fields.get("context", base.context if base else None)
        entries[name.lower()] = ModelInfo(
            context,  # type: ignore[arg-type]  # checked by config.py
            str(fields.get("encoding", base.encoding if base else CL100K)),
            float(fields.get("margin", base.margin if base else 0.0)),  # type: ignore[arg-type]
            base.own if base and "encoding" not in fields else None,  # config's encoding wins
        )
    return entries
