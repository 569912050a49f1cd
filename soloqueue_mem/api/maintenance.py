"""The maintenance half of :class:`soloqueue_mem.Store`: consolidate, gc, verify,
stats and the dense index, each returning the report dict the CLI prints."""

from __future__ import annotations

import os
from collections.abc import Callable

from soloqueue_mem.api.base import StoreBase, serialised
from soloqueue_mem.tuples import Any


class Maintenance(StoreBase):
    """Whole-store upkeep; :class:`soloqueue_mem.Store` inherits these methods."""

    @serialised
    def consolidate(
        self,
        *,
        dry_run: bool = False,
        idle: str | None = None,
        wait: bool = False,
        model: Any = None,
        graph_steps: Any = None,
        progress: Callable[[str, int, int], None] | None = None,
    ) -> dict[str, Any]:
        """Turn finished sessions into episodes and memories, dedup, decay, expire, run
        the graph queue and compress the graphs (``consolidate``); the report the CLI
        prints. ``model``: an optional ``ModelExtraction``, ``graph_steps`` the graph's
        ``Steps`` (rules when None; the CLI's use SOLOQUEUE_LLM_URL/_MODEL when set)."""
        from datetime import timedelta

        from soloqueue_mem.clock import parse_duration
        from soloqueue_mem.lifecycle.consolidate import Options
        from soloqueue_mem.lifecycle.vocabulary import vocabulary
        from soloqueue_mem.memory.backend import DENSE_BACKENDS

        config = self.config
        options = Options(
            dry_run=dry_run,
            idle=timedelta(seconds=parse_duration(idle or config.consolidate_idle)),
            wait=wait,
            embed=config.search_backend in DENSE_BACKENDS,
            words=vocabulary(config.predicates),
            graph=lambda: self._graph_step(graph_steps),
            language=config.language,
            progress=progress,
            model=model,
        )
        return self._storage().consolidate(self.now(), options)

    def _graph_step(self, steps: Any) -> dict[str, Any]:
        """The graph queue and one compression slice per agent graph."""
        from functools import partial

        from soloqueue_mem.graph.params import params
        from soloqueue_mem.graph.steps import Steps
        from soloqueue_mem.graph.worker import consolidate_graphs
        from soloqueue_mem.storage.graph import open_graph_db, worker_lock

        config = self.config
        return consolidate_graphs(
            partial(worker_lock, self.home, config),
            lambda: open_graph_db(self.home, config, create=False),
            steps or Steps(self._lexicon_loader),
            params(config),
        )

    @serialised
    def gc(
        self,
        *,
        deep: bool = False,
        dry_run: bool = False,
        ephemeral_days: float | None = None,
        grace: str | None = None,
        force: bool = False,
        wait: bool = False,
        progress: Callable[[int], None] | None = None,
    ) -> dict[str, Any]:
        """Remove expired ephemeral artifacts, and (weekly or ``deep``) unreferenced
        blobs (``gc``); the report the CLI prints."""
        from soloqueue_mem.clock import parse_duration
        from soloqueue_mem.lifecycle.gc import GcOptions
        from soloqueue_mem.storage.catalog import open_catalog

        config = self.config
        options = GcOptions(
            ephemeral_days=config.gc_ephemeral_days if ephemeral_days is None else ephemeral_days,
            grace_seconds=parse_duration(grace or config.gc_grace),
            deep_every_seconds=parse_duration(config.gc_deep_every),
            deep=deep,
            dry_run=dry_run,
            force=force,
            wait=wait,
        )
        opener = lambda: open_catalog(self.home, config, create=False)  # noqa: E731
        return self._storage().gc(opener, self.now(), options, progress)

    @serialised
    def verify(self, *, full: bool = False, repair: bool = False) -> dict[str, Any]:
        """Check the store (``verify``); ``report["exit_code"]`` is 0, 8 or 9."""
        from soloqueue_mem.clock import parse_duration
        from soloqueue_mem.ops.verify import VerifyOptions

        options = VerifyOptions(
            full=full,
            repair=repair,
            grace_seconds=parse_duration(self.config.gc_grace),
            busy_timeout_ms=self.config.busy_timeout_ms,
            ephemeral_days=self.config.gc_ephemeral_days,
        )
        return self._storage().verify(options, self.now().timestamp())

    @serialised
    def stats(self, cwd: str | None = None) -> dict[str, Any]:
        """Counts, sizes and schema versions (``stats``); creates nothing (on
        PostgreSQL: nothing local; the figures the database holds are every host's).
        ``hook_group`` is the group a Claude Code hook run in ``cwd`` (default: the
        current directory) writes to, and why (``project`` or ``shared``)."""
        from soloqueue_mem.integrations.project import hook_group

        report = self._storage().stats(self._artifacts(create=False))
        chosen = hook_group(None, self.config.hook_group, cwd or os.getcwd())
        return {**report, "hook_group": chosen._asdict()}

    @serialised
    def index_estimate(self, *, turns: bool = False) -> dict[str, Any]:
        """How much ``index --embed`` would embed (``--estimate``): ``memories`` (and
        episodes), ``turns`` (with ``turns``) and ``seconds``; ``UsageError`` without
        the semantic extra."""
        return self._storage().embed_estimate(_embedder().name, self.now(), turns)

    @serialised
    def index_embed(
        self,
        *,
        turns: bool = False,
        time_budget: float | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, Any]:
        """``index --embed``: a vector for every text that lacks one (turns too with
        ``turns``), no new batch started after ``time_budget`` seconds (the next call
        goes on); ``progress(done, total)`` as it goes; the report."""
        embedder = _embedder()
        return self._storage().embed(embedder, self.now(), turns, time_budget, progress)


def _embedder() -> Any:
    """The e5 model the dense index is built with; UsageError without the extra."""
    from soloqueue_mem.errors import UsageError
    from soloqueue_mem.semantic.model import Unavailable, load

    try:
        return load()
    except Unavailable as exc:
        raise UsageError(f"the dense index needs the semantic extra: {exc}") from None
