"""Seed 004 on the command line: ``working`` (the per-group working memory),
``promote`` (text → chunked long-term memories) and ``query`` (hot + cold)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from soloqueue_mem.api.shapes import working_json
from soloqueue_mem.cli.options import AgentOpt, GroupOpt, checked_limit, command, subcommand
from soloqueue_mem.cli.output import emit_list, emit_object, print_table, stderr
from soloqueue_mem.cli.source import read_source
from soloqueue_mem.cli.state import AppContext
from soloqueue_mem.home import validate_id

app = typer.Typer(
    help="Working memory: a per-group list of recent outputs, 50 at most, each kept 24 h.",
    no_args_is_help=True,
)
TextArg = Annotated[str, typer.Argument(help="The entry; '-' reads it from stdin.")]


@subcommand(app, "add")
def add(app_ctx: AppContext, text: TextArg, group: GroupOpt = "default") -> None:
    """Push an entry onto the group's working memory, unless the entry filter drops it
    (empty, an acknowledgement such as ok/好的/thanks, too short, or a near-duplicate
    of a live entry). A dropped entry is not an error: {"added": false, "dropped": rule}.
    """
    validate_id("group", group)
    content = read_source("-", app_ctx.config.max_input_bytes) if text == "-" else text
    with app_ctx.store() as store:
        added = store.working_add(content, group=group)
    out: dict[str, Any] = {"added": added.entry is not None, "dropped": added.dropped}
    if added.entry is not None:
        out["entry"] = working_json(added.entry)
    else:
        stderr(f"not added: {added.dropped}", app_ctx.quiet)
    emit_object(out, app_ctx.format)


@subcommand(app, "list")
def list_command(
    app_ctx: AppContext,
    group: GroupOpt = "default",
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many (1-50).")] = 10,
) -> None:
    """The group's live entries, newest first (what the hot channel returns)."""
    from soloqueue_mem.memory import working

    validate_id("group", group)
    checked_limit(limit, working.CAP)
    with app_ctx.store() as store:
        entries = store.working(group=group, limit=limit)
    rows = [working_json(e) for e in entries]
    if app_ctx.format.value == "table":
        print_table(None, ["time", "text"], ((r["created_at"], r["content"]) for r in rows))
    else:
        emit_list(rows, app_ctx.format)


@subcommand(app, "clear")
def clear(app_ctx: AppContext, group: GroupOpt = "default") -> None:
    """Empty the group's working memory."""
    validate_id("group", group)
    with app_ctx.store() as store:
        removed = store.working_clear(group=group)
    emit_object({"removed": removed}, app_ctx.format)


@command
def promote(
    app_ctx: AppContext,
    source: Annotated[str, typer.Argument(help="A UTF-8 text file, or '-' for stdin.")],
    group: GroupOpt = "default",
    agent: AgentOpt = "default",
) -> None:
    """Store text as long-term memory: split into chunks of at most 500
    characters overlapping by 50 (at paragraphs, then lines, then spaces, then
    anywhere), each a PERMANENT FACT tagged 'promoted', searchable at once, and embedded
    at once when search_backend is hybrid/dense. Promoting the same
    text again stores nothing new.
    """
    validate_id("group", group)
    validate_id("agent", agent)
    text = read_source(source, app_ctx.config.max_input_bytes)
    with app_ctx.store() as store:
        result = store.promote(text, group=group, agent=agent)
    emit_object(
        {"chunks": result.chunks, "stored": result.stored, "existing": result.existing},
        app_ctx.format,
    )


@command
def query_command(
    app_ctx: AppContext,
    query: Annotated[str, typer.Argument(help="What to look for.")],
    group: GroupOpt = "default",
) -> None:
    """Recent working memory (hot) plus long-term memories (cold) for QUERY.

    Prints {"results": [{"content", "source": "hot"|"cold", "score"}]}.

    hot: the group's 10 newest working-memory entries (score 1.0); cold: its 5 best
    long-term memories, by cosine when search_backend is hybrid/dense and the
    semantic extra is installed, else by full-text search ("cold_search" says which).
    """
    from soloqueue_mem.memory.backend import choose_backend

    validate_id("group", group)
    chosen = choose_backend(app_ctx.config.search_backend)
    if chosen.fallback_reason:
        stderr(f"warning: {chosen.fallback_reason}", app_ctx.quiet)
    with app_ctx.store() as store:
        result = store.query(query, group=group)
    out = result.as_json()
    if app_ctx.format.value == "table":
        rows = ((r["source"], f"{r['score']:.3f}", r["content"]) for r in out["results"])
        print_table(None, ["source", "score", "content"], rows)
    else:
        emit_object(out, app_ctx.format)
