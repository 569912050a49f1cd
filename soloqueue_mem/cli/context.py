"""``soloqueue-mem context``: build the prompt an agent sends (L1 working memory)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from soloqueue_mem.api.shapes import manifest_json
from soloqueue_mem.cli.options import AgentOpt, GroupOpt, finite, subcommand
from soloqueue_mem.cli.output import Format, emit_list, emit_object, print_table, stderr
from soloqueue_mem.cli.state import AppContext
from soloqueue_mem.errors import BadInput, UsageError
from soloqueue_mem.home import validate_id

if TYPE_CHECKING:
    from soloqueue_mem.context.assemble import Result

app = typer.Typer(
    help="Build the messages an agent sends, inside the model's token budget.",
    no_args_is_help=True,
)


def _system_text(value: str, cap: int) -> str:
    """``--system TEXT`` or ``--system @FILE`` (at most ``cap`` bytes)."""
    if not value.startswith("@"):
        return value
    from soloqueue_mem.cli.source import read_file

    try:
        return read_file(Path(value[1:]), cap)
    except BadInput as exc:
        raise BadInput(f"the system prompt: {exc.reason}") from None


def _piped_events(app_ctx: AppContext) -> list[Any] | None:
    """The history piped to stdin, a JSON array of messages or JSON Lines (None: a
    terminal, or nothing but white space)."""
    from soloqueue_mem.sessions.intake import read_batch, read_document

    if sys.stdin is None or sys.stdin.isatty():
        return None
    data = sys.stdin.buffer.read(app_ctx.config.max_input_bytes + 1)
    if not data.strip():
        return None
    return _events(data, app_ctx.config.max_input_bytes, read_document, read_batch)


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


@subcommand(app, "build")
def build_command(
    app_ctx: AppContext,
    system: Annotated[
        str, typer.Option("--system", help="The system prompt, or @FILE to read it from a file.")
    ] = "",
    session: Annotated[
        str | None,
        typer.Option(
            "--session",
            "-s",
            help="Build from this logged session (else piped history, else $SOLOQUEUE_SESSION).",
        ),
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
        float,
        typer.Option("--margin", callback=finite, help="Safety margin, 0.05-0.10 of the limit."),
    ] = 0.05,
    with_memory: Annotated[
        bool, typer.Option("--with-memory", help="Add the memory layers to the system message.")
    ] = False,
    query: Annotated[
        str | None, typer.Option("--query", help="Recall memories for this (--with-memory).")
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
) -> None:
    """Print the OpenAI messages array to send: system first, then the newest history
    that fits limit·(1−margin) − reserve.

    If the system message alone is too big it is sent alone (said on stderr). Tool
    outputs over the offload threshold in piped history are saved as artifacts and
    replaced by references. --manifest prints {"messages", "manifest", ...} instead;
    --format table shows the manifest.
    """
    validate_id("group", group)
    validate_id("agent", agent)
    if model is None and max_context is None:
        raise UsageError("give --model NAME or --max-context N")
    if query is not None and not with_memory:
        raise UsageError("--query is used by --with-memory")
    system_text = _system_text(system, app_ctx.config.max_input_bytes)
    events = _piped_events(app_ctx) if session is None else None
    if session is None and events is None:
        session = os.environ.get("SOLOQUEUE_SESSION") or None
        if session is None:
            raise UsageError("give --session S, or pipe the history (a JSON array or JSONL)")
    with app_ctx.store() as store:
        result = store.context_build(
            session=session,
            messages=events,
            system=system_text,
            model=model,
            max_context=max_context,
            encoding=encoding,
            reserve=reserve,
            margin=margin,
            with_memory=with_memory,
            query=query,
            manifest=manifest or app_ctx.format is Format.table,
            group=group,
            agent=agent,
        )
    _report(result, app_ctx, stats)
    _emit(result, app_ctx.format, manifest)


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


@subcommand(app, "compress")
def compress_command(
    app_ctx: AppContext,
    session: Annotated[
        str,
        typer.Option(
            "--session",
            "-s",
            envvar="SOLOQUEUE_SESSION",
            help="The logged session (default: $SOLOQUEUE_SESSION).",
            show_default=False,
        ),
    ],
    keep: Annotated[int, typer.Option("--keep", "-k", help="How many newest turns stay.")] = 10,
    manifest: Annotated[
        bool,
        typer.Option("--manifest", help="Print the episode and memories written, too."),
    ] = False,
    group: GroupOpt = "default",
    agent: AgentOpt = "default",
) -> None:
    """Compress a session's history to a summary message plus its last --keep turns.

    First, what the older turns state becomes memories (quick rules, Chinese and
    English), a context_compress episode records them, and they are marked extracted:
    nothing that leaves the context is lost. Running it again extracts nothing twice.
    """
    from soloqueue_mem.api.shapes import memory_json
    from soloqueue_mem.cli.graph_worker import start

    with app_ctx.store() as store:
        result = store.context_compress(session, keep=keep, group=group, agent=agent)
    if result.graph_task is not None:  # as `graph remember` does
        start(app_ctx.home.dir)
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
            "graph_task": result.graph_task,
        },
        Format.json,
    )
