"""``soloqueue_mem.Store``: the library's public entry point.

One object owns what every CLI call sets up again: the data directory, its config,
the clock, the segmentation lexicon and the database connections (opened on first
use, kept until :meth:`Store.close`). Methods validate their arguments, raise the
errors of :mod:`soloqueue_mem.errors` (each carries the CLI's exit code) and return
the values described in :mod:`soloqueue_mem.api.shapes`.

Reading methods never create the data directory: on a store that does not exist yet
they return nothing (or raise ``NotFound`` where the CLI exits 3). Calls are
serialised by a lock, so one Store may be shared by threads.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from soloqueue_mem.api.attachments import AttachmentMethods
from soloqueue_mem.api.base import check_ids, serialised
from soloqueue_mem.api.graph import GraphMethods
from soloqueue_mem.api.maintenance import Maintenance
from soloqueue_mem.api.shapes import Added, ArtifactBytes, SessionEnded
from soloqueue_mem.api.transfer import TransferMethods
from soloqueue_mem.errors import BadInput, UsageError

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, BinaryIO

    from soloqueue_mem.artifacts.catalog import Artifact
    from soloqueue_mem.artifacts.store import Saved
    from soloqueue_mem.context.assemble import Result as BuildResult
    from soloqueue_mem.context.compress import Compressed
    from soloqueue_mem.memory.episodes import Episode
    from soloqueue_mem.memory.hotcold import Answer
    from soloqueue_mem.memory.model import Memory
    from soloqueue_mem.memory.promote import Promoted
    from soloqueue_mem.memory.recall import Result as RecallResult
    from soloqueue_mem.memory.scratchpad import Scratchpad
    from soloqueue_mem.memory.store import Forgotten, Remembered
    from soloqueue_mem.memory.working import Added as WorkingAdded
    from soloqueue_mem.memory.working import Entry as WorkingEntry
    from soloqueue_mem.sessions.events import Event, SessionKey
    from soloqueue_mem.sessions.reader import SessionLogContent
    from soloqueue_mem.sessions.trace import TraceHit
    from soloqueue_mem.sessions.turns import SessionRow, Turn
    from soloqueue_mem.sessions.writer import LoggedTurn
    from soloqueue_mem.state.values import Entry
    from soloqueue_mem.storage.base import Backend

EXPORT_FORMATS = ("jsonl", "md", "openai", "anthropic")


class Store(Maintenance, GraphMethods, TransferMethods, AttachmentMethods):
    """A soloqueue-mem data directory, opened for use from Python.

    ``root``: the data directory; default as the CLI finds it (``SOLOQUEUE_HOME``,
    else the nearest ``.soloqueue/`` above the working directory, else the user data
    directory). ``config``: default ``config.toml`` of that directory. ``clock``: a
    function returning the current UTC time; default honours ``SOLOQUEUE_NOW``.
    """

    # -- sessions (L2) -------------------------------------------------------------

    @serialised
    def log(
        self,
        event: str | dict[str, Any] | Sequence[dict[str, Any]],
        *,
        role: str = "user",
        session: str | None = None,
        group: str = "default",
        agent: str = "default",
        offload: bool = False,
    ) -> list[LoggedTurn]:
        """Log one turn (text with ``role``, or an event/OpenAI message object) or a
        list of them, accepted or rejected as a whole (``BadInput``). ``session``
        defaults as in ``log``: the session of the last hour, else a new one."""
        from soloqueue_mem.sessions.events import parse_event
        from soloqueue_mem.sessions.intake import parse_array
        from soloqueue_mem.sessions.writer import Rejected
        from soloqueue_mem.storage.catalog import offloader

        check_ids(group=group, agent=agent, session=session)
        if isinstance(event, str):
            events = [parse_event({"role": role, "content": event})]
        elif isinstance(event, dict):
            events = [parse_event(event)]
        else:
            events = parse_array(list(event))
        now = self.now()
        offload_to = offloader(self.home, self.config, now, offload)
        try:
            items = [(None, e) for e in events]
            results = list(self._storage().log(items, (group, agent, session), now, offload_to))
        finally:
            offload_to.close()
        for result in results:
            if isinstance(result, Rejected):
                raise BadInput(result.reason, result.line)
        return results  # type: ignore[return-value]

    @serialised
    def trace(
        self,
        query: str,
        *,
        group: str | None = None,
        agent: str | None = None,
        session: str | None = None,
        role: str | None = None,
        since: str | datetime | None = None,
        limit: int = 10,
    ) -> list[TraceHit]:
        """Search logged turns (``trace``): best BM25 matches first, within the scope."""
        from soloqueue_mem.clock import iso
        from soloqueue_mem.sessions.turns import Scope

        check_ids(group=group, agent=agent, session=session)
        start = self._since(since)
        scope = Scope(group, agent, session, iso(start) if start else None, role)
        return self._storage().trace(query, scope, limit, self._lexicon_loader)

    @serialised
    def sessions(
        self, *, group: str | None = None, agent: str | None = None, limit: int = 100
    ) -> list[SessionRow]:
        """Sessions, most recently active first (``session list``)."""
        check_ids(group=group, agent=agent)
        return self._storage().sessions(group, agent, max(1, limit))

    @serialised
    def session_export(
        self,
        session: str,
        *,
        format: str = "jsonl",
        full: bool = False,
        group: str = "default",
        agent: str = "default",
    ) -> str:
        """The text ``session export`` prints: ``jsonl`` records, ``md``, ``openai``
        messages or ``anthropic`` ``{system, messages}`` (offloaded tool output as
        references unless ``full``)."""
        if format not in EXPORT_FORMATS:
            raise UsageError(f"format must be one of {', '.join(EXPORT_FORMATS)}")
        key = self._key(group, agent, session)
        return exported(key, self._storage().session(key).records, format, full)

    @serialised
    def session(
        self, session: str, *, group: str = "default", agent: str = "default"
    ) -> SessionLogContent:
        """The session's log as recorded (``session show``): ``.records``, and
        ``.problems`` for the lines that could not be read."""
        return self._storage().session(self._key(group, agent, session))

    @serialised
    def turns(
        self,
        session: str,
        *,
        group: str = "default",
        agent: str = "default",
        after: int = -1,
        limit: int = 50,
    ) -> list[Turn]:
        """A page of a session's turns past turn ``after``, as the index holds them
        (offloaded output as its reference); page on with the last ``turn_index``."""
        if not 1 <= limit <= 1000:
            raise BadInput("limit must be between 1 and 1000")
        return self._storage().session_page(self._key(group, agent, session), after, limit)

    @serialised
    def session_turns(
        self, session: str, *, group: str = "default", agent: str = "default"
    ) -> list[Turn]:
        """Every turn of the session as the index holds them, in order (none for a
        session never logged)."""
        return self._storage().session_turns(self._key(group, agent, session))

    @serialised
    def session_end(
        self, session: str, *, group: str = "default", agent: str = "default"
    ) -> SessionEnded:
        """End a session and digest it into an episode and memories (``session end``)."""
        key = self._key(group, agent, session)
        ended = self._storage().session_end(key, self.now())
        return SessionEnded(
            key.group,
            key.agent,
            key.session,
            ended_at=ended.ended_at,
            episodes=[episode.id for episode in ended.digest.episodes],
            memories=[r.memory.id for r in ended.digest.remembered],
            transient_cleared=ended.transient_cleared,
        )

    @serialised
    def add(
        self,
        messages: str | dict[str, Any] | Sequence[dict[str, Any]],
        *,
        group: str = "default",
        agent: str = "default",
        session: str | None = None,
    ) -> Added:
        """Log ``messages`` (as :meth:`log` takes them) as one session, end it and return
        what its extraction did to the memories: ``.added``, ``.confirmed`` (restated)
        and ``.superseded`` (the new versions; ``.replaced`` the ids they replaced).

        ``session`` defaults to a new one per call, so each call is digested on its own.
        """
        import uuid

        logged = self.log(messages, session=session or uuid.uuid4().hex, group=group, agent=agent)
        first = logged[0]
        key = self._key(first.group, first.agent, first.session)
        digest = self._storage().session_end(key, self.now()).digest
        by_action: dict[str, list[Memory]] = {"created": [], "confirmed": [], "superseded": []}
        for result in digest.remembered:
            by_action[result.action].append(result.memory)
        replaced = [old for result in digest.remembered for old in result.superseded]
        return Added(
            key.session,
            by_action["created"],
            by_action["confirmed"],
            by_action["superseded"],
            replaced,
        )

    # -- memories (L3) -------------------------------------------------------------

    @serialised
    def recall(
        self,
        query: str,
        *,
        type: str | None = None,
        limit: int = 10,
        max_tokens: int = 700,
        since: str | datetime | None = None,
        group: str | None = None,
        agent: str | None = None,
        channels: Sequence[str] | None = None,
        prefixed: bool = False,
        recent: int = 0,
        session: str | None = None,
        persona: str | None = None,
    ) -> RecallResult:
        """Memories, episodes, turns and working memory relevant to ``query``
        (``recall``); ``.hits`` fit ``max_tokens``. Returned memories count as accessed.

        With ``recent`` (3-5), the query is enriched with the last ``recent`` turns of
        ``session`` (default: the newest of ``group`` and ``agent``), which are never
        returned themselves (docs/concepts/search.md).

        With ``persona``, the memory types ``identity/personas/<persona>.md`` favours
        come first among hits that hold as much of the query (docs/extraction.md).

        A hit's ``text`` is the memory's (perhaps shortened) text; with ``prefixed``,
        as an LLM reads it, after the ``[memory]`` mark (``render_text`` joins those)."""
        from soloqueue_mem.memory.model import check_type
        from soloqueue_mem.memory.recall import Request, unprefixed

        check_ids(group=group, agent=agent, session=session)
        request = Request(
            query=query,
            group=group,
            agent=agent,
            type=check_type(type) if type else None,
            since=self._since(since),
            channels=tuple(channels) if channels else None,
            limit=limit,
            max_tokens=max_tokens,
            recent=recent,
            session=session,
            favoured=self._favoured(persona),
        )
        result = self._storage().recall(request, self.now(), self._lexicon_loader)
        return result if prefixed else unprefixed(result)

    def _favoured(self, persona: str | None) -> frozenset[str]:
        """The memory types ``persona`` favours; its module (file reads, pathlib) is
        loaded only when a persona is asked for."""
        if persona is None:
            return frozenset()
        from soloqueue_mem.memory.persona import favoured

        return favoured(self.home.root, persona)

    @serialised
    def remember(
        self,
        content: str,
        *,
        type: str = "FACT",
        subject: str = "",
        predicate: str = "",
        importance: float = 0.5,
        confidence: float = 0.5,
        duration: str | None = None,
        tags: Iterable[str] = (),
        source: str = "manual",
        group: str = "default",
        agent: str = "default",
        event_id: str | None = None,
        source_episode_id: str | None = None,
    ) -> Remembered:
        """Store a memory (``remember``): ``.action`` is created, confirmed or superseded.
        A retry with the same ``event_id`` changes nothing (``.duplicate``);
        ``source_episode_id`` names the episode it was learnt in."""
        from soloqueue_mem.memory.intake import redacted
        from soloqueue_mem.memory.store import Draft, check_draft
        from soloqueue_mem.sessions.events import check_event_id

        check_ids(group=group, agent=agent)
        event_id = check_event_id(event_id)
        fields = (content, type, subject, predicate, importance, confidence, duration)
        given = Draft(*fields, tuple(tags), source, source_episode_id)
        draft = redacted(check_draft(given), self._redactor())
        done = self._storage().remember(draft, group, agent, self.now(), event_id)
        if done.action != "confirmed":  # a new text: a warm server's model embeds it now
            self._storage().embed_held([done.memory.id], self.now())
        return done

    @serialised
    def memory(self, memory_id: str) -> Memory:
        """One memory by id or unique prefix (``memory show``)."""
        return self._storage().memory(memory_id)

    @serialised
    def memories(
        self,
        *,
        type: str | None = None,
        tag: str | None = None,
        subject: str | None = None,
        group: str | None = None,
        agent: str | None = None,
        include_inactive: bool = False,
        limit: int = 50,
    ) -> list[Memory]:
        """Active memories, most recently updated first (``memory list``)."""
        from soloqueue_mem.errors import BadInput
        from soloqueue_mem.memory.store import Filters

        if limit < 1:
            raise BadInput("--limit must be at least 1")
        check_ids(group=group, agent=agent)
        filters = Filters(group, agent, type, tag, subject, include_inactive=include_inactive)
        return self._storage().memories(filters, self.now(), limit)

    @serialised
    def update(
        self,
        memory_id: str,
        *,
        content: str | None = None,
        type: str | None = None,
        subject: str | None = None,
        predicate: str | None = None,
        importance: float | None = None,
        confidence: float | None = None,
        duration: str | None = None,
        tags: Iterable[str] = (),
        untags: Iterable[str] = (),
    ) -> Memory:
        """Correct a memory in place (``memory edit``), redacted as ``remember``
        redacts: only the fields given change; ``tags`` are added, ``untags`` removed.
        To record a change over time instead, :meth:`remember` the new value with the
        same subject and predicate."""
        from soloqueue_mem.memory.store import Changes

        if content is not None and not content.strip():
            raise BadInput("the new content is empty")
        redact = self._redactor()

        def clean(value: str | None) -> str | None:
            return value if value is None or redact is None else redact.text(value)

        changes = Changes(
            clean(content),
            type,
            clean(subject),
            clean(predicate),
            importance,
            confidence,
            duration,
            tuple(t if redact is None else redact.text(t) for t in tags),
            tuple(untags),
        )
        if changes == Changes():
            raise UsageError("nothing to change: give content, type, importance, tags, ...")
        return self._storage().edit(memory_id, changes, self.now())

    @serialised
    def history(self, memory_id: str) -> list[Memory]:
        """Every version of the memory's subject/predicate chain, oldest first
        (``memory history``): what it said before each change."""
        return self._storage().history(memory_id)

    @serialised
    def restore(self, memory_id: str) -> Memory:
        """Bring back a memory that decay archived, so recall finds it again
        (``memory restore``)."""
        return self._storage().restore(memory_id, self.now())

    # The web viewer's names for the same calls (its HTTP routes use them).
    memory_edit = update
    memory_history = history
    memory_restore = restore

    @serialised
    def forget(self, *memory_ids: str) -> Forgotten:
        """Erase memories and their earlier versions for good (``memory forget``)."""
        if not memory_ids:
            raise UsageError("give at least one memory id")
        return self._storage().forget(memory_ids, self.now())

    # -- working memory, promote, hot + cold query ------------------------

    @serialised
    def working_add(self, content: str, *, group: str = "default") -> WorkingAdded:
        """Push an entry onto the group's working memory (``working add``); the entry
        filter may drop it (``.entry`` None, ``.dropped`` names the rule)."""
        check_ids(group=group)
        redact = self._redactor()
        text = content if redact is None else redact.text(content)
        return self._storage().working_add(group, text, "add", self.now())

    @serialised
    def working(self, *, group: str = "default", limit: int = 10) -> list[WorkingEntry]:
        """The group's live working-memory entries, newest first (``working list``);
        each expires at its ``expires_at``."""
        from soloqueue_mem.memory.working import CAP

        check_ids(group=group)
        if not 1 <= limit <= CAP:
            raise BadInput(f"limit must be between 1 and {CAP}")
        return self._storage().working(group, self.now(), limit)

    @serialised
    def episodes(
        self,
        *,
        group: str | None = None,
        agent: str | None = None,
        session: str | None = None,
        limit: int = 20,
    ) -> list[Episode]:
        """Episodes, most recently ended first (``episode list``)."""
        from soloqueue_mem.memory.episodes import EpisodeFilters

        if limit < 1:
            raise BadInput("limit must be at least 1")
        check_ids(group=group, agent=agent, session=session)
        return self._storage().episodes(EpisodeFilters(group, agent, session), limit)

    @serialised
    def working_clear(self, *, group: str = "default") -> int:
        """Empty the group's working memory (``working clear``); how many entries went."""
        check_ids(group=group)
        return self._storage().working_clear(group)

    @serialised
    def episode(self, episode_id: str) -> Episode:
        """One episode by id or unique prefix (``episode show``)."""
        return self._storage().episode(episode_id)

    @serialised
    def search_episodes(
        self,
        query: str,
        *,
        group: str | None = None,
        agent: str | None = None,
        session: str | None = None,
        limit: int = 10,
    ) -> list[Episode]:
        """Episodes matching ``query`` (Chinese and English), best first (``episode
        search``)."""
        from soloqueue_mem.memory.episodes import EpisodeFilters
        from soloqueue_mem.text.fts import query_terms

        check_ids(group=group, agent=agent, session=session)
        filters = EpisodeFilters(group, agent, session)
        terms = query_terms(query, self._lexicon_loader)
        return [e for e, _ in self._storage().search_episodes(terms, filters, max(1, limit))]

    @serialised
    def scratchpad(self, *, group: str = "default", agent: str = "default") -> Scratchpad:
        """The scratchpad of (group, agent) with its parsed fields (``scratchpad
        show``): the empty template, in the ``language`` setting's, before the first
        write."""
        from soloqueue_mem.memory.scratchpad import template

        check_ids(group=group, agent=agent)
        return self._storage().scratchpad(group, agent, template(self.config.language))

    @serialised
    def promote(self, text: str, *, group: str = "default", agent: str = "default") -> Promoted:
        """Store text as long-term memory in chunks of <= 500 characters overlapping by
        50 (``promote``); promoting the same text again stores nothing new."""
        check_ids(group=group, agent=agent)
        redact = self._redactor()
        text = text if redact is None else redact.text(text)
        if not text.strip():
            raise BadInput("nothing to promote: the text is empty")
        return self._storage().promote(group, agent, text, self.now())

    @serialised
    def query(self, query: str, *, group: str = "default") -> Answer:
        """The hot + cold answer of ``query``; ``.as_json()`` is its JSON.
        A dense back end that cannot load falls back to full-text search
        (``cold_search`` says which was used)."""
        check_ids(group=group)
        return self._storage().query(query, group, self.now(), self._lexicon_loader)

    # -- artifacts (L4) ------------------------------------------------------------

    @serialised
    def artifact_save(
        self,
        content: bytes | BinaryIO,
        *,
        title: str | None = None,
        tags: Iterable[str] = (),
        group: str | None = None,
        author: str | None = None,
        mime: str | None = None,
    ) -> Saved:
        """Store bytes (or a binary stream) in the CAS and catalog them (``artifact save``)."""
        import io

        from soloqueue_mem.artifacts.store import NewArtifact, save
        from soloqueue_mem.bounded_io import Capped

        check_ids(group=group)
        cap = self.config.max_artifact_bytes
        if not isinstance(content, bytes):
            content = Capped(content, cap, "max_artifact_bytes")  # type: ignore[assignment]
        elif len(content) > cap:
            raise BadInput(f"the input is larger than max_artifact_bytes ({cap} bytes)")
        redact = self._redactor()
        if redact is not None or isinstance(content, bytes):
            data = content if isinstance(content, bytes) else content.read()
            if redact is not None:
                from soloqueue_mem.redact import redacted_bytes

                data = redacted_bytes(data, redact)
            content = io.BytesIO(data)
        meta = NewArtifact(title, tuple(tags), group, author, mime)
        conn = self._artifacts(create=True)
        assert conn is not None
        return save(self.home, conn, content, meta, self.now())

    @serialised
    def artifact(self, ref: str) -> Artifact:
        """An artifact's metadata by id or sha256 (``artifact show``)."""
        from soloqueue_mem.artifacts import catalog

        return catalog.get(self._existing_artifacts(), ref)

    @serialised
    def artifact_read(
        self, ref: str, *, offset: int = 0, length: int | None = None
    ) -> ArtifactBytes:
        """``length`` bytes (default: all) from ``offset``, checked against the hash."""
        from soloqueue_mem.artifacts.store import read

        if offset < 0 or (length is not None and length < 0):
            raise UsageError("offset and length must not be negative")
        conn = self._existing_artifacts()
        artifact, chunks = read(self.home, conn, ref)
        end = artifact.size if length is None else min(artifact.size, offset + length)
        parts, position = [], 0
        for chunk in chunks:  # every chunk is read: the hash is checked at the end
            lo, hi = max(offset - position, 0), min(end - position, len(chunk))
            if lo < hi:
                parts.append(chunk[lo:hi])
            position += len(chunk)
        return ArtifactBytes(artifact, min(offset, artifact.size), b"".join(parts))

    @serialised
    def artifacts(
        self, *, tag: str | None = None, group: str | None = None, limit: int = 100
    ) -> list[Artifact]:
        """Artifacts, newest first (``artifact list``)."""
        from soloqueue_mem.artifacts import catalog

        conn = self._artifacts(create=False)
        return catalog.list_artifacts(conn, tag, group, max(1, limit)) if conn else []

    # -- context (L1) --------------------------------------------------------------

    @serialised
    def context_build(
        self,
        *,
        session: str | None = None,
        messages: Sequence[dict[str, Any] | Event] | None = None,
        system: str = "",
        model: str | None = None,
        max_context: int | None = None,
        encoding: str | None = None,
        reserve: int = 4096,
        margin: float = 0.05,
        with_memory: bool = False,
        query: str | None = None,
        manifest: bool = False,
        group: str = "default",
        agent: str = "default",
    ) -> BuildResult:
        """The messages to send (``context build``), from a logged ``session`` or the
        given OpenAI ``messages`` (or parsed events); ``.built.messages`` is the array."""
        from soloqueue_mem.context.assemble import Options, build_context, default_layers
        from soloqueue_mem.context.identity import compiled as compiled_identity
        from soloqueue_mem.context.inputs import memory_recaller, stored_state
        from soloqueue_mem.context.models import counting, model_info

        check_ids(group=group, agent=agent)
        if (session is None) == (messages is None):
            raise UsageError("give session or messages (one of them)")
        if model is None and max_context is None:
            raise UsageError("give model or max_context")
        if query is not None and not with_memory:
            raise UsageError("query is used by with_memory")
        info = None
        if model:
            try:
                info = model_info(model, self.config.models)
            except UsageError:
                if max_context is None:  # an unknown model is fine when the limit is given
                    raise
        counted_by, proxy_margin = counting(info) if info else ("cl100k_base", 0.0)
        options = Options(
            system=system,
            limit=max_context or (info.context if info else 0),
            reserve=reserve,
            margin=margin,
            encoding=encoding or counted_by,
            manifest=manifest,
            proxy_margin=0.0 if encoding else proxy_margin,
            language=self.config.language,
        )
        history = self._history(session, messages, group, agent)
        backend = self._storage()
        layers = None
        if with_memory:
            now = self.now()
            loader = self._lexicon_loader
            recaller = memory_recaller(backend, self.config, now, query, group, loader)
            state = stored_state(group, agent, session, backend)
            identity = compiled_identity(self.home.root, now)
            pad = _pad_reader(backend, group, agent, self.config.language)
            language = self.config.language
            layers = default_layers(self.home, pad, recaller, state, identity, language=language)
        return build_context(backend.token_cache(), history, options, layers)

    def _history(
        self,
        session: str | None,
        messages: Sequence[dict[str, Any] | Event] | None,
        group: str,
        agent: str,
    ) -> Any:
        from soloqueue_mem.context.assemble import given_history, session_history
        from soloqueue_mem.sessions.events import Event, SessionKey, parse_event
        from soloqueue_mem.storage.catalog import offloader

        if session is not None:
            key = self._key(group, agent, session)
            return session_history(self.home, key, self._storage().session(key).records)
        events = [m if isinstance(m, Event) else parse_event(m) for m in messages or ()]
        offload_to = offloader(self.home, self.config, self.now())
        try:
            return given_history(events, SessionKey(group, agent, "context"), offload_to)
        finally:
            offload_to.close()

    @serialised
    def context_compress(
        self, session: str, *, keep: int = 10, group: str = "default", agent: str = "default"
    ) -> Compressed:
        """A summary message plus the last ``keep`` turns; what leaves the context
        becomes memories first (``context compress``), and with
        ``context_compress_feeds_graph`` a task of the graph's queue (``.graph_task``:
        :meth:`graph_work` or a worker runs it)."""
        from functools import partial

        from soloqueue_mem.clock import iso
        from soloqueue_mem.graph.ops import feed_compressed
        from soloqueue_mem.lifecycle.vocabulary import vocabulary
        from soloqueue_mem.storage.graph import open_graph_db

        key = self._key(group, agent, session)
        words = vocabulary(self.config.predicates)
        result = self._storage().compress(key, keep, self.now(), words)
        graph = partial(open_graph_db, self.home, self.config)
        task = feed_compressed(graph, self.config, key, result.fresh_records, iso(self.now()))
        return result._replace(graph_task=task)

    # -- the scratchpad ------------------------------------------------------------

    @serialised
    def scratchpad_set(
        self, content: str, *, group: str = "default", agent: str = "default"
    ) -> Scratchpad:
        """Replace the scratchpad (``scratchpad set``), redacted and checked (at most
        2000 characters) before anything is written."""
        from soloqueue_mem.memory.scratchpad import check

        check_ids(group=group, agent=agent)
        redact = self._redactor()
        content = check(content if redact is None else redact.text(content))
        return self._storage().scratchpad_put(group, agent, content, self.now())

    # -- preferences ---------------------------------------------------------------

    @serialised
    def kv_set(
        self, key: str, value: Any, *, group: str = "default", agent: str = "default"
    ) -> Entry:
        """Store a JSON value under ``key`` for (group, agent) (``kv set``)."""
        from soloqueue_mem.state.values import encode

        check_ids(group=group, agent=agent, key=key)
        redact = self._redactor()
        if redact is not None:
            value = redact.value(value)
        encode(value)  # too big or not JSON: refused before the store is created
        return self._storage().value_put("kv_store", (group, agent), key, value, self.now())

    @serialised
    def kv_get(self, key: str, *, group: str = "default", agent: str = "default") -> Entry:
        """The value under ``key`` (``NotFound`` when unset)."""
        check_ids(group=group, agent=agent, key=key)
        return self._storage().value("kv_store", (group, agent), key)

    @serialised
    def kv_list(self, *, group: str = "default", agent: str = "default") -> list[Entry]:
        """Every key of (group, agent), in key order (``kv list``)."""
        check_ids(group=group, agent=agent)
        return self._storage().values("kv_store", (group, agent))

    @serialised
    def kv_remove(self, key: str, *, group: str = "default", agent: str = "default") -> Entry:
        """Remove ``key`` (``kv rm``): the entry it held (``NotFound`` when unset)."""
        check_ids(group=group, agent=agent, key=key)
        return self._storage().value_remove("kv_store", (group, agent), key)

    # -- session variables -----------------------------------------------------------

    @serialised
    def session_set(
        self, session: str, name: str, value: Any, *, group: str = "default", agent: str = "default"
    ) -> Entry:
        """Set the session variable ``name`` to a JSON value, redacted (``session
        set``); ``current_task`` and ``next_step`` also lead the scratchpad's lists."""
        from soloqueue_mem.state.values import encode

        key = self._variable_key(group, agent, session, name)
        redact = self._redactor()
        if redact is not None:
            value = redact.value(value)
        encode(value)  # too big or not JSON: refused before the store is created
        return self._storage().session_set(key, name, value, self.now())

    @serialised
    def session_get(
        self, session: str, name: str, *, group: str = "default", agent: str = "default"
    ) -> Entry:
        """The session variable ``name`` (``NotFound`` when unset)."""
        from soloqueue_mem.state.session import TABLE

        key = self._variable_key(group, agent, session, name)
        return self._storage().value(TABLE, key, name)

    @serialised
    def session_variables(
        self, session: str, *, group: str = "default", agent: str = "default"
    ) -> list[Entry]:
        """Every variable of the session, in name order (``session get``)."""
        from soloqueue_mem.state.session import TABLE

        return self._storage().values(TABLE, self._key(group, agent, session))

    @serialised
    def session_unset(
        self, session: str, name: str, *, group: str = "default", agent: str = "default"
    ) -> Entry:
        """Remove the session variable ``name``: the entry it held (``NotFound`` when
        unset)."""
        from soloqueue_mem.state.session import TABLE

        key = self._variable_key(group, agent, session, name)
        return self._storage().value_remove(TABLE, key, name)

    def _variable_key(self, group: str, agent: str, session: str, name: str) -> SessionKey:
        from soloqueue_mem.home import validate_id

        key = self._key(group, agent, session)
        validate_id("variable", name)
        return key


def exported(key: SessionKey, records: list[dict[str, Any]], format: str, full: bool) -> str:
    """A session's ``records`` in an :data:`EXPORT_FORMATS` ``format`` (see
    :meth:`Store.session_export`)."""
    from soloqueue_mem import jsonio
    from soloqueue_mem.sessions.markdown import render_turns
    from soloqueue_mem.sessions.reader import anthropic_messages, openai_messages

    if format == "openai":
        return jsonio.dumps(openai_messages(records, full=full)) + "\n"
    if format == "anthropic":
        return jsonio.dumps(anthropic_messages(records, full=full)) + "\n"
    if format == "md":
        return render_turns(key, records, first=True)
    return "".join(jsonio.dumps_compact(r) + "\n" for r in records)


def _pad_reader(
    backend: Backend, group: str, agent: str, language: str
) -> Callable[[], Scratchpad | None]:
    """What reads the scratchpad of (group, agent) for context build's layer (an
    unwritten one: the ``language`` setting's template)."""
    from soloqueue_mem.memory import scratchpad

    return lambda: backend.scratchpad(group, agent, scratchpad.template(language))
