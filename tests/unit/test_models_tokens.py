"""The model table (built-in and config.toml), the bundled o200k/cl100k encodings, their
fallbacks and the one-warning-per-store rule."""

from __future__ import annotations

import json
import unicodedata

import pytest
import tiktoken.registry

from soloqueue_mem.context import tokens as tokens_module
from soloqueue_mem.context.models import BUILT_IN, model_info
from soloqueue_mem.context.tokens import counter_for
from soloqueue_mem.errors import UsageError
from soloqueue_mem.text.cjk import estimate_tokens

CL100K = counter_for("cl100k_base")
HISTORY = json.dumps([{"role": "user", "content": "数据库连接超时 because the pool ran dry"}])


@pytest.fixture
def empty_tiktoken_cache(tmp_path, monkeypatch):
    """tiktoken with an empty file cache and no encodings loaded in this process except
    what the test loads: the state of a fresh machine. Returns the refused URLs."""
    folder = tmp_path / "tiktoken-cache"
    folder.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(folder))
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    refused: list[str] = []
    original = tokens_module._refuse_download

    def spy(blobpath: str) -> bytes:
        refused.append(blobpath)
        return original(blobpath)

    monkeypatch.setattr(tokens_module, "_refuse_download", spy)
    return refused


# --- the model table ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "known"),
    [
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("GPT-4o", "gpt-4o"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o"),
        ("gpt-5-mini-2025-08-07", "gpt-5"),
        ("gpt-5-chat-latest", "gpt-5-chat"),  # the longest known prefix wins
        ("o3-mini", "o3"),
        ("o4-mini-2025-04-16", "o4-mini"),
        ("gpt-4.1-nano", "gpt-4.1"),
        ("gpt-4-turbo-2024-04-09", "gpt-4-turbo"),
        ("gpt-4-0613", "gpt-4"),
        ("claude-sonnet-4-5-20250929", "claude"),
        ("qwen3:8b", "qwen3"),
        ("llama3.1:70b", "llama3.1"),
    ],
)
def test_model_names_find_their_table_entry(name, known):
    assert model_info(name) == BUILT_IN[known]


def test_todays_openai_models_count_with_o200k_and_older_ones_with_cl100k():
    for name in ("gpt-5", "gpt-4.1", "gpt-4o", "o1", "o3", "o4-mini", "gpt-oss-120b"):
        assert model_info(name).encoding == "o200k_base" and model_info(name).margin == 0
    for name in ("gpt-4", "gpt-4-turbo", "gpt-3.5-turbo"):
        assert model_info(name).encoding == "cl100k_base"
    for name in ("claude-opus-4-1", "qwen-plus", "deepseek-chat", "glm-4.5", "llama-3.3-70b"):
        assert model_info(name).margin > 0  # a proxy, with its safety margin


@pytest.mark.parametrize("name", ["gpt-4omni", "gpt5", "my-local-model"])
def test_an_unknown_model_is_an_error_naming_both_ways_out(name):
    with pytest.raises(UsageError, match="--max-context") as raised:
        model_info(name)
    assert '[models."' in str(raised.value) and "config.toml" in str(raised.value)


def test_config_entries_add_and_override_models(cli, home):
    home.mkdir(parents=True)
    (home / "config.toml").write_text(
        '[models."my-local-model"]\ncontext = 32768\nencoding = "o200k_base"\n'
        '[models."gpt-4o"]\ncontext = 64000\n'
    )
    out = cli.json("context", "build", "--model", "my-local-model-q4", "--manifest", input="[]")
    assert (out["limit"], out["encoding"], out["exact"]) == (32768, "o200k_base", True)
    out = cli.json("context", "build", "--model", "gpt-4o-2024-08-06", "--manifest", input="[]")
    assert (out["limit"], out["encoding"]) == (64000, "o200k_base")  # encoding kept


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[models."x"]\nencoding = "o200k_base"\n', "context is required"),
        ('[models."x"]\ncontext = "big"\n', "models.x.context must be a int"),
        ('[models."x"]\ncontext = 1000\nwindow = 3\n', "unknown field 'window'"),
        ('[models."x"]\ncontext = 1000\nmargin = 1.5\n', "margin from 0"),
        ("models = 3\n", "must be tables"),
    ],
)
def test_bad_model_entries_in_config_are_rejected(cli, home, toml, message):
    home.mkdir(parents=True)
    (home / "config.toml").write_text(toml)
    result = cli("context", "build", "--model", "x", input="[]")
    assert result.exit_code != 0 and message in result.stderr


