"""Claude Code hooks: one payload (the hook's JSON on stdin) in, what to print out.

``SessionStart`` gives a brief of the memory as additional context; ``UserPromptSubmit``
logs the prompt (and, with ``hook_recall``, gives the memories recalled for it);
``PreToolUse`` logs the tool call, ``PostToolUse`` / ``PostToolUseFailure`` the call and
its result (big results are offloaded as ``log`` does); ``PreCompact`` runs ``context
compress``; ``Stop`` logs the assistant's last reply; ``SessionEnd`` ends the session.
Other events do nothing. The session is the payload's ``session_id``; tool calls and
results take event ids from ``tool_use_id``, so a repeated hook logs nothing twice.
Errors are raised to the caller, which keeps the hook fail-open.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from soloqueue_mem import jsonio
from soloqueue_mem.config import Config
from soloqueue_mem.errors import BadInput, NotFound
from soloqueue_mem.home import Home, validate_id
from soloqueue_mem.integrations.project import HookGroup, hook_group
from soloqueue_mem.sessions.events import Event, SessionKey, parse_event
from soloqueue_mem.sessions.writer import LoggedTurn, Rejected
from soloqueue_mem.storage.catalog import offloader as new_offloader

if TYPE_CHECKING:
    from soloqueue_mem.storage.base import Backend

# Turns PreCompact leaves uncompressed: none, since Claude Code's compaction replaces
# the whole conversation with its summary.
COMPRESS_KEEP = 0
RECALL_TOKENS = 300  # budget of the memories UserPromptSubmit adds
BRIEF_MEMORIES = 200  # the group's most recently updated memories the brief ranks
METADATA = {"source": "claude-code"}


class Hook(NamedTuple):
    """One hook call: where it writes, and the payload it was given."""

    home: Home
    config: Config
    now: datetime
    key: SessionKey
    payload: dict[str, Any]
    backend: Backend  # the configured storage back end
    scope: HookGroup | None = None  # why the session's group is the one it is


class Outcome(NamedTuple):
    """What to print for the agent (None: nothing) and the turns logged."""

    output: str | None
    logged: list[LoggedTurn]


def parse_payload(data: bytes, event: str | None) -> tuple[str, dict[str, Any]]:
    """``(event name, payload)``; the argument wins over ``hook_event_name``."""
    payload = jsonio.loads(data, line=1) if data.strip() else None
    if not isinstance(payload, dict):
        raise BadInput("expected the hook's JSON object on stdin")
    name = event or payload.get("hook_event_name")
    if not isinstance(name, str) or not name:
        raise BadInput("no event: give it as an argument or in 'hook_event_name'")
    return name, payload


def run_hook(
    home: Home,
    config: Config,
    now: datetime,
    scope: tuple[str | None, str],
    event: str,
    payload: dict[str, Any],
    backend: Backend,
) -> Outcome:
    """Handle ``event`` on the storage ``backend``; an event this does not handle is
    ignored. The group is ``scope``'s when given, else the one
    :func:`~soloqueue_mem.integrations.project.hook_group` picks for the payload's
    ``cwd``."""
    handler = HANDLERS.get(event)
    if handler is None:
        return Outcome(None, [])
    session = payload.get("session_id")
    if not isinstance(session, str):
        raise BadInput("payload has no 'session_id'")
    chosen = hook_group(scope[0], config.hook_group, payload.get("cwd"))
    key = SessionKey(
        validate_id("group", chosen.group),
        validate_id("agent", scope[1]),
        validate_id("session", session),
    )
    return handler(Hook(home, config, now, key, payload, backend, chosen))


def _session_start(hook: Hook) -> Outcome:
    from soloqueue_mem.integrations.brief import build_brief
    from soloqueue_mem.memory import scratchpad
    from soloqueue_mem.memory.episodes import EpisodeFilters
    from soloqueue_mem.memory.store import Filters

    group, agent = hook.key.group, hook.key.agent
    empty = scratchpad.template(hook.config.language)
    pad = hook.backend.scratchpad(group, agent, empty)
    found = hook.backend.episodes(EpisodeFilters(group=group, agent=agent), 1)
    # what this project's sessions left, consolidated or not
    memories = hook.backend.memories(Filters(group=group), hook.now, BRIEF_MEMORIES)
    episode = found[0] if found else None
    brief = build_brief(hook.scope, pad, memories, episode, hook.now, hook.config.language)
    return Outcome(_context("SessionStart", brief), [])


def _user_prompt(hook: Hook) -> Outcome:
    prompt = _text(hook.payload, "prompt")
    try:  # recalled before the prompt is logged, which it must not find
        recalled = _recall(hook, prompt) if hook.config.hook_recall else ""
    finally:  # and logged even when recall fails
        logged = _log(hook, [_event({"role": "user", "content": prompt})])
    return Outcome(_context("UserPromptSubmit", recalled), logged)


def _pre_tool(hook: Hook) -> Outcome:
    return Outcome(None, _log(hook, [_tool_call(hook.payload)]))


def _post_tool(hook: Hook) -> Outcome:
    payload = hook.payload
    failed = "error" in payload and "tool_response" not in payload
    response = payload.get("error") if failed else payload.get("tool_response")
    result: dict[str, Any] = {
        "tool_use_id": payload.get("tool_use_id"),
        "content": response if isinstance(response, str) else jsonio.dumps(response),
        "is_error": failed,
    }
    event = _event({"role": "tool", "tool_results": [result]}, "result", result["tool_use_id"])
    return Outcome(None, _log(hook, [_tool_call(payload), event]))


def _pre_compact(hook: Hook) -> Outcome:
    from soloqueue_mem.clock import iso
    from soloqueue_mem.graph.ops import feed_compressed
    from soloqueue_mem.lifecycle.vocabulary import vocabulary
    from soloqueue_mem.storage.graph import open_graph_db

    words = vocabulary(hook.config.predicates)
    if not hook.backend.session_turns(hook.key):  # never logged: nothing to compress
        return Outcome(None, [])
    result = hook.backend.compress(hook.key, COMPRESS_KEEP, hook.now, words)
    graph = partial(open_graph_db, hook.home, hook.config)
    feed_compressed(graph, hook.config, hook.key, result.fresh_records, iso(hook.now))
    return Outcome(None, [])


def _stop(hook: Hook) -> Outcome:
    reply = hook.payload.get("last_assistant_message")
    if isinstance(reply, str) and reply.strip():
        event: Event | None = _event({"role": "assistant", "content": reply})
    else:
        event = _reply_from_transcript(hook.payload.get("transcript_path"))
    return Outcome(None, _log(hook, [event]) if event is not None else [])


def _session_end(hook: Hook) -> Outcome:
    try:
        hook.backend.session_end(hook.key, hook.now)
    except NotFound:  # the session was never logged: nothing to end
        pass
    return Outcome(None, [])


HANDLERS: dict[str, Callable[[Hook], Outcome]] = {
    "SessionStart": _session_start,
    "UserPromptSubmit": _user_prompt,
    "PreToolUse": _pre_tool,
    "PostToolUse": _post_tool,
    "PostToolUseFailure": _post_tool,
    "PreCompact": _pre_compact,
    "Stop": _stop,
    "SessionEnd": _session_end,
}


def _text(payload: dict[str, Any], field: str) -> str:
    value = payload.get(field)
    if not isinstance(value, str):
        raise BadInput(f"payload has no '{field}' text")
    return value


def _event(fields: dict[str, Any], suffix: str | None = None, use_id: Any = None) -> Event:
    event = {**fields, "metadata": METADATA}
    if suffix is not None and isinstance(use_id, str) and use_id:
        event["event_id"] = f"{use_id}:{suffix}"
    return parse_event(event)


def _tool_call(payload: dict[str, Any]) -> Event:
    name = _text(payload, "tool_name")
    use_id = payload.get("tool_use_id")
    call = {"id": use_id if isinstance(use_id, str) else None, "name": name}
    call["input"] = payload.get("tool_input", {})
    return _event({"role": "assistant", "content": "", "tool_calls": [call]}, "call", use_id)


def _reply_from_transcript(path: Any) -> Event | None:
    if not isinstance(path, str) or not path:
        return None
    from soloqueue_mem.integrations.claude_transcript import last_reply

    event = last_reply(Path(path))
    return None if event is None else event._replace(session=None)


def _log(hook: Hook, events: list[Event]) -> list[LoggedTurn]:
    """Log ``events`` in the hook's session (offloading big parts); BadInput if one is
    refused."""
    hook.home.ensure()
    offloader = new_offloader(hook.home, hook.config, hook.now)
    try:
        items = [(None, event) for event in events]
        # a prompt is never dropped for a busy store
        logged = hook.backend.log(items, hook.key, hook.now, offloader, queue_when_busy=True)
        results = list(logged)
    finally:
        offloader.close()
    refused = [r for r in results if isinstance(r, Rejected)]
    if refused:
        raise BadInput(refused[0].reason)
    return [r for r in results if isinstance(r, LoggedTurn)]


def _recall(hook: Hook, prompt: str) -> str:
    """The memories recalled for ``prompt``, fenced as reference data ("" if none)."""
    from soloqueue_mem.context.layers import title
    from soloqueue_mem.integrations.brief import fenced
    from soloqueue_mem.memory.recall import Request, render_text
    from soloqueue_mem.text.lexicon import open_lexicon

    recent = hook.config.hook_recall_recent  # the turns before this prompt, not yet logged
    request = Request(
        prompt,
        group=hook.key.group,
        max_tokens=RECALL_TOKENS,
        recent=recent,
        session=hook.key.session,
    )
    lexicon = cache(lambda: open_lexicon(hook.home.cache_dir))
    try:
        found = hook.backend.recall(request, hook.now, lexicon)
    except BadInput:  # nothing to search for in this prompt
        return ""
    text = render_text(found.hits)
    language = hook.config.language
    return fenced({title("recall", language): text}, language) if text.strip() else ""


def _context(event: str, text: str) -> str | None:
    """The hook's JSON output giving ``text`` to the agent as additional context."""
    if not text:
        return None
    output = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
    return jsonio.dumps(output)
