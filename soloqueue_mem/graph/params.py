"""Seed 002 §5's parameters, read from the ``graph_*`` config keys."""

from __future__ import annotations

from soloqueue_mem.config import Config
from soloqueue_mem.tuples import NamedTuple


class Params(NamedTuple):
    max_focus_count: int = 5
    decay_rate: float = 0.97
    link_initial_strength: float = 0.5
    delete_threshold: int = 5
    link_break_threshold: float = 0.01
    time_slice: float = 30.0
    max_retries: int = 15
    worker_timeout: float = 300.0
    default_search_depth: int = 2
    max_search_results: int = 100
    max_queue_size: int = 1000


FOCUS_STRENGTH = 1.0  # links between a new node and each focus node (§4.1 step 4)
BEFORE, AFTER = "上文", "下文"  # same-batch relation names (§4.1 step 3)


def params(config: Config) -> Params:
    return Params(*(getattr(config, f"graph_{name}") for name in Params._fields))
