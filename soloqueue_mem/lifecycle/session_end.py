"""Ending a session: mark it ended, digest its new turns, drop its TRANSIENT memories.

What ``session end`` does and what a Claude Code ``SessionEnd`` hook does. With a model
configured (seed 003 §7.3), the turns' memories, the episode's summary and the
scratchpad rewrite come from it, each falling back to the rules.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import NamedTuple

from soloqueue_mem.config import Config
from soloqueue_mem.lifecycle.digest import DbTarget, Digest, digest, writers
from soloqueue_mem.lifecycle.model_extract import ModelExtraction
from soloqueue_mem.lifecycle.vocabulary import vocabulary
from soloqueue_mem.sessions.events import SessionKey
from soloqueue_mem.sessions.reader import end_session
from soloqueue_mem.state.session import clear_transients


class Ended(NamedTuple):
    ended_at: str
    digest: Digest
    transient_cleared: list[str]


def end_and_digest(
    target: DbTarget,
    key: SessionKey,
    config: Config,
    now: datetime,
    done: Collection[int] = (),
    model: ModelExtraction | None = None,
) -> Ended:
    """End ``key`` (NotFound when it was never logged) and turn what its turns state
    into an episode and memories in ``target``, either back end's (through ``model``
    when one is configured, else the quick rules); the turns in ``done`` were extracted
    on log already and are only summarized."""
    ended_at = end_session(target.conn, key, now)
    use = writers(model, vocabulary(config.predicates))
    made = digest(target, target.home, key, now, "session_end", use, done)
    return Ended(ended_at, made, clear_transients(target.conn, key, target.index.memories))
