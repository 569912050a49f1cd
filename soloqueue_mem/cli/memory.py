"""``soloqueue-mem remember`` and ``soloqueue-mem memory``: L3 semantic memory."""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import ExitStack
from typing import TYPE_CHECKING, Annotated, Any

import typer

from soloqueue_mem import jsonio
from soloqueue_mem.api.shapes import forgotten_json, memory_json, remembered_json
from soloqueue_mem.cli.boundary import report
from soloqueue_mem.cli.options import (
    AgentFilter,
    AgentOpt,
    GroupFilter,
    GroupOpt,
    MemoryType,
    command,
    finite,
    list_limit,
    subcommand,
)
from soloqueue_mem.cli.output import (
    Format,
    emit_list,
    emit_object,
    print_table,
    print_text_block,
    stderr,
    write,
)
from soloqueue_mem.cli.state import AppContext
from soloqueue_mem.errors import BadInput, PartialFailure, UsageError
from soloqueue_mem.home import validate_id

if TYPE_CHECKING:
    from soloqueue_mem.memory.model import Memory
    from soloqueue_mem.memory.store import Draft, Remembered

app = typer.Typer(
    help="List, show, edit, forget and trace the history of semantic memories.",
    no_args_is_help=True,
)

IdArg = Annotated[str, typer.Argument(help="Memory id (or a unique prefix of 4+ digits).")]
TypeOpt = Annotated[
    MemoryType | None,
    typer.Option(
        "--type",
        help="FACT, PREFERENCE, RULE, SKILL or ERROR.",
        case_sensitive=False,
        show_default=False,
    ),
]
TagOpt = Annotated[list[str] | None, typer.Option("--tag", help="A tag (repeatable).")]
DurationOpt = Annotated[
    str | None,
    typer.Option(
        "--duration",
        help="How long it is kept: permanent, session (1 day), or 24h, 7d, 30d... "
        "Default by type: PREFERENCE/SKILL permanent, FACT 30d, ERROR 7d, RULE 24h.",
        show_default=False,
    ),
]


def _score(name: str) -> Any:
    """The option of a score (``--importance``, ``--confidence``): a number from 0 to 1."""
    return typer.Option(name, min=0.0, max=1.0, callback=finite, help="0 to 1.")


def _memories_table(rows: list[Memory]) -> None:
    print_table(
        None,
        ["id", "type", "content", "imp.", "expires"],  # memory show: every field
        (
            (
                m.id[:12],
                m.type,
                m.content[:160],
                f"{m.importance:.2f}",
                m.expires_at or "never",
            )
            for m in rows
        ),
    )


def _memory_table(memory: Memory) -> None:
    print_table(None, ["field", "value"], memory_json(memory).items())


def _emit_one(memory: Memory, fmt: Format, text: str) -> None:
    """One memory: its JSON object, a field table, or ``text`` on a line."""
    emit_object(
        memory_json(memory), fmt, table=lambda: _memory_table(memory), text=lambda: text + "\n"
    )


def _emit_many(rows: list[Memory], fmt: Format, line: Callable[[Memory], str]) -> None:
    """Memories: a JSON list, a table, or ``line(memory)`` per line."""
    emit_list(
        (memory_json(m) for m in rows),
        fmt,
        table=lambda: _memories_table(rows),
        text=lambda: "".join(line(m) + "\n" for m in rows),
    )


