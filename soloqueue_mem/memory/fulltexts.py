"""A back end's full-text indexes of memories, episodes and attachments, as one value:
what the SQL written once for both back ends writes through (FTS5's on memory.db,
the ``search`` columns on PostgreSQL)."""

from __future__ import annotations

from soloqueue_mem.memory import attachments, episodes, store
from soloqueue_mem.tuples import NamedTuple


class FullTexts(NamedTuple):
    """A back end's full-text indexes of memories, episodes and attachments (FTS5 by
    default)."""

    memories: store.FullText = store.FTS5
    episodes: episodes.FullText = episodes.FTS5
    attachments: attachments.FullText = attachments.FTS5


FTS5 = FullTexts()
