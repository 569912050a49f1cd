"""The body of ``trace``, shared by the Typer command and the fast parser (no Typer)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from soloqueue_mem import jsonio
from soloqueue_mem.cli.output import Format, emit_list, print_table, print_text_block
from soloqueue_mem.cli.state import AppContext
from soloqueue_mem.errors import UsageError
from soloqueue_mem.home import validate_id

if TYPE_CHECKING:
    from soloqueue_mem.sessions.trace import TraceHit
    from soloqueue_mem.text.lexicon import Lexicon


def hit_json(hit: TraceHit) -> dict[str, Any]:
    t = hit.turn
    return {
        "id": str(t.id) if t.id else None,
        "group": t.group,
        "agent": t.agent,
        "session": t.session,
        "turn_index": t.turn_index,
        "role": t.role,
        "event_id": t.event_id,
        "timestamp": t.timestamp,
        "content": t.content,
        "tool_calls": t.tool_calls,
        "tool_results": t.tool_results,
        "metadata": t.metadata,
        "score": round(hit.score, 6),
        "source": hit.source,
    }


def lexicon_loader(app: AppContext) -> Any:
    """Open the segmentation lexicon on first use (only queries with Han need it)."""
    cache: list[Lexicon] = []

    def load() -> Lexicon:
        from soloqueue_mem.text.lexicon import open_lexicon

        if not cache:
            cache_dir = app.home.cache_dir if app.home.exists() else None
            cache.append(open_lexicon(cache_dir))
        return cache[0]

    return load


def _hit_text(hit: TraceHit) -> str:
    t = hit.turn
    from soloqueue_mem.text.records import within_record

    lines = [f"[{t.session}#{t.turn_index} {t.role} {t.timestamp}] {within_record(t.content)}"]
    for call in t.tool_calls:
        shown = call["input"] if isinstance(call["input"], str) else jsonio.dumps(call["input"])
        lines.append(f"tool call {call['name']}: {within_record(shown)}")
    for result in t.tool_results:
        label = "tool error" if result.get("is_error") else "tool result"
        lines.append(f"{label}: {within_record(str(result['content']))}")
    return "\n".join(lines)


def run_trace(
    app: AppContext,
    query: str,
    group: str | None,
    agent: str | None,
    session: str | None,
    role: str | None,
    since: str | None,
    limit: int,
) -> None:
    """Search, render (see ``trace --help``)."""
    from soloqueue_mem.clock import parse_since
    from soloqueue_mem.db.stores import open_memory
    from soloqueue_mem.sessions.trace import Scope, trace

    if query == "-":
        if sys.stdin is None:
            raise UsageError("stdin is closed")
        query = jsonio.decode_utf8(sys.stdin.buffer.read(64 * 1024))
    for kind, value in (("group", group), ("agent", agent), ("session", session)):
        if value is not None:
            validate_id(kind, value)
    since_at = parse_since(since, app.now) if since else None
    scope = Scope(group, agent, session, since_at, role)
    conn = open_memory(app.home, app.config, create=False)
    try:
        hits = trace(app.home, conn, query, scope, limit, lexicon_loader(app))
    finally:
        if conn is not None:
            conn.close()
    render_hits(hits, app.format)


def render_hits(hits: list[TraceHit], fmt: Format) -> None:
    if fmt is Format.table:
        print_table(
            None,
            ["score", "session", "turn", "role", "time", "content"],
            (
                (
                    f"{h.score:.3f}",
                    f"{h.turn.group}/{h.turn.agent}/{h.turn.session}",
                    h.turn.turn_index,
                    h.turn.role,
                    h.turn.timestamp,
                    h.turn.content[:200],
                )
                for h in hits
            ),
        )
    elif fmt is Format.text:
        print_text_block("\n---\n".join(_hit_text(h) for h in hits) + ("\n" if hits else ""))
    else:
        emit_list((hit_json(h) for h in hits), fmt)
