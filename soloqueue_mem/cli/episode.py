"""``soloqueue-mem episode``: what happened in past sessions (seed 003 §4.2)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from soloqueue_mem.api.shapes import episode_json
from soloqueue_mem.cli.options import (
    AgentFilter,
    GroupFilter,
    SessionFilter,
    checked_limit,
    list_limit,
    subcommand,
)
from soloqueue_mem.cli.output import Format, emit_list, emit_object, print_table
from soloqueue_mem.cli.state import AppContext

if TYPE_CHECKING:
    from soloqueue_mem.memory.episodes import Episode

app = typer.Typer(
    help="List, show and search episodes (one per finished session stretch).", no_args_is_help=True
)

LimitOpt = Annotated[int, typer.Option("--limit", "-n", help="Most episodes (1-1000).")]
ListLimitOpt = Annotated[int, typer.Option("--limit", "-n", help="Most episodes (0: all).")]


def _render(rows: list[Episode], fmt: Format) -> None:
    emit_list(
        (episode_json(e) for e in rows),
        fmt,
        table=lambda: print_table(
            None,
            ["id", "session", "ended", "outcome", "tools", "summary"],
            (
                (
                    e.id[:12],
                    e.session,
                    e.ended_at,
                    e.outcome,
                    " ".join(e.tools_used),
                    e.summary[:160],
                )
                for e in rows
            ),
        ),
        text=lambda: "".join(f"{e.ended_at}\t{e.session}\t{e.summary}\n" for e in rows),
    )


@subcommand(app, "list")
def list_command(
    app_ctx: AppContext,
    session: SessionFilter = None,
    group: GroupFilter = None,
    agent: AgentFilter = None,
    limit: ListLimitOpt = 20,
) -> None:
    """Episodes, most recent first."""

    limit = list_limit(limit)
    with app_ctx.store() as store:
        rows = store.episodes(group=group, agent=agent, session=session, limit=limit)
    _render(rows, app_ctx.format)


@subcommand(app, "show")
def show(
    app_ctx: AppContext,
    episode_id: Annotated[str, typer.Argument(help="Episode id (or a unique prefix).")],
) -> None:
    """One episode with its action nodes, entities and linked memories."""

    with app_ctx.store() as store:
        episode = store.episode(episode_id)
    emit_object(
        episode_json(episode),
        app_ctx.format,
        table=lambda: print_table(None, ["field", "value"], episode_json(episode).items()),
        text=lambda: episode.summary + "\n",
    )


@subcommand(app, "search")
def search(
    app_ctx: AppContext,
    query: Annotated[
        str, typer.Argument(help="Words to find in summaries, goals, entities, tools.")
    ],
    session: SessionFilter = None,
    group: GroupFilter = None,
    agent: AgentFilter = None,
    limit: LimitOpt = 10,
) -> None:
    """Search episodes (Chinese and English), best match first."""
    checked_limit(limit, 1000)
    with app_ctx.store() as store:
        found = store.search_episodes(query, group=group, agent=agent, session=session, limit=limit)
    _render(found, app_ctx.format)
