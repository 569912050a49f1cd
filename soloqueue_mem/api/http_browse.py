"""The routes the viewer (``api/viewer/``) reads and writes through: sessions and
their turns page by page, memories with their history, edit, forget and restore,
episodes, the scratchpad and working memory, the agent's graph, ``stats``; and the
viewer's own files. Each goes through
:class:`~soloqueue_mem.Store`, behind the same token as the rest of the API.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from soloqueue_mem.api import shapes
from soloqueue_mem.api.store import Store
from soloqueue_mem.errors import BadInput, NotFound
from soloqueue_mem.text.strings import resolve

VIEWER_FILES = {
    "viewer.js": "text/javascript; charset=utf-8",
    "viewer.css": "text/css; charset=utf-8",
    "cytoscape.min.js": "text/javascript; charset=utf-8",
}
# The page runs only its own files; it talks only to this server; no frame may hold it.
VIEWER_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data: blob:; "
    "style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def _param(request: Request, name: str) -> str | None:
    return request.query_params.get(name) or None


def _int_param(request: Request, name: str, default: int) -> int:
    value = request.query_params.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise BadInput(f"{name!r} must be an integer") from None


def stats(store: Store, body: dict[str, Any], request: Request) -> Any:
    return store.stats()


def sessions(store: Store, body: dict[str, Any], request: Request) -> Any:
    rows = store.sessions(
        group=_param(request, "group"),
        agent=_param(request, "agent"),
        limit=_int_param(request, "limit", 100),
    )
    return {"sessions": [shapes.session_json(row) for row in rows]}


def turns(store: Store, body: dict[str, Any], request: Request) -> Any:
    """``{"turns", "next"}``: ``next`` is the ``after`` of the following page, or null."""
    from soloqueue_mem.sessions.offload import referenced_artifacts

    limit = _int_param(request, "limit", 50)
    page = store.turns(
        request.path_params["session"],
        group=request.path_params["group"],
        agent=request.path_params["agent"],
        after=_int_param(request, "after", -1),
        limit=limit,
    )
    rows = []
    for turn in page:
        row = turn._asdict()
        texts = [turn.content, *(str(r.get("content", "")) for r in turn.tool_results)]
        row["artifacts"] = [ref for text in texts for ref in referenced_artifacts(text)]
        rows.append(row)
    more = len(page) == limit
    return {"turns": rows, "next": page[-1].turn_index if more else None}


def memories(store: Store, body: dict[str, Any], request: Request) -> Any:
    rows = store.memories(
        type=_param(request, "type"),
        tag=_param(request, "tag"),
        group=_param(request, "group"),
        agent=_param(request, "agent"),
        include_inactive=request.query_params.get("inactive") == "1",
        limit=_int_param(request, "limit", 50),
    )
    return {"memories": [shapes.memory_json(m) for m in rows]}


def memory(store: Store, body: dict[str, Any], request: Request) -> Any:
    return shapes.memory_json(store.memory(request.path_params["id"]))


def memory_history(store: Store, body: dict[str, Any], request: Request) -> Any:
    versions = store.memory_history(request.path_params["id"])
    return {"versions": [shapes.memory_json(m) for m in versions]}


def memory_edit(store: Store, body: dict[str, Any], request: Request) -> Any:
    content = body.get("content")
    if not isinstance(content, str):
        raise BadInput("'content' is required (a string)")
    return shapes.memory_json(store.memory_edit(request.path_params["id"], content=content))


def memory_restore(store: Store, body: dict[str, Any], request: Request) -> Any:
    return shapes.memory_json(store.memory_restore(request.path_params["id"]))


def forget(store: Store, body: dict[str, Any], request: Request) -> Any:
    """``{"ids": [...]}``: erased for good, as ``memory forget``."""
    ids = body.get("ids")
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise BadInput("'ids' must be a non-empty array of memory ids")
    return shapes.forgotten_json(store.forget(*ids))


def episodes(store: Store, body: dict[str, Any], request: Request) -> Any:
    rows = store.episodes(
        group=_param(request, "group"),
        agent=_param(request, "agent"),
        session=_param(request, "session"),
        limit=_int_param(request, "limit", 20),
    )
    return {"episodes": [shapes.episode_json(row) for row in rows]}


def scratchpad(store: Store, body: dict[str, Any], request: Request) -> Any:
    from soloqueue_mem.memory.scratchpad import as_json

    pad = store.scratchpad(
        group=_param(request, "group") or "default", agent=_param(request, "agent") or "default"
    )
    return as_json(pad)


def working(store: Store, body: dict[str, Any], request: Request) -> Any:
    """``{"entries"}``: each with ``expires_in_s``, its time left by the store's clock."""
    from soloqueue_mem.clock import parse_timestamp

    now = store.now()
    entries = store.working(
        group=_param(request, "group") or "default", limit=_int_param(request, "limit", 50)
    )
    rows = []
    for entry in entries:
        left = parse_timestamp(entry.expires_at) - now
        rows.append({**shapes.working_json(entry), "expires_in_s": int(left.total_seconds())})
    return {"entries": rows}


def graph(store: Store, body: dict[str, Any], request: Request) -> Any:
    return store.graph_export(
        group=_param(request, "group") or "default", agent=_param(request, "agent") or "default"
    )


def graph_node(store: Store, body: dict[str, Any], request: Request) -> Any:
    node = request.path_params["node"]
    if not node.isascii() or not node.isdigit():
        raise NotFound(f"graph node {node} not found")
    return store.graph_show(int(node))


def graph_recall(store: Store, body: dict[str, Any], request: Request) -> Any:
    keywords = body.get("keywords")
    if not isinstance(keywords, str) or not keywords.strip():
        raise BadInput("'keywords' is required (a non-empty string)")
    from soloqueue_mem.graph.recall import as_json

    found = store.graph_recall(
        keywords.split(),
        group=body.get("group") or "default",
        agent=body.get("agent") or "default",
    )
    return as_json(found, store.config.language)


def viewer_page(setting: str) -> Response:
    """The viewer's page, in the store's ``language`` setting (``auto``: the locale's;
    the script reads ``lang``)."""
    language = resolve(setting)
    page = _viewer_file("index.html").replace('lang="en"', f'lang="{language}"', 1)
    return Response(page, media_type="text/html; charset=utf-8", headers=VIEWER_HEADERS)


def viewer_asset(store: Store, body: dict[str, Any], request: Request) -> Response:
    name = request.path_params["name"]
    if name not in VIEWER_FILES:
        raise NotFound(f"no viewer file {name}")
    return Response(_viewer_file(name), media_type=VIEWER_FILES[name], headers=VIEWER_HEADERS)


def _viewer_file(name: str) -> str:
    return (resources.files("soloqueue_mem.api") / "viewer" / name).read_text("utf-8")


def wants_page(request: Request) -> bool:
    """A browser navigating (``Accept: text/html``) gets the viewer; an API client
    the JSON status it always got."""
    return "text/html" in request.headers.get("accept", "")