def test_a_dated_model_name_sets_the_limit_through_the_cli(cli):
    out = cli.json("context", "build", "--model", "gpt-4o-2024-08-06", "--manifest", input="[]")
    assert (out["limit"], out["safe"], out["budget"]) == (128_000, 121_600, 121_600 - 4096 - 3)
    assert (out["encoding"], out["exact"]) == ("o200k_base", True)


def test_an_unknown_model_needs_max_context(cli):
    result = cli("context", "build", "--model", "my-local-model", input="[]")
    assert result.exit_code == 2 and result.stdout == ""
    assert "unknown model 'my-local-model'" in result.stderr
    # ... and with it the build goes ahead, counting with cl100k_base
    out = cli.json("context", "build", "--model", "my-local-model", "--max-context", "2000",
                   "--reserve", "0", "--manifest", input="[]")  # fmt: skip
    assert (out["limit"], out["encoding"]) == (2000, "cl100k_base")


def test_max_context_overrides_the_models_limit(cli):
    out = cli.json("context", "build", "--model", "gpt-4", "--max-context", "3000",
                   "--reserve", "0", "--manifest", input="[]")  # fmt: skip
    assert out["limit"] == 3000


def test_a_proxy_divides_the_limit_by_its_margin_and_is_not_exact(cli):
    out = cli.json("context", "build", "--model", "claude-sonnet-4-5", "--manifest", input="[]")
    assert (out["limit"], out["encoding"], out["exact"]) == (160_000, "cl100k_base", False)


# --- o200k_base and cl100k_base, offline -------------------------------------------------


def test_o200k_matches_tiktokens_test_vectors_from_a_fresh_cache(empty_tiktoken_cache):
    counter = counter_for("o200k_base")
    assert (counter.name, counter.exact, counter.note) == ("o200k_base", True, None)
    encoding = tiktoken.registry.ENCODINGS["o200k_base"]
    assert encoding.encode("hello world") == [24912, 2375]
    assert encoding.encode_ordinary("我们明天在上海见面，记得带上护照。") == [
        24809, 11071, 867, 2178, 53339, 27041, 9961, 979, 11325, 11789, 24314, 4286, 29506,
        25355, 788,
    ]  # fmt: skip
    code = "def add(a, b):\n    return a + b\n"
    assert encoding.encode_ordinary(code) == [
        1314, 1147, 6271, 11, 287, 1883, 271, 622, 261, 659, 287, 198,
    ]  # fmt: skip
    with pytest.raises(ValueError, match="special token"):
        encoding.encode("<|endoftext|>")  # refused in plain text by tiktoken ...
    assert counter.count("<|endoftext|>") == 7  # ... and counted as the text it is
    assert empty_tiktoken_cache == []  # read from the bundled file, nothing downloaded


def test_cl100k_loads_offline_from_a_fresh_cache(empty_tiktoken_cache):
    counter = counter_for("cl100k_base")
    assert (counter.name, counter.exact, counter.note) == ("cl100k_base", True, None)
    assert counter.count("hello world") == 2
    assert empty_tiktoken_cache == []


def test_gpt_4o_counts_offline_with_no_warning_on_a_fresh_machine(cli, empty_tiktoken_cache):
    result = cli("--format", "json", "context", "build", "--model", "gpt-4o", "--manifest",
                 input=HISTORY)  # fmt: skip
    assert result.exit_code == 0 and result.stderr == ""
    out = json.loads(result.stdout)
    assert (out["encoding"], out["exact"]) == ("o200k_base", True)
    assert empty_tiktoken_cache == []


def test_an_encoding_not_cached_locally_falls_back_to_cl100k_without_downloading(
    empty_tiktoken_cache,
):
    counter = counter_for("p50k_base")
    assert (counter.name, counter.exact) == ("cl100k_base", False)
    assert counter.note == "p50k_base is not available offline; counting with cl100k_base"
    assert counter.count("hello world") == 2
    assert len(empty_tiktoken_cache) == 1 and empty_tiktoken_cache[0].startswith("https://")


