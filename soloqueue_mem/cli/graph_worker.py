"""The detached graph worker: ``python -m soloqueue_mem.cli.graph_worker ROOT``.

Started by ``graph remember`` (see :func:`start`); it drains the store's graph queue
under ``.graph.lock`` and exits, or exits at once when another worker holds the lock.
It never creates a store: a missing graph.db means there is nothing to do. On
PostgreSQL it runs the database's queue under the database's worker lock.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from soloqueue_mem.config import Config
    from soloqueue_mem.graph.db import GraphDb
    from soloqueue_mem.graph.steps import Steps
    from soloqueue_mem.home import Home
    from soloqueue_mem.text.lexicon import Lexicon

BACKOFF_BASE, BACKOFF_CAP = 1.0, 30.0  # seed 002 §6.5: 1 s, 2 s, 4 s … at most 30 s


def start(root: str) -> None:
    """Start a worker on the data directory ``root`` (``graph remember``'s path: a
    plain str, no pathlib)."""
    from soloqueue_mem.cli.detached import spawn

    spawn(__name__, [root])


def start_if_queued(root: str, db: GraphDb) -> None:
    """Start a worker when tasks wait: they were queued while we held the worker lock,
    and the workers their ``graph remember`` started left at once."""
    if db.depth():
        start(root)


def steps_for(home: Home, config: Config, env: Mapping[str, str]) -> Steps:
    """The rules, or the model when SOLOQUEUE_LLM_URL and SOLOQUEUE_LLM_MODEL are set."""
    from soloqueue_mem.graph.params import params
    from soloqueue_mem.graph.steps import Steps
    from soloqueue_mem.lifecycle.llm import from_env

    p = params(config)
    llm = from_env(env, p.worker_timeout, p.max_retries, BACKOFF_BASE, BACKOFF_CAP)
    return Steps(lexicon_for(home), llm, language=config.language)


def lexicon_for(home: Home) -> Callable[[], Lexicon]:
    """Open the segmentation lexicon on first use (only Chinese text needs it)."""
    cache: list[Lexicon] = []

    def load() -> Lexicon:
        from soloqueue_mem.text.lexicon import open_lexicon

        if not cache:
            cache.append(open_lexicon(home.cache_dir))
        return cache[0]

    return load


def main(argv: list[str]) -> None:
    from functools import partial

    from soloqueue_mem.config import load_config
    from soloqueue_mem.graph.params import params
    from soloqueue_mem.graph.worker import work
    from soloqueue_mem.home import Home
    from soloqueue_mem.storage.graph import has_graph, open_graph_db, worker_lock

    home = Home(argv[1])
    config = load_config(home.config_file)
    if not has_graph(home, config):
        return

    def opened():  # type: ignore[no-untyped-def]
        db = open_graph_db(home, config, create=False)
        assert db is not None
        return db

    lock = partial(worker_lock, home, config)
    work(lock, opened, steps_for(home, config, os.environ), params(config))


if __name__ == "__main__":
    main(sys.argv)
