"""The optional model's client: an OpenAI-compatible chat-completions endpoint (for
example a local Ollama). Its prompts, one module per point, are in :mod:`.prompts`.

Configured only by ``SOLOQUEUE_LLM_URL`` and ``SOLOQUEUE_LLM_MODEL`` (and
``SOLOQUEUE_LLM_API_KEY`` when the endpoint wants one); nothing is contacted
otherwise. Each call retries with exponential backoff (1 s doubling, capped at 30 s);
any failure — refused connection, timeout, HTTP error, an answer that is not the JSON
asked for — is an :class:`LlmError`, and callers fall back to the rules.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from typing import NamedTuple, TypeVar

from soloqueue_mem.errors import BadInput

T = TypeVar("T")


class LlmError(Exception):
    pass


class Llm(NamedTuple):
    url: str
    model: str
    api_key: str | None
    timeout: float
    retries: int
    backoff_base: float
    backoff_cap: float


def from_env(
    env: Mapping[str, str], timeout: float, retries: int, base: float, cap: float
) -> Llm | None:
    url, model = env.get("SOLOQUEUE_LLM_URL"), env.get("SOLOQUEUE_LLM_MODEL")
    if not url or not model:
        return None
    if not url.startswith(("http://", "https://")):
        raise BadInput(f"SOLOQUEUE_LLM_URL must be an http(s) URL: {url!r}")
    endpoint = url.rstrip("/")
    if not endpoint.endswith("/chat/completions"):
        endpoint += "/chat/completions"
    return Llm(
        endpoint, model, env.get("SOLOQUEUE_LLM_API_KEY") or None, timeout, retries, base, cap
    )


def complete(
    llm: Llm,
    prompt: str,
    parse: Callable[[str], T],
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """The model's answer to ``prompt`` as ``parse`` reads it; a failed call or an
    answer ``parse`` rejects (LlmError) is retried with backoff."""
    error = LlmError("no attempt")
    for attempt in range(llm.retries):
        if attempt:
            sleep(min(llm.backoff_cap, llm.backoff_base * 2 ** (attempt - 1)))
        try:
            return parse(_call(llm, prompt))
        except LlmError as exc:
            error = exc
    raise error


def _call(llm: Llm, prompt: str) -> str:
    body = json.dumps(
        {"model": llm.model, "messages": [{"role": "user", "content": prompt}], "temperature": 0}
    ).encode()
    headers = {"Content-Type": "application/json"}
    if llm.api_key:
        headers["Authorization"] = f"Bearer {llm.api_key}"
    request = urllib.request.Request(llm.url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=llm.timeout) as response:  # noqa: S310
            payload = json.loads(response.read(8 * 1024 * 1024))
        return str(payload["choices"][0]["message"]["content"])
    except urllib.error.HTTPError as exc:
        exc.close()  # the error holds the response and its socket
        raise LlmError(f"HTTP {exc.code} from {llm.url}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise LlmError(f"cannot reach {llm.url}: {getattr(exc, 'reason', exc)}") from None
    except (ValueError, KeyError, IndexError, TypeError):
        raise LlmError(f"not a chat-completions answer from {llm.url}") from None
