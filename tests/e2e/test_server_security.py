"""Issue 30, "a server only its owner can use": a real ``serve`` on a free port, refusing
what a web page, a rebound DNS name or another local user would send."""

from __future__ import annotations

import http.client
import os
import select
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli, DbHolder

pytest.importorskip("starlette", reason="the [server] extra is not installed")
pytest.importorskip("uvicorn", reason="the [server] extra is not installed")

from tests.api.test_http import Server  # noqa: E402 - after the extra's check

PLANTED = {"content": "planted by a web page", "type": "FACT"}


@pytest.fixture
def server(home: Path) -> Any:
    running = Server(home)
    yield running
    running.stop()


def stored(cli: Cli) -> list[str]:
    return [m["content"] for m in cli.json("memory", "list")]


def test_a_cross_origin_post_is_refused(server: Server, cli: Cli) -> None:
    evil = {"Origin": "http://evil.example"}
    status, answer = server.json("POST", "/api/v1/remember", PLANTED, headers=evil)
    assert (status, answer["error"]["code"]) == (403, "origin")
    # what a page can send without a preflight: no token, text/plain
    page = {**evil, "Authorization": None, "Content-Type": "text/plain"}
    assert server.call("POST", "/api/v1/remember", PLANTED, headers=page)[0] == 403
    assert stored(cli) == []
    own = {"Origin": f"http://127.0.0.1:{server.port}"}  # a page the server itself serves
    assert server.json("POST", "/api/v1/remember", PLANTED, headers=own)[0] == 200


def test_an_origin_in_serve_allowed_origins_is_answered(home: Path, cli: Cli) -> None:
    cli.ok("log", "-s", "s1", "create the store")
    (home / "config.toml").write_text('serve_allowed_origins = ["http://localhost:3000"]\n')
    server = Server(home)
    try:
        allowed = {"Origin": "http://localhost:3000"}
        status, headers, _ = server.call("POST", "/api/v1/remember", PLANTED, headers=allowed)
        assert status == 200 and headers["access-control-allow-origin"] == "http://localhost:3000"
        other = {"Origin": "http://localhost:3001"}
        assert server.call("POST", "/api/v1/remember", PLANTED, headers=other)[0] == 403
    finally:
        server.stop()


def test_a_wrong_host_is_refused(server: Server, cli: Cli) -> None:
    rebound = {"Host": f"evil.example:{server.port}"}
    status, answer = server.json("POST", "/api/v1/remember", PLANTED, headers=rebound)
    assert (status, answer["error"]["code"]) == (403, "host")
    assert server.call("GET", "/health", headers=rebound)[0] == 403
    other_port = {"Host": f"127.0.0.1:{server.port + 1}"}
    assert server.call("GET", "/health", headers=other_port)[0] == 403
    assert stored(cli) == []
    for name in ("localhost", "127.0.0.1"):
        assert server.call("GET", "/health", headers={"Host": f"{name}:{server.port}"})[0] == 200


def test_a_missing_or_wrong_token_is_refused(server: Server, home: Path, cli: Cli) -> None:
    token_file = home / "serve.token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert server.token == token_file.read_text()
    assert server.url == f"http://127.0.0.1:{server.port}/?token={server.token}"
    for sent in (None, "Bearer nope", f"Basic {server.token}", f"Bearer {server.token}x"):
        status, answer = server.json(
            "POST", "/api/v1/remember", PLANTED, headers={"Authorization": sent}
        )
        assert (status, answer["error"]["code"]) == (401, "unauthorized")
    assert stored(cli) == []
    assert server.json("GET", "/health", headers={"Authorization": None})[0] == 200
    again = Server(home)  # the same token on every start
    try:
        assert again.token == server.token
    finally:
        again.stop()


def test_the_printed_url_logs_a_browser_in_with_a_strict_cookie(server: Server) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.request("GET", f"/?token={server.token}")
    response = conn.getresponse()
    response.read()
    conn.close()
    assert (response.status, response.getheader("location")) == (303, "/")
    cookie = response.getheader("set-cookie")
    name = f"soloqueue-mem-{server.port}"
    assert cookie.startswith(f"{name}={server.token};")
    assert {"httponly", "samesite=strict"} <= {part.strip().lower() for part in cookie.split(";")}
    with_cookie = {"Authorization": None, "Cookie": f"{name}={server.token}"}
    assert server.json("POST", "/api/v1/recall", {"query": "x"}, headers=with_cookie)[0] == 200
    assert server.json("GET", "/?token=wrong", headers={"Authorization": None})[0] == 401
    wrong_cookie = {"Authorization": None, "Cookie": f"{name}=wrong"}
    assert server.json("POST", "/api/v1/recall", {"query": "x"}, headers=wrong_cookie)[0] == 401


