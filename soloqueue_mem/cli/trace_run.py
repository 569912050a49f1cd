"""The body of ``trace``, shared by the Typer command and the fast parser (no Typer)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from soloqueue_mem import jsonio
from soloqueue_mem.api.shapes import trace_hit_json as hit_json
from soloqueue_mem.cli.output import Format, emit_list, print_table, turn_summary
from soloqueue_mem.cli.source import argument_or_stdin
from soloqueue_mem.cli.state import AppContext

if TYPE_CHECKING:
    from soloqueue_mem.sessions.trace import TraceHit


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
    query = argument_or_stdin(query)
    with app.store() as store:
        hits = store.trace(
            query, group=group, agent=agent, session=session, role=role, since=since, limit=limit
        )
    render_hits(hits, app.format)


def _table(hits: list[TraceHit]) -> None:
    # Three columns, so the content keeps most of a 60-column terminal; the turn's
    # tool calls and results are shown with it (a tool-call turn has no text).
    print_table(
        None,
        ["score", "turn", "content"],
        (
            (
                f"{h.score:.2f}",
                f"{h.turn.session}#{h.turn.turn_index}\n{h.turn.role}\n{h.turn.timestamp[:16]}",
                turn_summary(h.turn.content[:200], h.turn.tool_calls, h.turn.tool_results),
            )
            for h in hits
        ),
    )


def render_hits(hits: list[TraceHit], fmt: Format) -> None:
    emit_list(
        (hit_json(h) for h in hits),
        fmt,
        table=lambda: _table(hits),
        text=lambda: "\n---\n".join(_hit_text(h) for h in hits) + ("\n" if hits else ""),
    )