@command
def remember(
    app_ctx: AppContext,
    text: Annotated[
        str | None,
        typer.Argument(
            help="The memory; '-' reads it from stdin. Omit to read a JSON object or array."
        ),
    ] = None,
    type_: Annotated[
        MemoryType,
        typer.Option(
            "--type", help="FACT, PREFERENCE, RULE, SKILL or ERROR.", case_sensitive=False
        ),
    ] = MemoryType.FACT,
    subject: Annotated[
        str, typer.Option("--subject", help="Who or what it is about, e.g. user.")
    ] = "",
    predicate: Annotated[
        str, typer.Option("--predicate", help="Which attribute, e.g. editor.")
    ] = "",
    importance: Annotated[float, _score("--importance")] = 0.5,
    confidence: Annotated[float, _score("--confidence")] = 0.5,
    duration: DurationOpt = None,
    tag: TagOpt = None,
    source: Annotated[str, typer.Option("--source", help="Where it came from.")] = "manual",
    batch: Annotated[
        bool, typer.Option("--batch", help="Read JSON Lines (one memory per line) from stdin.")
    ] = False,
    event_id: Annotated[
        str | None,
        typer.Option(
            "--event-id", help="Idempotency key: a retry with the same key changes nothing."
        ),
    ] = None,
    group: GroupOpt = "default",
    agent: AgentOpt = "default",
) -> None:
    """Store a semantic memory; re-stating one raises its confidence instead of duplicating.

    A memory with the --subject and --predicate of an active one supersedes it (see
    `memory history`). JSON input takes the fields content, type, subject, predicate,
    importance, confidence, duration, tags, source, source_episode_id, group, agent.
    Prints each stored memory with its action: created, confirmed or superseded.
    """
    from soloqueue_mem.memory import intake
    from soloqueue_mem.memory.store import Draft, check_draft
    from soloqueue_mem.sessions.events import check_event_id

    validate_id("group", group)
    validate_id("agent", agent)
    if batch and text is not None:
        raise UsageError("--batch reads stdin; do not also give TEXT")
    if event_id is not None and text is None:
        raise UsageError("--event-id is for TEXT; JSON input gives each memory its event_id")
    if text is None and sys.stdin is not None and sys.stdin.isatty():
        raise UsageError('give the memory as an argument (remember "...") or pipe JSON to stdin')
    config = app_ctx.config
    if batch:
        items: Any = intake.read_lines(_stdin(), config.max_line_bytes)
    elif text is not None:
        content = jsonio.decode_utf8(_stdin().read(config.max_input_bytes)) if text == "-" else text
        draft = Draft(
            content,
            type_,
            subject,
            predicate,
            importance,
            confidence,
            duration,
            tuple(tag or ()),
            source,
        )
        # Checked before the store is opened: bad input creates nothing.
        items = [(None, intake.Item(check_draft(draft), None, None, check_event_id(event_id)))]
    else:
        items = [(None, item) for item in intake.read_document(_stdin(), config.max_input_bytes)]
    results, rejected = [], 0
    with ExitStack() as stack:
        store = None  # opened at the first good item, so an all-bad batch creates nothing
        for line, item in items:
            if isinstance(item, BadInput):
                report(item.code, str(item), item.exit_code, item.line)
                rejected += 1
                continue
            if store is None:
                store = _rememberer(app_ctx, stack)
            scope = (item.group or group, item.agent or agent)
            results.append((line, item.event_id, store(item.draft, *scope, item.event_id)))
    _emit_remembered(results, app_ctx.format, single=not batch and len(results) == 1)
    if rejected:
        raise PartialFailure(f"{rejected} line(s) rejected, the others were stored")


def _rememberer(app_ctx: AppContext, stack: ExitStack) -> Callable[..., Remembered]:
    """``remember(draft, group, agent, event_id)`` through the Store (it redacts)."""
    store = stack.enter_context(app_ctx.store())

    def remember(draft: Draft, group: str, agent: str, event_id: str | None) -> Remembered:
        return store.remember(
            draft.content,
            type=draft.type,
            subject=draft.subject,
            predicate=draft.predicate,
            importance=draft.importance,
            confidence=draft.confidence,
            duration=draft.duration,
            tags=draft.tags,
            source=draft.source,
            source_episode_id=draft.source_episode_id,
            group=group,
            agent=agent,
            event_id=event_id,
        )

    return remember


def _emit_remembered(
    results: list[tuple[int | None, str | None, Remembered]], fmt: Format, single: bool
) -> None:
    rows = [
        remembered_json(result, event_id) | ({"line": line} if line else {})
        for line, event_id, result in results
    ]
    if single:
        result = results[0][2]
        emit_object(
            rows[0],
            fmt,
            table=lambda: print_text_block(_remembered_line(result)),
            text=lambda: result.memory.id + "\n",
        )
    elif fmt is Format.table:
        _memories_table([result.memory for _, _, result in results])
    elif fmt is Format.text:
        write("".join(f"{result.memory.id}\n" for _, _, result in results))
    else:
        emit_list(iter(rows), fmt)


