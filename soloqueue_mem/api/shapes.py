"""The values :class:`soloqueue_mem.Store` returns, and their JSON objects.

Store methods return the library's named tuples (``Memory``, ``TraceHit``, recall's
``Hit`` …) and the three below, named tuples too (not dataclasses: recall and trace
import this module on their JSON path, where ``dataclasses`` would add ~20 ms to
start-up). The ``*_json`` functions turn each into the exact object the CLI prints with
``--format json`` (the CLI, the MCP server and the HTTP API all use them), so the JSON
contract has one definition.
"""

from __future__ import annotations

from soloqueue_mem.tuples import NamedTuple

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import Any

    from soloqueue_mem.artifacts.catalog import Artifact
    from soloqueue_mem.config import Config
    from soloqueue_mem.context.assemble import Result as BuildResult
    from soloqueue_mem.memory.episodes import Episode
    from soloqueue_mem.memory.model import Memory
    from soloqueue_mem.memory.recall import Hit
    from soloqueue_mem.memory.store import Forgotten, Remembered
    from soloqueue_mem.memory.working import Entry as WorkingEntry
    from soloqueue_mem.sessions.trace import TraceHit
    from soloqueue_mem.sessions.turns import SessionRow
    from soloqueue_mem.sessions.writer import LoggedTurn
    from soloqueue_mem.state.values import Entry


class Added(NamedTuple):
    """What ``Store.add`` did: the session it logged, and the memories its extraction
    created, confirmed (restated: confidence raised) and superseded (the new versions;
    ``replaced``: the ids of the old ones)."""

    session: str
    added: list[Memory]
    confirmed: list[Memory]
    superseded: list[Memory]
    replaced: list[str]


class SessionEnded(NamedTuple):
    """What ``Store.session_end`` did."""

    group: str
    agent: str
    session: str
    ended_at: str
    episodes: list[str]  # episode ids written
    memories: list[str]  # memory ids extracted
    transient_cleared: list[str]  # ids of the TRANSIENT memories of the session deleted


class ArtifactBytes(NamedTuple):
    """A byte range of an artifact, checked against its hash."""

    artifact: Artifact
    offset: int
    data: bytes

    @property
    def end(self) -> int:
        return self.offset + len(self.data)

    @property
    def complete(self) -> bool:
        """True when the range reaches the artifact's last byte."""
        return self.end >= self.artifact.size


def trace_hit_json(hit: TraceHit) -> dict[str, Any]:
    t = hit.turn
    return {
        "id": str(t.id) if t.id else None,
        **fields(t, "group", "agent", "session", "turn_index", "role", "event_id"),
        **fields(t, "timestamp", "content", "tool_calls", "tool_results", "metadata"),
        "score": round(hit.score, 6),
        "source": hit.source,
    }


def fields(item: Any, *names: str) -> dict[str, Any]:
    """The named attributes of ``item``, in that order (the JSON key order)."""
    return {name: getattr(item, name) for name in names}


def recall_hit_json(
    hit: Hit, explain: bool = False, config: Config | None = None
) -> dict[str, Any]:
    c = hit.candidate
    data: dict[str, Any] = {
        "kind": kind_of(hit),
        "id": item_id(hit),
        "channel": c.channel,
        "channels": hit.channels,
        "score": hit.score,
        "content": c.content,
        "text": hit.text,
        "tokens": hit.tokens,
        "timestamp": c.timestamp,
    }
    if c.memory is not None:
        data |= fields(c.memory, "group", "agent", "type", "subject", "predicate", "tags")
        data |= fields(
            c.memory, "importance", "confidence", "access_count", "created_at", "expires_at"
        )
    if c.turn is not None:
        data |= fields(c.turn, "group", "agent", "session", "turn_index", "role", "event_id")
        data |= fields(c.turn, "metadata", "tool_calls", "tool_results")
        data["superseded_by"] = c.superseded_by
    if c.working is not None:
        data |= fields(c.working, "group", "source")
    if c.episode is not None:
        data |= fields(c.episode, "group", "agent", "session", "goal", "outcome", "tools_used")
        data |= fields(c.episode, "entities", "started_at")
        data["superseded_by"] = c.superseded_by
    if c.attachment is not None:
        a = c.attachment
        data |= fields(a, "group", "agent", "session", "filename", "direction", "mime_type")
        data |= {
            "tags": a.tags,
            "artifact_id": None if a.artifact_id is None else str(a.artifact_id),
        }
    if c.graph_node is not None:
        data |= fields(c.graph_node, "group", "agent", "phrase", "keywords")
    if explain:
        from soloqueue_mem.config import Config

        data["signals"] = signals_json(hit, config or Config())
    return data


