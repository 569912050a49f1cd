"""``soloqueue-mem context``: build the prompt an agent sends (L1 working memory)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from soloqueue_mem.cli.boundary import boundary
from soloqueue_mem.cli.options import AgentOpt, FormatOpt, GroupOpt, RootOpt
from soloqueue_mem.cli.output import Format, emit_list, emit_object, print_table, stderr
from soloqueue_mem.cli.state import AppContext, app_context
from soloqueue_mem.errors import BadInput, UsageError
from soloqueue_mem.home import validate_id

# recall's largest budget: the recall layer fits its hits itself, after leaving out
# what an earlier layer shows (recall then counts all of its hits as accessed)
UNBOUNDED = 1_000_000

if TYPE_CHECKING:
    from soloqueue_mem.context.assemble import History, Result

app = typer.Typer(
    help="Build the messages an agent sends, inside the model's token budget.",
    no_args_is_help=True,
)


def _system_text(value: str) -> str:
    """``--system TEXT`` or ``--system @FILE``."""
    if not value.startswith("@"):
        return value
    path = Path(value[1:])
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"cannot read the system prompt from {path}: {exc}") from None


def _history(app_ctx: AppContext, session: str | None, group: str, agent: str) -> History:
    from soloqueue_mem.context.assemble import given_history, session_history
    from soloqueue_mem.db.stores import open_artifacts
    from soloqueue_mem.sessions.events import SessionKey
    from soloqueue_mem.sessions.intake import read_batch, read_document
    from soloqueue_mem.sessions.offload import Offloader

    if session is not None:
        return session_history(
            app_ctx.home, SessionKey(group, agent, validate_id("session", session))
        )
    if sys.stdin is None or sys.stdin.isatty():
        raise UsageError("give --session S, or pipe the history (a JSON array or JSONL) to stdin")
    data = sys.stdin.buffer.read(app_ctx.config.max_input_bytes + 1)
    events = _events(data, app_ctx.config.max_input_bytes, read_document, read_batch)
    offloader = Offloader(
        app_ctx.home,
        app_ctx.config,
        app_ctx.now,
        lambda: open_artifacts(app_ctx.home, app_ctx.config),
    )
    try:
        return given_history(events, SessionKey(group, agent, "context"), offloader)
    finally:
        offloader.close()


def _events(data: bytes, limit: int, read_document: Any, read_batch: Any) -> list[Any]:
    """A JSON array of messages, or JSON Lines; any bad message rejects the input."""
    import io

    if data.lstrip()[:1] == b"[" or len(data) > limit:
        return read_document(io.BytesIO(data), limit)
    events = []
    for item in read_batch(io.BytesIO(data), limit):
        if hasattr(item, "reason"):  # Rejected, itself a tuple: test it first
            raise BadInput(item.reason, item.line)
        if isinstance(item, tuple):
            events.append(item[1])
    return events


@app.command("build")
@boundary
def build_command(
    ctx: typer.Context,
    system: Annotated[
        str, typer.Option("--system", help="The system prompt, or @FILE to read it from a file.")
    ] = "",
    session: Annotated[
        str | None,
        typer.Option("--session", "-s", help="Build from this logged session (else stdin)."),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option("--model", "-m", help="Model name: sets the context limit and encoding."),
    ] = None,
    max_context: Annotated[
        int | None, typer.Option("--max-context", help="Context limit in tokens.")
    ] = None,
    encoding: Annotated[
        str | None, typer.Option("--encoding", help="tiktoken encoding (default: the model's).")
    ] = None,
    reserve: Annotated[
        int, typer.Option("--reserve", help="Tokens kept free for the reply.")
    ] = 4096,
    margin: Annotated[
        float, typer.Option("--margin", help="Safety margin, 0.05-0.10 of the limit.")
    ] = 0.05,
    with_memory: Annotated[
        bool, typer.Option("--with-memory", help="Add the memory layers to the system message.")
    ] = False,
    query: Annotated[
        str | None, typer.Option("--query", "-q", help="Recall memories for this (--with-memory).")
    ] = None,
    manifest: Annotated[
        bool,
        typer.Option("--manifest", help="Print every candidate with its tokens and fate too."),
    ] = False,
    stats: Annotated[
        bool, typer.Option("--stats", help="Per-layer token counts on stderr.")
    ] = False,
    group: GroupOpt = "default",
    agent: AgentOpt = "default",
    fmt: FormatOpt = None,
    root: RootOpt = None,
) -> None:
    """Print the OpenAI messages array to send: system first, then the newest history
    that fits limit·(1−margin) − reserve.

    If the system message alone is too big it is sent alone (said on stderr). Tool
    outputs over the offload threshold in piped history are saved as artifacts and
    replaced by references. --manifest prints {"messages", "manifest", ...} instead;
    --format table shows the manifest.
    """
    from soloqueue_mem.context.assemble import Options, build_context, default_layers
    from soloqueue_mem.context.identity import compiled as compiled_identity
    from soloqueue_mem.context.models import counting, model_info
    from soloqueue_mem.db.stores import open_memory

    app_ctx = app_context(ctx, fmt, root)
    validate_id("group", group)
    validate_id("agent", agent)
    if model is None and max_context is None:
        raise UsageError("give --model NAME or --max-context N")
    if query is not None and not with_memory:
        raise UsageError("--query is used by --with-memory")
    info = None
    if model:
        try:
            info = model_info(model, app_ctx.config.models)
        except UsageError:
            if max_context is None:  # an unknown model is fine when the limit is given
                raise
    counted_by, proxy_margin = counting(info) if info else ("cl100k_base", 0.0)
    options = Options(
        system=_system_text(system),
        limit=max_context or (info.context if info else 0),
        reserve=reserve,
        margin=margin,
        encoding=encoding or counted_by,
        manifest=manifest or app_ctx.format is Format.table,
        proxy_margin=0.0 if encoding else proxy_margin,
    )
    history = _history(app_ctx, session, group, agent)
    conn = open_memory(app_ctx.home, app_ctx.config, create=False)
    try:
        layers = None
        if with_memory:
            recaller = _recaller(app_ctx, conn, query, group)
            state = _state(app_ctx, group, agent, session)
            identity = compiled_identity(app_ctx.home.root, app_ctx.now)
            layers = default_layers(app_ctx.home, conn, recaller, (group, agent), state, identity)
        result = build_context(conn, history, options, layers)
    finally:
        if conn is not None:
            conn.close()
    _report(result, app_ctx, stats)
    _emit(result, app_ctx.format, manifest)


def _state(app_ctx: AppContext, group: str, agent: str, session: str | None) -> Any:
    """The kv_store preferences of (group, agent) and the variables of ``session``."""
    from soloqueue_mem.context.layers import State
    from soloqueue_mem.db.stores import open_state
    from soloqueue_mem.state.values import as_list, entries

    conn = open_state(app_ctx.home, app_ctx.config, create=False)
    if conn is None:
        return State()
    try:
        preferences = entries(conn, "kv_store", (group, agent))
        variables = entries(conn, "session_state", (group, agent, session)) if session else []
    finally:
        conn.close()
    return State(as_list(preferences), as_list(variables, first="current_task"), session or "")


def _recaller(app_ctx: AppContext, conn: Any, query: str | None, group: str) -> Any:
    if query is None:
        return None
    if conn is None:  # no store yet: nothing to recall (the query was given)
        return lambda budget, count, seen: ("", set())
    from soloqueue_mem.cli.trace_run import lexicon_loader
    from soloqueue_mem.memory.model import content_key
    from soloqueue_mem.memory.recall import Request, fit_budget, recall, render_text

    def recalled(budget: int, count: Any, seen: frozenset[str]) -> tuple[str, set[str]]:
        """The best memories not already shown by an earlier layer, fitted to ``budget``
        after those are left out (so the budget goes to the others)."""
        request = Request(query, group=group, max_tokens=UNBOUNDED)
        found = recall(
            app_ctx.home, conn, request, app_ctx.config, app_ctx.now, lexicon_loader(app_ctx), count
        )
        fresh = [h for h in found.hits if content_key(h.candidate.content) not in seen]
        hits = fit_budget(fresh, budget, count)
        return render_text(hits), {content_key(h.candidate.content) for h in hits}

    return recalled


def _report(result: Result, app_ctx: AppContext, stats: bool) -> None:
    for note in result.notes:
        stderr(f"warning: {note}", app_ctx.quiet)
    built = result.built
    if built.fallback:
        stderr(
            f"warning: the system message alone ({built.used} tokens) exceeds the budget "
            f"({built.budget}); sending it without history",
            app_ctx.quiet,
        )
    if stats:
        kept = sum(1 for e in built.entries[1:] if e.kept)
        offered = len(built.entries) - 1
        stderr(f"limit {built.limit}, safe {built.safe}, budget {built.budget}, used {built.used}")
        stderr(f"system {built.entries[0].tokens} tokens; history {kept} kept of {offered}")
        for layer in result.layers:
            stderr(f"layer {layer.name}: {layer.tokens}/{layer.budget} tokens ({layer.status})")


def manifest_json(result: Result) -> dict[str, Any]:
    built = result.built
    return {
        "messages": built.messages,
        "limit": built.limit,
        "safe": built.safe,
        "budget": built.budget,
        "used": built.used,
        "fallback": built.fallback,
        "encoding": result.counter,
        "exact": result.exact,
        "offloaded": result.offloaded,
        "layers": [layer._asdict() for layer in result.layers],
        "manifest": [
            {
                "position": e.position,
                "role": e.message.get("role"),
                "tokens": e.tokens,
                "kept": e.kept,
                "reason": e.reason,
            }
            for e in built.entries
        ],
    }


def _emit(result: Result, fmt: Format, manifest: bool) -> None:
    if fmt is Format.table:
        print_table(
            None,
            ["position", "role", "tokens", "kept", "reason"],
            (
                (
                    "system" if e.position < 0 else e.position,
                    e.message.get("role"),
                    e.tokens,
                    e.kept,
                    e.reason,
                )
                for e in result.built.entries
            ),
        )
    elif manifest:
        emit_object(manifest_json(result), Format.json)
    else:
        emit_list(iter(result.built.messages), Format.jsonl if fmt is Format.jsonl else Format.json)


@app.command("compress")
@boundary
def compress_command(
    ctx: typer.Context,
    session: Annotated[str, typer.Option("--session", "-s", help="The logged session.")],
    keep: Annotated[int, typer.Option("--keep", "-k", help="How many newest turns stay.")] = 10,
    manifest: Annotated[
        bool,
        typer.Option("--manifest", help="Print the episode and memories written, too."),
    ] = False,
    group: GroupOpt = "default",
    agent: AgentOpt = "default",
    fmt: FormatOpt = None,
    root: RootOpt = None,
) -> None:
    """Compress a session's history to a summary message plus its last --keep turns.

    First, what the older turns state becomes memories (quick rules, Chinese and
    English), a context_compress episode records them, and they are marked extracted:
    nothing that leaves the context is lost. Running it again extracts nothing twice.
    """
    from soloqueue_mem.cli.memory import memory_json
    from soloqueue_mem.context.compress import compress
    from soloqueue_mem.db.stores import open_memory
    from soloqueue_mem.lifecycle.vocabulary import vocabulary
    from soloqueue_mem.sessions.events import SessionKey

    app_ctx = app_context(ctx, fmt, root)
    key = SessionKey(
        validate_id("group", group), validate_id("agent", agent), validate_id("session", session)
    )
    conn = open_memory(app_ctx.home, app_ctx.config)
    assert conn is not None
    try:
        words = vocabulary(app_ctx.config.predicates)
        result = compress(app_ctx.home, conn, key, keep, app_ctx.now, words)
    finally:
        conn.close()
    if not manifest:
        emit_list(
            iter(result.messages), Format.jsonl if app_ctx.format is Format.jsonl else Format.json
        )
        return
    emit_object(
        {
            "messages": result.messages,
            "compressed_turns": result.compressed_turns,
            "kept_turns": result.kept_turns,
            "episode": result.episode._asdict() if result.episode else None,
            "memories": [{"action": r.action, **memory_json(r.memory)} for r in result.remembered],
        },
        Format.json,
    )
