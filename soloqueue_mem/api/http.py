"""``soloqueue-mem serve``: the HTTP API (the ``[server]`` extra: Starlette on uvicorn).

Seed 004's ``POST /api/v1/memory/ingest`` and ``/query``, plus log, trace, recall,
remember and artifact reads, all on one warm :class:`~soloqueue_mem.Store`. Bodies
are JSON objects capped at ``max_body_bytes``; errors are
``{"error": {"code", "message", "exit_code"}}`` with the CLI's exit code mapped to an
HTTP status. Only the owner can use it: see ``guard`` (the token, Host, Origin and
Content-Type checks). The same app also answers on ``<root>/serve.sock`` (private to
the owner: no token there, a matching fingerprint instead; see ``local_socket``).
"""

from __future__ import annotations

import asyncio
import hmac
import sys
import traceback
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from soloqueue_mem import __version__, faults, jsonio
from soloqueue_mem.api import http_browse as browse
from soloqueue_mem.api import shapes
from soloqueue_mem.api.guard import (
    Guard,
    HttpError,
    allowed_hosts,
    check_json_body,
    is_loopback,
    same,
)
from soloqueue_mem.api.local_socket import FINGERPRINT_HEADER, Listening
from soloqueue_mem.api.store import Store
from soloqueue_mem.errors import BadInput, BadOption, SoloqueueError, UsageError

# The CLI's exit codes (README, "Errors and exit codes") as HTTP statuses.
STATUS_OF_EXIT = {1: 500, 2: 400, 3: 404, 65: 422, 69: 501, 74: 500, 75: 503}
# A body must arrive within this many seconds of its headers (the headers' own limit:
# slow_clients.HEADER_SECONDS).
BODY_SECONDS = 30.0
Handler = Callable[[Store, dict[str, Any], Request], Any]


def error_response(exc: SoloqueueError) -> JSONResponse:
    status = exc.status if isinstance(exc, HttpError) else STATUS_OF_EXIT.get(exc.exit_code, 500)
    body = {"error": {"code": exc.code, "message": str(exc), "exit_code": exc.exit_code}}
    if isinstance(exc, BadOption):  # what the CLI says when the value is an option's
        body["error"]["cli_exit_code"] = UsageError.exit_code
    headers = {"Retry-After": "1"} if status == 503 else None
    if status == 401:
        headers = {"WWW-Authenticate": "Bearer"}
    return JSONResponse(body, status_code=status, headers=headers)


def _json(data: Any, status: int = 200) -> Response:
    return Response(jsonio.dumps(data), status, media_type="application/json")


async def _body(request: Request, limit: int) -> dict[str, Any]:
    """The request's JSON object, read up to ``limit`` bytes within BODY_SECONDS."""
    check_json_body(request)
    try:
        return await asyncio.wait_for(_read_body(request, limit), BODY_SECONDS)
    except TimeoutError:
        message = f"the body did not arrive within {BODY_SECONDS:g} s"
        raise HttpError(408, "timeout", message) from None


async def _read_body(request: Request, limit: int) -> dict[str, Any]:
    declared = request.headers.get("content-length")
    if declared is not None and _digits(declared) and int(declared) > limit:
        raise HttpError(413, "too_large", f"request body is larger than {limit} bytes", 65)
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > limit:
            raise HttpError(413, "too_large", f"request body is larger than {limit} bytes", 65)
    value = jsonio.loads(bytes(data)) if data.strip() else {}
    if not isinstance(value, dict):
        raise BadInput("the body must be a JSON object")
    return value


def _field(
    body: dict[str, Any], name: str, kind: type | tuple[type, ...], default: Any = None
) -> Any:
    value = body.get(name, default)
    if value is not None and (
        not isinstance(value, kind) or isinstance(value, bool) and kind is not bool
    ):
        raise BadInput(f"{name!r} has the wrong type")
    return value


def _strings(body: dict[str, Any], name: str, default: Any = None) -> Any:
    """A list of strings (or ``default`` when absent)."""
    value = _field(body, name, list, default)
    if value is not None and not all(isinstance(item, str) for item in value):
        raise BadInput(f"{name!r} must be an array of strings")
    return value


def _text(body: dict[str, Any], name: str) -> str:
    value = _field(body, name, str)
    if not value:
        raise BadInput(f"{name!r} is required (a non-empty string)")
    return value


def ingest(store: Store, body: dict[str, Any], request: Request) -> Any:
    """Seed 004: promote content to long-term memory, in chunks (``promote``)."""
    result = store.promote(
        _text(body, "content"),
        group=_field(body, "group_id", str, "default"),
        agent=_field(body, "agent_id", str, "default"),
    )
    return {"chunks": result.chunks, "stored": result.stored, "existing": result.existing}


