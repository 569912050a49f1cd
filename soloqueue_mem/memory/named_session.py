"""A session a question names by its place as recall's time window.

"我们第一次会话都干了些什么？", "what did we do in our first session?", "上次对话说到哪了"
name no calendar time, so :func:`soloqueue_mem.text.when.parse_when` finds nothing in
them, and their words ("session", 会话) are in no turn. The store knows which session
was first or last: its episodes do. The window runs from the earliest start to the
latest end of that session's episodes, and recall's ``when`` channel adds its turns
and episodes to the candidates, as for "last week" (it removes nothing: issue 27).
The last session is the newest one other than the session asking. A session with no
episode yet (still open, never ended or consolidated) is not found by its place.

"What did we do on the first day?", 第一天, 上次聊天那天 name the calendar day that
session started, in ``now``'s time zone as every other window of recall: the whole
day, so what else was said that day joins too, and a session that ran past midnight
is not followed into the next day.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from soloqueue_mem.clock import parse_timestamp
from soloqueue_mem.memory.channels import Request, Source
from soloqueue_mem.memory.episodes import EpisodeFilters
from soloqueue_mem.text.when import TimeWindow, calendar_day, named_session

EPISODES_READ = 50  # a session's episodes, and the newest ones passed over for the asking one


def session_window(source: Source, request: Request, now: datetime) -> TimeWindow | None:
    """The window of the session ``request.query`` names by its place (or of the
    day it started, in ``now``'s time zone), or None."""
    named = named_session(request.query)
    if named is None:
        return None
    scope = EpisodeFilters(request.group, request.agent)
    ended = source.episodes(scope, EPISODES_READ, oldest=named.first)
    chosen = next((e for e in ended if named.first or e.session != request.session), None)
    if chosen is None:
        return None
    its = source.episodes(EpisodeFilters(chosen.group, chosen.agent, chosen.session), EPISODES_READ)
    start = min(parse_timestamp(e.started_at) for e in its)
    if named.day:
        return TimeWindow(*calendar_day(start.astimezone(now.tzinfo)), named.span)
    end = max(parse_timestamp(e.ended_at) for e in its) + timedelta(seconds=1)
    return TimeWindow(start, end, named.span)
