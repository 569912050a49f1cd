"""``serve``'s unix socket in the data directory, and the client a short ``recall``
process uses to ask that warm server instead of doing the work itself: importing
psycopg and connecting on PostgreSQL, opening the indexes and loading the embedding
models on SQLite.

The socket is ``<root>/serve.sock`` (``Home.serve_socket``). The root is 0700 and
ours, so only its owner can reach the socket: it needs no token. A fingerprint of the
program's version, the parsed config, the database URL, the embedding models
installed, the locale's language and a pinned ``SOLOQUEUE_NOW`` travels with every
request over it; a server whose
fingerprint differs answers 409, and the client then does the work itself. This module
imports neither Starlette, psycopg nor a model (it is on the client's start-up path);
``http.client`` only when a request is made.
"""

from __future__ import annotations

import os
import socket
import stat

from soloqueue_mem.errors import SoloqueueError, UsageError
from soloqueue_mem.home import SERVE_SOCKET
from soloqueue_mem.tuples import NamedTuple

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import Any

    from soloqueue_mem.config import Config

FINGERPRINT_HEADER = "X-Soloqueue-Fingerprint"
MAX_PATH_BYTES = 107  # sun_path holds 108 bytes with the terminating NUL
CONNECT_SECONDS = 1.0  # also how long a server has to take the request (100 Continue)
ANSWER_SECONDS = 120.0


def socket_path(root: Any) -> str:
    return os.path.join(os.fspath(root), SERVE_SOCKET)


def our_socket(path: str) -> bool:
    """Whether ``path`` is a socket of this user (no server: no request made)."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISSOCK(info.st_mode) and info.st_uid == os.geteuid()


def fingerprint(config: Config, url: str | None) -> str:
    """What must match between a client and the server it asks: a short hash. Besides
    the settings, what else shapes an answer: the models installed (a serve from an
    environment without them, or with them only, would answer with other channels) and
    the language ``language = "auto"`` takes from each process's locale (a hit's
    prefix)."""
    import hashlib

    from soloqueue_mem import __version__
    from soloqueue_mem.semantic.model import usable
    from soloqueue_mem.text.strings import resolve

    pinned = os.environ.get("SOLOQUEUE_NOW", "")
    parts = (__version__, repr(config), url or "", ",".join(usable()), resolve(config.language))
    return hashlib.sha256("\0".join((*parts, pinned)).encode()).hexdigest()[:32]


class Listening(NamedTuple):
    sock: socket.socket
    path: str
    # The socket file this server bound, as (inode, ctime): unlinked at exit if still
    # there (an inode number alone is reused at once on tmpfs).
    identity: tuple[int, int]

    def remove(self) -> None:
        """Unlink the socket file if it is still ours (not a later server's)."""
        try:
            if _identity(os.lstat(self.path)) == self.identity:
                os.unlink(self.path)
        except OSError:
            pass


def listen(root: Any) -> tuple[Listening | None, str | None]:
    """A listening socket at ``<root>/serve.sock``, or None and why not (a note)."""
    path = socket_path(root)
    if len(os.fsencode(path)) > MAX_PATH_BYTES:
        return None, f"{path} is too long for a unix socket; recall will not forward here"
    info = os.lstat(os.fspath(root))
    if info.st_uid != os.geteuid() or info.st_mode & 0o077:
        return None, f"data directory {os.fspath(root)} is not private (0700): no {SERVE_SOCKET}"
    refused = _stale(path)
    if refused is not None:
        return None, refused
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(path)
        os.chmod(path, 0o600)
        sock.listen(128)
        identity = _identity(os.lstat(path))
    except OSError as exc:
        sock.close()
        return None, f"cannot listen on {path}: {exc.strerror}"
    return Listening(sock, path, identity), None


def _identity(info: os.stat_result) -> tuple[int, int]:
    return info.st_ino, info.st_ctime_ns


def _stale(path: str) -> str | None:
    """Remove a socket nobody listens on; why not to bind there, if so."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISSOCK(info.st_mode):
        return f"{path} exists and is not a socket: left alone, recall will not forward here"
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(CONNECT_SECONDS)
    try:
        probe.connect(path)
    except (ConnectionRefusedError, FileNotFoundError):
        os.unlink(path)
        return None
    except OSError as exc:
        return f"cannot check {path}: {exc.strerror or exc}; recall will not forward here"
    finally:
        probe.close()
    return f"another serve listens on {path}; recall forwards to that one"


def post(path: str, route: str, body: dict[str, Any], mark: str) -> tuple[int, Any] | None:
    """POST ``body`` to ``route`` over the socket at ``path`` with ``mark``, this
    client's fingerprint: the status and the JSON answer, or None when no server
    answered or the answer was not JSON.

    A stopped server (``kill -STOP``, a frozen machine) still accepts connections (the
    kernel does): so the body goes only after the server's ``100 Continue``, which a
    live one sends at once, and without it within CONNECT_SECONDS the caller does the
    work itself; a recall that takes longer then still gets ANSWER_SECONDS."""
    import http.client

    from soloqueue_mem import jsonio
    from soloqueue_mem.errors import BadInput

    class UnixConnection(http.client.HTTPConnection):
        def connect(self) -> None:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(CONNECT_SECONDS)
            self.sock.connect(path)
            self.sock.settimeout(ANSWER_SECONDS)

    conn = UnixConnection("localhost")
    payload = jsonio.dumps(body).encode()
    headers = {
        "Content-Type": "application/json",
        "Content-Length": str(len(payload)),
        "Expect": "100-continue",
        FINGERPRINT_HEADER: mark,
    }
    try:
        conn.putrequest("POST", route, skip_accept_encoding=True)
        for name, value in headers.items():
            conn.putheader(name, value)
        conn.endheaders()
        if not _answering(conn.sock):
            return None
        conn.send(payload)
        response = conn.getresponse()  # skips the 100 Continue
        status, data = response.status, response.read()
    except (OSError, http.client.HTTPException):
        return None
    finally:
        conn.close()
    try:
        return status, jsonio.loads(data)
    except BadInput:
        return None


def _answering(sock: socket.socket) -> bool:
    """Whether the server starts answering (100 Continue, or a refusal) within
    CONNECT_SECONDS; what it sent is left for the response's parser."""
    sock.settimeout(CONNECT_SECONDS)
    try:
        started = sock.recv(1, socket.MSG_PEEK)
    except TimeoutError:
        return False
    sock.settimeout(ANSWER_SECONDS)
    return bool(started)


class Relayed(SoloqueueError):
    """The server's answer to the user's own mistake, reported as the CLI reports it."""

    def __init__(self, code: str, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.code, self.exit_code = code, exit_code


def relayed(status: int, answer: Any) -> Relayed | None:
    """The error a 400 or 422 answer carries (a usage error, bad input: the user's);
    None for anything the client should rather do itself (409, 413, 5xx, odd)."""
    error = answer.get("error") if isinstance(answer, dict) else None
    if status not in (400, 422) or not isinstance(error, dict):
        return None
    code, message, exit_code = error.get("code"), error.get("message"), error.get("exit_code")
    if not (isinstance(code, str) and isinstance(message, str) and type(exit_code) is int):
        return None
    if error.get("cli_exit_code") == UsageError.exit_code:  # a bad option value
        return Relayed(UsageError.code, message, UsageError.exit_code)
    return Relayed(code, message, exit_code)