def query(store: Store, body: dict[str, Any], request: Request) -> Any:
    """Seed 004: ``{"results": [{"content", "source": "hot"|"cold", "score"}],
    "cold_search"}`` (``query``)."""
    group = _field(body, "group_id", str, "default")
    return store.query(_text(body, "query"), group=group).as_json()


def log(store: Store, body: dict[str, Any], request: Request) -> Any:
    """``{"event": {...}}`` or ``{"events": [...]}`` (as ``log`` reads them), or
    ``{"content", "role"}``; ``group``, ``agent``, ``session`` as ``log``'s options."""
    events = body.get("events", body.get("event"))
    if events is None:
        events = _text(body, "content")
    elif not isinstance(events, dict | list):
        raise BadInput("'event' must be an object, 'events' an array")
    turns = store.log(
        events,
        role=_field(body, "role", str, "user"),
        session=_field(body, "session", str),
        group=_field(body, "group", str, "default"),
        agent=_field(body, "agent", str, "default"),
    )
    return {"turns": [shapes.turn_json(t) for t in turns]}


def trace(store: Store, body: dict[str, Any], request: Request) -> Any:
    hits = store.trace(
        _text(body, "query"),
        group=_field(body, "group", str),
        agent=_field(body, "agent", str),
        session=_field(body, "session", str),
        role=_field(body, "role", str),
        since=_field(body, "since", str),
        limit=_field(body, "limit", int, 10),
    )
    return {"hits": [shapes.trace_hit_json(h) for h in hits]}


def recall(store: Store, body: dict[str, Any], request: Request) -> Any:
    result = store.recall(
        _text(body, "query"),
        type=_field(body, "type", str),
        limit=_field(body, "limit", int, 10),
        max_tokens=_field(body, "max_tokens", int, 700),
        since=_field(body, "since", str),
        group=_field(body, "group", str),
        agent=_field(body, "agent", str),
        channels=_strings(body, "channels"),
        prefixed=True,  # the JSON's text, as recall prints it
        recent=_field(body, "recent", int, 0),
        session=_field(body, "session", str),
        persona=_field(body, "persona", str),
    )
    explain = _field(body, "explain", bool, False)
    return {
        "hits": [shapes.recall_hit_json(h, explain, store.config) for h in result.hits],
        "left_out": result.left_out,
        "shortened": result.shortened,
        "notes": result.notes,
    }


def remember(store: Store, body: dict[str, Any], request: Request) -> Any:
    """``remember``'s fields; its JSON object back."""
    result = store.remember(
        _text(body, "content"),
        type=_field(body, "type", str, "FACT"),
        subject=_field(body, "subject", str, ""),
        predicate=_field(body, "predicate", str, ""),
        importance=_field(body, "importance", (int, float), 0.5),
        confidence=_field(body, "confidence", (int, float), 0.5),
        duration=_field(body, "duration", str),
        tags=_strings(body, "tags", []),
        source=_field(body, "source", str, "manual"),
        group=_field(body, "group", str, "default"),
        agent=_field(body, "agent", str, "default"),
        event_id=_field(body, "event_id", str),
    )
    return shapes.remembered_json(result, body.get("event_id"))


def read_artifact(store: Store, body: dict[str, Any], request: Request) -> Any:
    """The artifact's bytes; ``Range: bytes=A-B`` (or ``A-``) gives a 206 part."""
    ref = request.path_params["ref"]
    wanted = request.headers.get("range")
    if wanted is None:
        part = store.artifact_read(ref)
        return _bytes(part, 200)
    offset, end = _range(wanted)
    part = store.artifact_read(ref, offset=offset, length=None if end is None else end - offset + 1)
    if part.offset >= part.artifact.size and part.artifact.size:
        raise HttpError(416, "range", f"the artifact has {part.artifact.size} bytes")
    return _bytes(part, 206)


def artifact_meta(store: Store, body: dict[str, Any], request: Request) -> Any:
    return shapes.artifact_json(store.artifact(request.path_params["ref"]))


def _range(header: str) -> tuple[int, int | None]:
    unit, _, spec = header.partition("=")
    first, dash, last = spec.partition("-")
    if unit.strip() != "bytes" or not dash or not _digits(first) or (last and not _digits(last)):
        raise HttpError(416, "range", "give one range: Range: bytes=START-END or bytes=START-")
    if last and int(last) < int(first):
        raise HttpError(416, "range", "the range ends before it starts")
    return int(first), int(last) if last else None


def _digits(text: str) -> bool:
    """ASCII digits only (``str.isdigit`` also takes "²", which ``int`` refuses)."""
    return text.isascii() and text.isdigit()