def _remembered_line(result: Remembered) -> str:
    """What ``remember`` did, in one line for a person: the action, the memory's id and
    type, and the start of its text (``memory show ID`` has every field)."""
    memory = result.memory
    words = " ".join(memory.content.split())
    what = f"{result.action} {memory.id}"
    if result.superseded:
        what = f"superseded {', '.join(result.superseded)} with {memory.id}"
    line = f"{what} ({memory.type}, confidence {memory.confidence:.2f}): "
    line += words if len(words) <= 60 else words[:59] + "…"
    if result.duplicate:
        line += "; already stored under this --event-id: nothing changed"
    return line + "\n"


def _stdin() -> Any:
    if sys.stdin is None:
        raise UsageError("stdin is closed")
    return sys.stdin.buffer


@subcommand(app, "list")
def list_command(
    app_ctx: AppContext,
    type_: TypeOpt = None,
    tag: Annotated[str | None, typer.Option("--tag", help="Only memories with this tag.")] = None,
    subject: Annotated[str | None, typer.Option("--subject", help="Only this subject.")] = None,
    group: GroupFilter = None,
    agent: AgentFilter = None,
    all_: Annotated[
        bool, typer.Option("--all", help="Include expired and superseded memories.")
    ] = False,
    limit: Annotated[
        int, typer.Option("--limit", "-n", help="Most memories to list (0: all).")
    ] = 50,
) -> None:
    """List active memories, most recently updated first (--all for every version)."""
    with app_ctx.store() as store:
        rows = store.memories(
            type=type_,
            tag=tag,
            subject=subject,
            group=group,
            agent=agent,
            include_inactive=all_,
            limit=list_limit(limit),
        )
    _emit_many(rows, app_ctx.format, lambda m: f"{m.id}\t{m.type}\t{m.content}")


@subcommand(app, "show")
def show(app_ctx: AppContext, memory_id: IdArg) -> None:
    """Show one memory with every field."""

    with app_ctx.store() as store:
        memory = store.memory(memory_id)
    _emit_one(memory, app_ctx.format, memory.content)


@subcommand(app, "edit")
def edit(
    app_ctx: AppContext,
    memory_id: IdArg,
    content: Annotated[str | None, typer.Option("--content", help="New text.")] = None,
    type_: TypeOpt = None,
    subject: Annotated[str | None, typer.Option("--subject", help="New subject.")] = None,
    predicate: Annotated[str | None, typer.Option("--predicate", help="New predicate.")] = None,
    importance: Annotated[float | None, _score("--importance")] = None,
    confidence: Annotated[float | None, _score("--confidence")] = None,
    duration: DurationOpt = None,
    tag: TagOpt = None,
    untag: Annotated[list[str] | None, typer.Option("--untag", help="Remove a tag.")] = None,
) -> None:
    """Correct a memory in place (use `remember` with the same --subject/--predicate to
    record a change over time instead)."""
    with app_ctx.store() as store:
        memory = store.update(
            memory_id,
            content=content,
            type=type_,
            subject=subject,
            predicate=predicate,
            importance=importance,
            confidence=confidence,
            duration=duration,
            tags=tag or (),
            untags=untag or (),
        )
    _emit_one(memory, app_ctx.format, memory.id)


@subcommand(app, "forget")
def forget(
    app_ctx: AppContext,
    memory_ids: Annotated[list[str], typer.Argument(help="Memory ids (or unique prefixes).")],
) -> None:
    """Erase memories and their earlier versions for good (the bytes are overwritten);
    identity/MEMORY.md and USER.md are rewritten without them."""
    with app_ctx.store() as store:
        result = store.forget(*memory_ids)
    if result.note:
        stderr(result.note, app_ctx.quiet)
    emit_object(
        forgotten_json(result),
        app_ctx.format,
        text=lambda: "".join(f"{memory_id}\n" for memory_id in result.ids),
    )


@subcommand(app, "history")
def history(app_ctx: AppContext, memory_id: IdArg) -> None:
    """Every version of a memory's subject/predicate chain, oldest first."""

    with app_ctx.store() as store:
        versions = store.history(memory_id)
    _emit_many(versions, app_ctx.format, lambda m: f"{m.created_at}\t{m.content}")


@subcommand(app, "restore")
def restore(app_ctx: AppContext, memory_id: IdArg) -> None:
    """Bring back a memory that decay archived (it is recalled again)."""

    with app_ctx.store() as store:
        memory = store.restore(memory_id)
    _emit_one(memory, app_ctx.format, memory.id)