def test_no_auth_only_with_its_flag_and_a_warning(home: Path, cli: Cli) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "soloqueue_mem", "serve", "--port", "0", "--no-auth"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        env={**os.environ, "SOLOQUEUE_HOME": str(home)},
    )
    try:
        warning = process.stderr.readline().decode()
        assert warning.startswith("warning: --no-auth: any local user can read and write")
        url = process.stderr.readline().decode().split()[-1]
        assert "token" not in url and not (home / "serve.token").exists()
    finally:
        process.terminate()
        process.wait(timeout=30)
        process.stderr.close()


def test_a_client_that_never_finishes_its_headers_is_disconnected(server: Server) -> None:
    """Slow-loris: the server closes the connection (10 s after it opened); the 60 s
    timeout only keeps a failure from hanging the run."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=60) as conn:
        conn.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and no more
        assert conn.recv(1024) == b""
    assert server.call("GET", "/health")[0] == 200


def test_a_text_plain_body_is_refused(server: Server, cli: Cli) -> None:
    for kind in ("text/plain", None, "application/x-www-form-urlencoded"):
        status, answer = server.json(
            "POST", "/api/v1/remember", PLANTED, headers={"Content-Type": kind}
        )
        assert (status, answer["error"]["code"]) == (415, "media_type")
    assert stored(cli) == []
    utf8 = {"Content-Type": "application/json; charset=utf-8"}
    assert server.json("POST", "/api/v1/remember", PLANTED, headers=utf8)[0] == 200


def test_an_html_artifact_is_served_as_an_attachment(server: Server, home: Path) -> None:
    from soloqueue_mem import Store

    page = b"<html><script>fetch('/api/v1/recall')</script></html>"
    with Store(home) as store:
        saved = store.artifact_save(page, title="page.html", mime="text/html")
    status, headers, data = server.call("GET", f"/api/v1/artifacts/{saved.artifact.id}")
    assert (status, data) == (200, page)
    assert headers["content-disposition"].startswith("attachment")
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["content-security-policy"].startswith("sandbox")
    part = server.call(
        "GET", f"/api/v1/artifacts/{saved.artifact.id}", headers={"Range": "bytes=0-5"}
    )
    assert part[0] == 206 and part[1]["content-disposition"].startswith("attachment")


def test_health_answers_while_a_write_waits_on_the_sqlite_lock(home: Path, cli: Cli) -> None:
    cli.ok("log", "-s", "s1", "create the store")
    (home / "config.toml").write_text("busy_timeout_ms = 120000\n")
    marking = {"SOLOQUEUE_TESTING": "1", "SOLOQUEUE_FAULT": "serve.handler:mark"}
    server = Server(home, env=marking)
    try:
        with DbHolder(home / "memory.db") as holder:
            answers: list[tuple[int, Any]] = []
            writer = threading.Thread(
                target=lambda: answers.append(server.json("POST", "/api/v1/remember", PLANTED))
            )
            writer.start()
            await_line(server.process.stderr, b"fault serve.handler\n")  # it waits on the lock
            assert server.json("GET", "/health") == (200, {"status": "ok", "version": version()})
            assert writer.is_alive() and answers == []
            holder.release()
            writer.join(timeout=60)
        assert answers[0][0] == 200
        assert stored(cli) == ["planted by a web page"]
    finally:
        server.stop()


def version() -> str:
    from soloqueue_mem import __version__

    return __version__


def await_line(stream: Any, expected: bytes, timeout: float = 60) -> None:
    """Read ``stream`` until the line ``expected`` (fail after ``timeout`` seconds)."""
    fd, seen = stream.fileno(), b""
    while expected not in seen:
        ready, _, _ = select.select([fd], [], [], timeout)
        assert ready, f"no {expected!r} within {timeout} s; got {seen!r}"
        chunk = os.read(fd, 4096)
        assert chunk, f"the server exited; got {seen!r}"
        seen += chunk


MALFORMED = [
    ("/api/v1/remember", {"content": "x", "tags": [1]}),
    ("/api/v1/remember", {"content": "x", "tags": [["x"]]}),
    ("/api/v1/recall", {"query": "x", "channels": [1]}),
    ("/api/v1/recall", {"query": "x", "channels": [["x"]]}),
    ("/api/v1/log", {"events": [["x"]]}),
    ("/api/v1/log", [["x"]]),
]


def test_malformed_values_give_a_json_error_not_a_500(server: Server, home: Path) -> None:
    for route, body in MALFORMED:
        status, answer = server.json("POST", route, body)
        assert (status, answer["error"]["exit_code"]) == (422, 65), (route, body, answer)
    from soloqueue_mem import Store

    with Store(home) as store:
        saved = store.artifact_save(b"0123456789", title="digits")
    ref = f"/api/v1/artifacts/{saved.artifact.id}"
    for wanted in ("bytes=²-³", "bytes=0-³", "bytes=-5", "lines=1-2"):
        status, answer = server.json("GET", ref, headers={"Range": wanted})
        assert (status, answer["error"]["code"]) == (416, "range"), wanted