def _bytes(part: shapes.ArtifactBytes, status: int) -> Response:
    artifact = part.artifact
    headers = {
        "X-Artifact-Sha256": artifact.content_hash,
        "Accept-Ranges": "bytes",
        # a download, never a page of the API's origin (an attached .html runs no script)
        "Content-Disposition": f'attachment; filename="artifact-{artifact.id}"',
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "sandbox; default-src 'none'",
    }
    if status == 206:
        headers["Content-Range"] = (
            f"bytes {part.offset}-{max(part.end - 1, part.offset)}/{artifact.size}"
        )
    media = artifact.mime or "application/octet-stream"
    return Response(part.data, status, headers=headers, media_type=media)


def build_app(
    store: Store,
    guard: Guard,
    max_body_bytes: int = 1 << 20,
    fingerprint: str | None = None,
) -> Starlette:
    """The ASGI app serving ``store``: a call over TCP must satisfy ``guard``, one over
    the unix socket must send ``fingerprint`` instead. Handlers run in worker threads,
    so a call waiting on a database lock never holds up another (nor ``/health``)."""

    def endpoint(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        async def call(request: Request) -> Response:
            try:
                if _on_unix_socket(request):
                    _check_fingerprint(request, fingerprint)
                else:
                    guard.check_token(request)
                body = await _body(request, max_body_bytes) if request.method == "POST" else {}
                result = await run_in_threadpool(_handle, handler, store, body, request)
            except SoloqueueError as exc:
                return error_response(exc)
            except Exception:  # noqa: BLE001 - a bug: its traceback in the log, not the answer
                traceback.print_exc(file=sys.stderr)
                return error_response(HttpError(500, "internal", "unexpected error", 1))
            return result if isinstance(result, Response) else _json(result)

        return call

    async def health(request: Request) -> Response:
        return _json({"status": "ok", "version": __version__})

    async def log_in(request: Request) -> Response:
        """``/?token=T``: the printed URL; sets the cookie a browser sends from then on
        and sends it back to ``/`` (the token leaves the address bar)."""
        given = request.query_params.get("token")
        try:
            if given is None:
                guard.check_token(request)
            elif guard.token is not None and not same(given, guard.token):
                raise HttpError(401, "unauthorized", "this is not the token serve printed")
        except HttpError as exc:
            return error_response(exc)
        if given is None and browse.wants_page(request):
            return browse.viewer_page(store.config.language)
        if given is None:
            return _json({"status": "ok", "version": __version__})
        response = RedirectResponse("/", 303)
        if guard.token is not None:
            response.set_cookie(guard.cookie, guard.token, httponly=True, samesite="strict")
        return response

    async def not_found(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 404)
        code, exit_code = ("not_found", 3) if status == 404 else ("method", 2)
        message = f"no route {request.method} {request.url.path}"
        return error_response(HttpError(status, code, message, exit_code))

    post = ["POST"]
    routes = [
        Route("/", log_in, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
        Route("/api/v1/memory/ingest", endpoint(ingest), methods=post),
        Route("/api/v1/memory/query", endpoint(query), methods=post),
        Route("/api/v1/log", endpoint(log), methods=post),
        Route("/api/v1/trace", endpoint(trace), methods=post),
        Route("/api/v1/recall", endpoint(recall), methods=post),
        Route("/api/v1/remember", endpoint(remember), methods=post),
        Route("/api/v1/artifacts/{ref}", endpoint(read_artifact), methods=["GET"]),
        Route("/api/v1/artifacts/{ref}/meta", endpoint(artifact_meta), methods=["GET"]),
        Route("/api/v1/stats", endpoint(browse.stats), methods=["GET"]),
        Route("/api/v1/sessions", endpoint(browse.sessions), methods=["GET"]),
        Route(
            "/api/v1/sessions/{group}/{agent}/{session}/turns",
            endpoint(browse.turns),
            methods=["GET"],
        ),
        Route("/api/v1/memories", endpoint(browse.memories), methods=["GET"]),
        Route("/api/v1/memories/{id}", endpoint(browse.memory), methods=["GET"]),
        Route("/api/v1/memories/{id}/history", endpoint(browse.memory_history), methods=["GET"]),
        Route("/api/v1/memories/{id}/edit", endpoint(browse.memory_edit), methods=post),
        Route("/api/v1/memories/{id}/restore", endpoint(browse.memory_restore), methods=post),
        Route("/api/v1/forget", endpoint(browse.forget), methods=post),
        Route("/api/v1/episodes", endpoint(browse.episodes), methods=["GET"]),
        Route("/api/v1/scratchpad", endpoint(browse.scratchpad), methods=["GET"]),
        Route("/api/v1/working", endpoint(browse.working), methods=["GET"]),
        Route("/api/v1/graph", endpoint(browse.graph), methods=["GET"]),
        Route("/api/v1/graph/nodes/{node}", endpoint(browse.graph_node), methods=["GET"]),
        Route("/api/v1/graph/recall", endpoint(browse.graph_recall), methods=post),
        Route("/viewer/{name}", endpoint(browse.viewer_asset), methods=["GET"]),
    ]
    middleware = [Middleware(Guarded, guard=guard)]
    if guard.origins:  # answers their preflight; Guarded refuses every other origin
        cors = Middleware(
            CORSMiddleware,
            allow_origins=sorted(guard.origins),
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type", "Range"],
        )
        middleware.insert(0, cors)
    handlers = {404: not_found, 405: not_found}
    return Starlette(routes=routes, middleware=middleware, exception_handlers=handlers)


def _handle(handler: Handler, store: Store, body: dict[str, Any], request: Request) -> Any:
    faults.fault("serve.handler")
    return handler(store, body, request)


class Guarded:
    """Refuses a request over TCP whose ``Host`` or ``Origin`` the guard refuses."""

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app, self.guard = app, guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope) if scope["type"] == "http" else None
        if request is not None and not _on_unix_socket(request):
            try:
                self.guard.check_host(request)
                self.guard.check_origin(request)
            except HttpError as exc:
                await error_response(exc)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _on_unix_socket(request: Request) -> bool:
    """uvicorn names a unix socket's server as (path, None), a TCP one (host, port)."""
    server = request.scope.get("server")
    return server is not None and server[1] is None


def _check_fingerprint(request: Request, expected: str | None) -> None:
    given = request.headers.get(FINGERPRINT_HEADER, "")
    if expected is None or not hmac.compare_digest(given.encode(), expected.encode()):
        raise HttpError(
            409, "fingerprint", "this serve runs another version, config or clock: ask directly"
        )


def check_bind(host: str, token: str | None) -> None:
    """Loopback may go without a token (``--no-auth``); any other address may not."""
    if not is_loopback(host) and not token:
        raise UsageError(
            f"--host {host} is reachable from other machines: --no-auth is for loopback only"
        )


def serve(
    store: Store,
    host: str,
    port: int,
    token: str | None,
    max_body_bytes: int,
    ready: Callable[[str], None],
    note: Callable[[str], None] = lambda message: None,
) -> None:
    """Bind, call ``ready(url)`` (the URL holds ``?token=`` unless ``token`` is None:
    no authentication), then ``note`` why there is no unix socket if the data
    directory should have one; serve until interrupted."""
    import socket

    import uvicorn

    from soloqueue_mem.api.slow_clients import TimedH11Protocol

    check_bind(host, token)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets that say so (else
    # Nagle + delayed ACK add 40 ms to every response written in two parts)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(128)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    try:
        local, why, fingerprint = _local_socket(store)
    except BaseException:
        sock.close()
        raise
    with _removed_however_stopped(local):
        ready(f"http://{shown}:{bound}/" + (f"?token={token}" if token else ""))
        if why:
            note(why)
        origins = frozenset(store.config.serve_allowed_origins)
        guard = Guard(token, bound, allowed_hosts(host), origins)
        app = build_app(store, guard, max_body_bytes, fingerprint)
        config = uvicorn.Config(
            app, log_level="warning", access_log=False, lifespan="off", http=TimedH11Protocol
        )
        uvicorn.Server(config).run(sockets=[sock] if local is None else [sock, local.sock])


def _local_socket(store: Store) -> tuple[Listening | None, str | None, str | None]:
    """``<root>/serve.sock`` (or why not) and the fingerprint a call over it must send,
    on either back end: a fresh ``recall`` process spends most of its time connecting
    (PostgreSQL) or opening the indexes and loading the models (SQLite) before it
    searches (docs/howto/http.md, "A warm serve answers recall")."""
    from soloqueue_mem.api.local_socket import fingerprint, listen
    from soloqueue_mem.storage.url import database_url

    url = database_url(store.config)
    store.home.ensure()
    local, why = listen(store.root)
    return local, why, fingerprint(store.config, url)


@contextmanager
def _removed_however_stopped(local: Listening | None) -> Iterator[None]:
    """The socket file goes when ``serve`` stops, from the moment it says it is serving:
    on return, on an exception and on SIGTERM, which still ends the process as before
    (uvicorn re-raises it once it has shut down; a ``finally`` would not run)."""
    import signal
    import threading

    if local is None:
        yield
        return

    def on_sigterm(signum: int, frame: Any) -> None:
        local.remove()
        signal.signal(signum, previous or signal.SIG_DFL)
        signal.raise_signal(signum)

    main = threading.current_thread() is threading.main_thread()  # where signals go
    previous = signal.signal(signal.SIGTERM, on_sigterm) if main else None
    try:
        yield
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous or signal.SIG_DFL)
        local.remove()
