"""``context build`` as a library call: history in, the messages to send out.

History comes from a logged session (its JSONL, in the L1 view: offloaded outputs are
already references) or from messages given by the caller, whose oversized tool
outputs are offloaded to artifacts on the way. Token counts of logged turns and of the
system message are cached per encoding in memory.db, so the encoder is loaded only
when something has not been counted before.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple

from soloqueue_mem.context import cache as token_cache
from soloqueue_mem.context.build import Built, build
from soloqueue_mem.context.layers import (
    NO_STATE,
    Layer,
    Recalled,
    State,
    memory_layers,
    system_content,
)
from soloqueue_mem.context.tokens import BUNDLED, Counter, counter_for, message_tokens
from soloqueue_mem.home import Home
from soloqueue_mem.sessions.events import Event, SessionKey, from_record, to_openai
from soloqueue_mem.sessions.offload import Offloader, l1_record
from soloqueue_mem.sessions.reader import read_session

if TYPE_CHECKING:
    from soloqueue_mem.context.cache import TokenCache
    from soloqueue_mem.memory.scratchpad import Scratchpad

Message = dict[str, Any]


class History(NamedTuple):
    messages: list[Message]
    cache_keys: list[str | None]  # per message; None: not cacheable (caller's input)
    offloaded: list[str]  # artifact ids created for oversized tool outputs


class Options(NamedTuple):
    system: str
    limit: int
    reserve: int
    margin: float
    encoding: str = "cl100k_base"
    manifest: bool = False  # count every candidate, dropped ones too
    proxy_margin: float = 0.0  # > 0: the encoding stands in for the model's tokenizer
    language: str = "auto"  # the setting the layers' headings are in


class Result(NamedTuple):
    built: Built
    layers: list[Layer]
    counter: str  # the encoding used, or "estimate"
    exact: bool
    notes: list[str]
    offloaded: list[str]


def session_history(
    home: Home, key: SessionKey, records: list[dict[str, Any]] | None = None
) -> History:
    """The session's chat messages as an agent would send them (L1 view); ``records``:
    the session's records when a storage back end read them (default: its JSONL)."""
    messages: list[Message] = []
    keys: list[str | None] = []
    for record in read_session(home, key).records if records is None else records:
        for number, message in enumerate(to_openai(from_record(l1_record(record)))):
            messages.append(message)
            keys.append(f"{token_cache.turn_key(key, record['turn_index'])}.{number}")
    return History(messages, keys, [])


def given_history(events: Iterable[Event], key: SessionKey, offload: Offloader) -> History:
    """Caller-given events as chat messages, oversized tool outputs offloaded."""
    messages: list[Message] = []
    offloaded: list[str] = []
    for event in events:
        view, saved = offload(event, key)
        if saved:
            view = view._replace(openai_message=None)  # the original holds the full output
            offloaded += [item["artifact_id"] for item in saved]
        messages += to_openai(view)
    return History(messages, [None] * len(messages), offloaded)


def own_system(history: History) -> tuple[str, History]:
    """The text of the history's own system messages, and the history without them:
    the built context has one system message (issue 15 §15)."""
    texts: list[str] = []
    messages: list[Message] = []
    keys: list[str | None] = []
    for message, key in zip(history.messages, history.cache_keys, strict=True):
        if message.get("role") != "system":
            messages.append(message)
            keys.append(key)
            continue
        content = message.get("content")
        if isinstance(content, list):  # OpenAI content parts
            content = "\n".join(str(part.get("text", "")) for part in content)
        if content and str(content).strip():
            texts.append(str(content).strip())
    return "\n\n".join(texts), History(messages, keys, history.offloaded)


def build_context(
    tokens_cache: TokenCache | None,
    history: History,
    options: Options,
    layers_for: Callable[[Callable[[str], int]], list[Layer]] | None = None,
) -> Result:
    """Build within the budget; ``layers_for(count)`` adds the memory layers."""
    counter = cache(lambda: counter_for(options.encoding))
    encoding = options.encoding if options.encoding in BUNDLED else counter().name

    def count(text: str) -> int:
        return counter().count(text)

    layers = layers_for(count) if layers_for else []
    # One system message: --system when given, else the history's own, then the layers.
    own, history = own_system(history)
    prompt = options.system if options.system.strip() else own
    system = {"role": "system", "content": system_content(prompt, layers, options.language)}
    keys = [*history.cache_keys, token_cache.text_key(system["content"])]
    known = tokens_cache.cached([k for k in keys if k], encoding) if tokens_cache else {}
    fresh: dict[str, int] = {}

    def tokens(position: int, message: Message) -> int:
        key = keys[position]  # position -1 is the system message, keyed last
        if key is not None and key in known:
            return known[key]
        value = message_tokens(message, count)
        if key is not None:
            fresh[key] = value
        return value

    built = build(
        system,
        history.messages,
        math.floor(options.limit / (1 + options.proxy_margin)),
        options.reserve,
        options.margin,
        tokens,
        count_dropped=options.manifest,
    )
    used: Counter | None = counter() if counter.cache_info().currsize else None
    if tokens_cache is not None and (used is None or used.name == encoding):
        tokens_cache.store(fresh, encoding)
    exact = (used.exact if used else encoding != "estimate") and not options.proxy_margin
    notes = [used.note] if used and used.note else []
    if options.proxy_margin:
        notes.append(
            f"{encoding} stands in for the model's own tokenizer; the limit is divided "
            f"by {1 + options.proxy_margin:g} for the measured error (the [tokenizers] "
            "extra counts Qwen and Llama models exactly)"
        )
    if tokens_cache is not None:
        notes = tokens_cache.unseen(notes)  # each said once per store
    name = used.name if used else encoding  # "estimate" when even cl100k did not load
    return Result(built, layers, name, exact, notes, history.offloaded)


def default_layers(
    home: Home,
    pad: Callable[[], Scratchpad | None],
    recalled: Callable[..., tuple[str, set[str]]] | None,
    state: State = NO_STATE,
    identity: Mapping[str, str] | None = None,
    *,
    language: str,
) -> Callable[[Callable[[str], int]], list[Layer]]:
    """The memory layers of ``--with-memory`` for :func:`build_context`;
    ``recalled(budget, count, seen)`` is :data:`~soloqueue_mem.context.layers.Recalled`
    with the token counter; ``pad`` reads the scratchpad shown (None: there is no
    store); ``identity`` the compiled identity files by source name; ``language`` the
    setting their fixed text is in."""

    def layers(count: Callable[[str], int]) -> list[Layer]:
        recall_text: Recalled | None = (
            (lambda budget, seen: recalled(budget, count, seen)) if recalled else None
        )
        return memory_layers(home.root, pad, recall_text, count, state, identity, language=language)

    return layers
