"""Who may use ``serve``'s port: the token, the ``Host`` and ``Origin`` a request names,
and the media type of its body.

A web page the user opens can send requests to ``127.0.0.1`` (a ``text/plain`` POST
needs no preflight) and, by DNS rebinding, read the answers under a name of its own;
another local user can connect to the port. So every call but ``/health`` must carry
the token (``Authorization: Bearer``, or the cookie ``GET /?token=`` sets, as
Jupyter's), the ``Host`` must be the bound address or localhost, a browser's
``Origin`` must be the server's own or one listed in ``serve_allowed_origins``, and a
body must be declared ``application/json`` (which no page can send cross-origin
without a preflight this server does not grant). Comparisons are constant-time.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
from typing import TYPE_CHECKING

from soloqueue_mem.errors import SoloqueueError
from soloqueue_mem.tuples import NamedTuple

if TYPE_CHECKING:
    from starlette.requests import Request

    from soloqueue_mem.home import Home

TOKEN_FILE = "serve.token"
WILDCARDS = frozenset({"0.0.0.0", "::"})


class HttpError(SoloqueueError):
    """An HTTP-level refusal (auth, size, method) with its own status."""

    def __init__(self, status: int, code: str, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.status, self.code, self.exit_code = status, code, exit_code


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def stored_token(home: Home) -> str:
    """The token in ``<root>/serve.token`` (0600), made on the first call: every
    ``serve`` of the data directory then prints and checks the same one."""
    from soloqueue_mem.home import replace_private_file, write_private_file

    path = home.path(TOKEN_FILE)
    home.ensure()
    write_private_file(path, secrets.token_urlsafe(32).encode())  # nothing if there
    with open(path, "rb", opener=_no_follow) as file:
        token = file.read().decode("ascii", "replace").strip()
    if len(token) < 32:  # cut short by a crash, or edited: a new one
        token = secrets.token_urlsafe(32)
        replace_private_file(path, token.encode())
    return token


def _no_follow(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC)


class Guard(NamedTuple):
    """What a request over TCP must satisfy (see the module's docstring)."""

    token: str | None  # None: --no-auth
    port: int
    hosts: frozenset[str]  # the names a Host header may give; empty: any (a wildcard bind)
    origins: frozenset[str]  # cross-origin pages allowed (serve_allowed_origins)

    @property
    def cookie(self) -> str:
        """The cookie's name: cookies ignore ports, so one per port."""
        return f"soloqueue-mem-{self.port}"

    def check_host(self, request: Request) -> None:
        name, port = _split_host(request.headers.get("host", ""))
        if self.hosts and (name not in self.hosts or port not in ("", str(self.port))):
            raise HttpError(403, "host", "the Host header names neither this server nor localhost")

    def check_origin(self, request: Request) -> None:
        origin = request.headers.get("origin")
        if origin is None or origin in self.origins:
            return
        if origin != f"http://{request.headers.get('host', '')}":
            raise HttpError(
                403, "origin", f"requests from {origin} are refused (see serve_allowed_origins)"
            )

    def check_token(self, request: Request) -> None:
        if self.token is None:
            return
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer":
            given = request.cookies.get(self.cookie, "")
        if not same(given.strip(), self.token):
            raise HttpError(401, "unauthorized", "send Authorization: Bearer <token>")


def same(given: str, expected: str) -> bool:
    """Constant-time equality of two strings (any bytes a client sends)."""
    return hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode())


def check_json_body(request: Request) -> None:
    kind = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if kind != "application/json":
        raise HttpError(415, "media_type", "send the body as Content-Type: application/json")


def allowed_hosts(host: str) -> frozenset[str]:
    """The names a Host header may give for a server bound to ``host``."""
    if host in WILDCARDS:
        return frozenset()
    names = {f"[{host}]" if ":" in host else host, "localhost"}
    if is_loopback(host):
        names |= {"127.0.0.1", "[::1]"}
    return frozenset(names)


def _split_host(value: str) -> tuple[str, str]:
    """``name:port`` (``[v6]:port``) as (lowercased name, port or "")."""
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value.partition("]")
        return name + "]", rest.removeprefix(":")
    name, _, port = value.partition(":")
    return name, port