def test_without_any_encoding_the_estimate_stands_in(monkeypatch):
    monkeypatch.setattr(tokens_module, "_load", lambda name: None)
    counter = counter_for("o200k_base")
    assert (counter.name, counter.exact) == ("estimate", False)
    assert "estimates" in counter.note
    text = "你好世界 hello"
    assert counter.count(text) == estimate_tokens(text, "o200k_base") != estimate_tokens(text)


# --- one warning per store -----------------------------------------------------------------


def test_a_stand_in_encoding_is_said_once_per_store(cli, empty_tiktoken_cache):
    cli.ok("init")
    said = []
    for _ in range(3):
        result = cli("context", "build", "--max-context", "1000", "--reserve", "0",
                     "--encoding", "p50k_base", input=HISTORY)  # fmt: skip
        assert result.exit_code == 0
        said.append(result.stderr.count("p50k_base is not available offline"))
    assert said == [1, 0, 0]


def test_without_a_store_the_warning_is_said_on_every_call(cli, monkeypatch):
    monkeypatch.setattr(tokens_module, "_load", lambda name: None)
    for _ in range(2):
        result = cli("context", "build", "--max-context", "1000", "--reserve", "0", input=HISTORY)
        assert result.stderr.count("token counts are estimates") == 1


# --- the models' own tokenizers, from the [tokenizers] extra -------------------------------

OWN_PACKAGES = {"qwen": "dashscope", "llama3": "llama_models", "llama4": "llama_models"}


def _needs_own(encoding: str) -> None:
    if not tokens_module.available(encoding):
        pytest.skip(f"{OWN_PACKAGES[encoding]} not installed: pip install '.[tokenizers]'")


@pytest.mark.parametrize(
    ("encoding", "text", "ids"),
    [
        # checked against quicktok-v1: digits one by one, an NFD accent composed first
        ("qwen", "hello world", [14990, 1879]),
        ("qwen", "cafe\u0301 2024", [924, 58858, 220, 17, 15, 17, 19]),
        ("llama3", "hello world", [15339, 1917]),
    ],
)
def test_a_models_own_tokenizer_counts_its_known_vectors(encoding, text, ids):
    _needs_own(encoding)
    counter = counter_for(encoding)
    assert (counter.name, counter.exact, counter.note) == (encoding, True, None)
    assert counter.count(text) == len(ids)
    assert tokens_module._load(encoding).encode_ordinary(unicodedata.normalize("NFC", text)) == ids


@pytest.mark.parametrize(
    ("model", "encoding", "limit"),
    [("qwen3:8b", "qwen", 131_072), ("llama-3.1-8b", "llama3", 131_072),
     ("llama-4-scout-17b", "llama4", 10_485_760)],
)  # fmt: skip
def test_qwen_and_llama_count_exactly_with_the_extra_and_no_margin(cli, model, encoding, limit):
    _needs_own(encoding)
    result = cli("context", "build", "--model", model, "--manifest", input=HISTORY)
    out = json.loads(result.stdout)
    assert (out["limit"], out["encoding"], out["exact"]) == (limit, encoding, True)
    assert "stands in" not in result.stderr


def test_without_the_extra_qwen_falls_back_to_its_proxy_and_margin(cli, monkeypatch):
    found = tokens_module._package_folder
    monkeypatch.setattr(
        tokens_module, "_package_folder", lambda p: None if p == "dashscope" else found(p)
    )
    out = cli.json("context", "build", "--model", "qwen3", "--manifest", input="[]")
    assert (out["limit"], out["encoding"], out["exact"]) == (124_830, "o200k_base", False)


def test_a_configured_encoding_replaces_the_models_own(cli, home):
    home.mkdir(parents=True)
    (home / "config.toml").write_text('[models."qwen3"]\nencoding = "cl100k_base"\n')
    out = cli.json("context", "build", "--model", "qwen3", "--manifest", input="[]")
    assert (out["encoding"], out["limit"]) == ("cl100k_base", 124_830)  # margin inherited
