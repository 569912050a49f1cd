"""``soloqueue-mem recall``: level-1 retrieval across memories and recent turns."""

from __future__ import annotations

from typing import Annotated

import typer

from soloqueue_mem.cli import spec
from soloqueue_mem.cli.options import AgentFilter, GroupFilter, TypeFilter, command, option
from soloqueue_mem.cli.recall_run import run_recall
from soloqueue_mem.cli.state import AppContext


@command
def recall_command(
    app_ctx: AppContext,
    query: Annotated[str, typer.Argument(help="What to recall; '-' reads it from stdin.")],
    type_: TypeFilter = None,
    limit: Annotated[int, option(spec.RECALL, "limit", help="Most hits (1-100).")] = 10,
    max_tokens: Annotated[
        int, option(spec.RECALL, "max_tokens", help="Token budget of the answer (estimated).")
    ] = 700,
    since: Annotated[
        str | None, option(spec.RECALL, "since", help="Only items since a time or a duration ago.")
    ] = None,
    group: GroupFilter = None,
    agent: AgentFilter = None,
    channels: Annotated[
        str | None,
        option(
            spec.RECALL,
            "channels",
            help="Comma-separated channels: memories, episodes, traces (turns of any "
            "age), hot (working memory), when (the time the query names), kinds "
            "(preferences/rules/errors a question asks about), attachments (files "
            "by description, transcription or text), dense (embeddings; "
            "only with search_backend = hybrid or dense), recent (turns of the last "
            "3 days), graph (the associative graph, from its focus). Default: "
            "all but recent.",
            show_default=False,
        ),
    ] = None,
    traces: Annotated[
        bool, option(spec.RECALL, "traces", help="Search only raw turns of any age (level 2).")
    ] = False,
    explain: Annotated[
        bool, option(spec.RECALL, "explain", help="Show every signal behind each hit's score.")
    ] = False,
    recent: Annotated[
        int,
        option(
            spec.RECALL,
            "recent",
            help="Enrich the query with the session's last N turns (3-5; 0: off); "
            "the question keeps most of the weight and those turns are not returned.",
        ),
    ] = 0,
    session: Annotated[
        str | None,
        option(
            spec.RECALL,
            "session",
            help="Whose last turns --recent reads (default: $SOLOQUEUE_SESSION, else the "
            "newest turns of the group and agent).",
            show_default=False,
        ),
    ] = None,
    persona: Annotated[
        str | None,
        option(
            spec.RECALL,
            "persona",
            help="Put the memory types identity/personas/NAME.md favours first among hits "
            "that hold as much of the query (its front matter: 'favours: SKILL, ERROR').",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Recall what is relevant to QUERY: memories, episodes, past turns, working memory.

    The channels are fused by rank; a hit must hold a fair share of the query's words.
    Each hit is scored 0.7 relevance + 0.15 recency + 0.15 importance (weights in
    config.toml), expired and superseded memories never appear, and --limit hits fit
    --max-tokens: long ones are shortened around the query's words (stderr says so).
    --format text gives the form for an LLM prompt: '[记忆] ...' blocks separated by
    '---'. Returned memories count as accessed (which extends their retention).
    """
    run_recall(
        app_ctx,
        query,
        type_,
        limit,
        max_tokens,
        since,
        group,
        agent,
        channels,
        traces,
        explain,
        recent,
        session,
        persona,
    )
