"""The body of ``recall``, shared by the Typer command and the fast parser (no Typer)."""

from __future__ import annotations

import os

from soloqueue_mem.api.base import check_ids
from soloqueue_mem.api.shapes import kind_of, signals_json
from soloqueue_mem.api.shapes import recall_hit_json as hit_json
from soloqueue_mem.cli.output import Format, emit_list, print_table, print_text_block, stderr
from soloqueue_mem.cli.source import argument_or_stdin
from soloqueue_mem.cli.state import AppContext
from soloqueue_mem.errors import SoloqueueError, UsageError

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import Any

    from soloqueue_mem.api.store import Store
    from soloqueue_mem.config import Config
    from soloqueue_mem.memory.recall import Hit


def _explanation(hit: Hit, config: Config) -> str:
    parts = signals_json(hit, config)["contributions"]
    terms = " + ".join(f"{value:.3f} {name}" for name, value in parts.items())
    return f"{hit.score:.3f} = {terms} [{', '.join(hit.channels)}] {hit.text[:60]!r}"


def run_recall(
    app: AppContext,
    query: str,
    type_: str | None,
    limit: int,
    max_tokens: int,
    since: str | None,
    group: str | None,
    agent: str | None,
    channels: str | None,
    traces: bool,
    explain: bool,
    recent: int = 0,
    session: str | None = None,
    persona: str | None = None,
) -> None:
    """Recall, render, note what the budget left out (see ``recall --help``)."""
    query = argument_or_stdin(query)
    if not query.strip():
        raise UsageError("QUERY is empty: give the words to search for")
    if traces and channels:
        raise UsageError("give --traces or --channels, not both")
    check_ids(group=group, agent=agent, session=session)
    chosen: tuple[str, ...] | None = ("traces",) if traces else None
    if channels:
        chosen = tuple(name.strip() for name in channels.split(",") if name.strip()) or ("",)
    asked = {
        "query": query,
        "type": type_,
        "limit": limit,
        "max_tokens": max_tokens,
        "since": since,
        "group": group,
        "agent": agent,
        "channels": None if chosen is None else list(chosen),
        "recent": recent,
        "session": session,
        "persona": persona,
    }
    if not explain and _forwarded(app, asked):
        return
    _recall_here(app, asked, explain)


def _recall_here(app: AppContext, asked: dict[str, Any], explain: bool) -> None:
    """The direct path: this process opens the database and recalls."""
    with app.store() as store:
        result = store.recall(**asked, prefixed=True)
        group = asked["group"]
        unknown = not result.hits and group is not None and not _holds_group(store, group)
    for note in result.notes:
        stderr(f"warning: {note}", app.quiet)
    if result.left_out:
        note = _budget_note(result.left_out, result.shortened, asked["max_tokens"])
        stderr(f"note: {note}", app.quiet)
    if unknown:
        stderr(f"note: group {group!r} holds no sessions, memories or episodes", app.quiet)
    _render(result.hits, app.format, explain, app.config)


def _holds_group(store: Store, group: str) -> bool:
    """Whether anything was ever stored in ``group`` (a typo finds nothing)."""
    return bool(
        store.sessions(group=group, limit=1)
        or store.memories(group=group, include_inactive=True, limit=1)
        or store.episodes(group=group, limit=1)
        or store.working(group=group, limit=1)
    )


def _forwarded(app: AppContext, asked: dict[str, Any]) -> bool:
    """Whether a warm ``serve`` of this data directory answered ``asked`` (printed here
    as the direct path prints it): for JSON output, when its ``serve.sock`` is there and
    its fingerprint matches; else the caller does the work."""
    if app.format not in (Format.json, Format.jsonl) or not asked["query"]:
        return False
    if asked["channels"] == []:  # the server would take no channels as the default ones
        return False
    if not os.path.lexists(app.home.serve_socket):
        return False  # no server to ask (and no socket module to import)
    from soloqueue_mem.storage.url import database_url

    try:
        url = database_url(app.config)
    except SoloqueueError:
        return False  # the direct path says what is wrong
    from soloqueue_mem.api import local_socket

    path = app.home.serve_socket
    if not local_socket.our_socket(path):
        return False
    fingerprint = local_socket.fingerprint(app.config, url)
    answered = local_socket.post(path, "/api/v1/recall", asked, fingerprint)
    if answered is None:
        return False
    status, answer = answered
    if status != 200:
        error = local_socket.relayed(status, answer)
        if error is None:
            return False
        raise error
    for note in answer["notes"]:
        stderr(f"warning: {note}", app.quiet)
    if answer["left_out"]:
        note = _budget_note(answer["left_out"], answer["shortened"], asked["max_tokens"])
        stderr(f"note: {note}", app.quiet)
    emit_list(answer["hits"], app.format)
    return True


def _budget_note(left_out: int, shortened: int, max_tokens: int) -> str:
    parts = []
    if left_out:
        parts.append(f"{left_out} hit(s) left out")
    if shortened:
        parts.append(f"{shortened} shortened")
    return f"{' and '.join(parts)} to fit --max-tokens {max_tokens}"


def _render(hits: list[Hit], fmt: Format, explain: bool, config: Config) -> None:
    from soloqueue_mem.memory.recall import render_text

    if fmt is Format.text:
        print_text_block(render_text(hits) + ("\n" if hits else ""))
        if explain:
            for hit in hits:
                stderr(_explanation(hit, config))
    elif fmt is Format.table:
        columns = ["score", "channel", "kind", "time", "text"]
        if explain:
            columns[1:1] = ["relevance", "recency", "importance", "access"]
        print_table(None, columns, (_row(hit, explain) for hit in hits))
    else:
        emit_list((hit_json(hit, explain, config) for hit in hits), fmt)


def _row(hit: Hit, explain: bool) -> list[Any]:
    s = hit.signals
    signals = [f"{s.relevance:.2f}", f"{s.recency:.2f}", f"{s.importance:.2f}", f"{s.access:.2f}"]
    kind = kind_of(hit)
    row = [
        f"{hit.score:.3f}",
        ",".join(hit.channels),
        kind,
        hit.candidate.timestamp,
        hit.text[:200],
    ]
    return row[:1] + signals + row[1:] if explain else row