def kind_of(hit: Hit) -> str:
    c = hit.candidate
    if c.working:
        return "working"
    if c.attachment:
        return "attachment"
    if c.graph_node:
        return "graph"
    return "memory" if c.memory else "episode" if c.episode else "turn"


def item_id(hit: Hit) -> str | None:
    """The memory's, episode's, working entry's or turn's id; None for a turn found
    only in the logs."""
    c = hit.candidate
    if c.memory:
        return c.memory.id
    if c.episode:
        return c.episode.id
    if c.working:
        return str(c.working.id)
    if c.attachment:
        return c.attachment.id
    if c.graph_node:
        return str(c.graph_node.id)
    return str(c.turn.id) if c.turn and c.turn.id else None


def signals_json(hit: Hit, config: Config) -> dict[str, Any]:
    """Every signal behind a recall hit's score, with the weights (``--explain``)."""
    weights = {
        "relevance": config.recall_weight_relevance,
        "recency": config.recall_weight_recency,
        "importance": config.recall_weight_importance,
        "access": config.recall_weight_access,
    }
    values = hit.signals._asdict()
    return {
        **values,
        "weights": weights,
        "contributions": {
            name: round(weight * values[name], 6) for name, weight in weights.items()
        },
        "recall_half_life": config.recall_half_life,
    }


def turn_json(turn: LoggedTurn) -> dict[str, Any]:
    """A turn ``log`` stored (``line`` only for --batch input)."""
    data = turn._asdict()
    data["id"] = str(turn.id)
    data["offloaded"] = list(turn.offloaded)
    if data["line"] is None:
        del data["line"]
    return data


def memory_json(memory: Memory) -> dict[str, Any]:
    return memory._asdict()


def remembered_json(result: Remembered, event_id: str | None = None) -> dict[str, Any]:
    return {
        "action": result.action,
        "superseded": result.superseded,
        "event_id": event_id,
        "duplicate": result.duplicate,
        **memory_json(result.memory),
    }


def forgotten_json(result: Forgotten) -> dict[str, Any]:
    return {
        "forgotten": result.ids,
        "wal_cleared": result.wal_cleared,
        "identity_rewritten": result.identity_rewritten,
    }


def session_json(row: SessionRow) -> dict[str, Any]:
    data = row._asdict()
    del data["jsonl_bytes"]
    return data


def session_ended_json(result: SessionEnded) -> dict[str, Any]:
    return result._asdict()


def artifact_json(artifact: Artifact) -> dict[str, Any]:
    data = artifact._asdict()
    data["id"] = str(artifact.id)
    data["sha256"] = data.pop("content_hash")
    return data


ENTRY_SCOPE_NAMES = ("group", "agent", "session")


def entry_json(entry: Entry) -> dict[str, Any]:
    """A kv_store entry or a session variable."""
    return {
        **dict(zip(ENTRY_SCOPE_NAMES, entry.scope, strict=False)),
        "key": entry.key,
        "value": entry.value,
        "updated_at": entry.updated_at,
    }


def episode_json(episode: Episode) -> dict[str, Any]:
    """An episode (``episode list``, ``episode show``)."""
    return episode._asdict()


def working_json(entry: WorkingEntry) -> dict[str, Any]:
    """A working-memory entry (``working list``, ``working add``)."""
    return {
        "id": str(entry.id),
        **fields(entry, "group", "content", "source", "created_at", "expires_at"),
    }


def manifest_json(result: BuildResult) -> dict[str, Any]:
    """``context build --manifest``: the messages with every candidate's fate."""
    built = result.built
    return {
        "messages": built.messages,
        "limit": built.limit,
        "safe": built.safe,
        "budget": built.budget,
        "used": built.used,
        "fallback": built.fallback,
        "encoding": result.counter,
        "exact": result.exact,
        "offloaded": result.offloaded,
        "layers": [layer._asdict() for layer in result.layers],
        "manifest": [
            {
                "position": e.position,
                "role": e.message.get("role"),
                "tokens": e.tokens,
                "kept": e.kept,
                "reason": e.reason,
            }
            for e in built.entries
        ],
    }
