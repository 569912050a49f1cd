"""The HTTP API through a real server on a free port (the [server] extra), with urllib."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "starlette", reason="the [server] extra is not installed: pip install '.[server]'"
)
pytest.importorskip(
    "uvicorn", reason="the [server] extra is not installed: pip install '.[server]'"
)


class Server:
    """``serve`` in a process; ``call`` sends its token and a JSON body's type unless
    ``headers`` says otherwise (a header given as None is left out)."""

    def __init__(self, home, *args: str, env: dict[str, str] | None = None) -> None:
        env = {**os.environ, "SOLOQUEUE_HOME": str(home), **(env or {})}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "soloqueue_mem", "serve", "--port", "0", *args],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            env=env,
        )
        line = self.process.stderr.readline().decode()  # printed once it accepts connections
        while line.startswith("warning: "):
            line = self.process.stderr.readline().decode()
        assert line.startswith("serving on http://"), line + self.process.stderr.read().decode()
        self.url = line.split()[-1]
        address = urllib.parse.urlsplit(self.url)
        self.port = address.port
        self.token = urllib.parse.parse_qs(address.query).get("token", [None])[0]

    def call(
        self, method: str, path: str, body: Any = None, headers: dict[str, str | None] | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        sent = {"Content-Type": "application/json"} if data is not None else {}
        if self.token:
            sent["Authorization"] = f"Bearer {self.token}"
        sent.update(headers or {})
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}",
            data=data,
            method=method,
            headers={name: value for name, value in sent.items() if value is not None},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()

    def json(self, method: str, path: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
        status, _, data = self.call(method, path, body, **kw)
        return status, json.loads(data)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        self.process.stderr.close()


@pytest.fixture
def server(home) -> Iterator[Server]:
    running = Server(home)
    yield running
    running.stop()


def test_seed_004_ingest_and_query(server, cli):
    content = "项目最终决定采用微服务架构，以提高可扩展性和部署灵活性。"
    body = {"group_id": "grp-123", "content": content}
    status, made = server.json("POST", "/api/v1/memory/ingest", body)
    assert status == 200 and made["chunks"] == 1 and len(made["stored"]) == 1
    assert server.json("POST", "/api/v1/memory/ingest", body)[1]["existing"] == 1
    cli.ok("working", "add", "-g", "grp-123", "热数据：用户刚刚讨论了架构选项。")
    question = {"group_id": "grp-123", "query": "项目的架构决策是什么？"}
    status, found = server.json("POST", "/api/v1/memory/query", question)
    assert status == 200
    assert found == cli.json("query", "-g", "grp-123", "项目的架构决策是什么？")
    hot, cold = found["results"]
    assert hot == {"content": "热数据：用户刚刚讨论了架构选项。", "source": "hot", "score": 1.0}
    assert cold["content"] == content and cold["source"] == "cold" and 0 < cold["score"] <= 1
    status, other = server.json("POST", "/api/v1/memory/query", {"group_id": "g9", "query": "架构"})
    assert (status, other["results"]) == (200, [])


def test_log_trace_recall_remember_and_artifacts(server, home):
    status, logged = server.json(
        "POST", "/api/v1/log", {"session": "h1", "content": "the staging deploy timed out"}
    )
    assert status == 200 and logged["turns"][0]["session"] == "h1"
    events = [
        {"role": "assistant", "content": "retrying staging"},
        {"role": "user", "content": "ok"},
    ]
    status, logged = server.json("POST", "/api/v1/log", {"session": "h1", "events": events})
    assert [t["turn_index"] for t in logged["turns"]] == [1, 2]
    status, traced = server.json("POST", "/api/v1/trace", {"query": "staging", "session": "h1"})
    assert {h["content"] for h in traced["hits"]} == {
        "the staging deploy timed out",
        "retrying staging",
    }
    status, made = server.json(
        "POST",
        "/api/v1/remember",
        {"content": "User prefers vim", "type": "PREFERENCE", "group": "g"},
    )
    assert status == 200 and made["source"] == "manual" and made["group"] == "g"
    status, recalled = server.json("POST", "/api/v1/recall", {"query": "vim", "group": "g"})
    assert [h["id"] for h in recalled["hits"]] == [made["id"]]
    (home / "identity" / "personas").mkdir(parents=True)
    (home / "identity" / "personas" / "fan.md").write_text("---\nfavours: PREFERENCE\n---\n")
    asked = {"query": "vim", "group": "g", "persona": "fan"}
    status, recalled = server.json("POST", "/api/v1/recall", asked)
    assert status == 200 and [h["id"] for h in recalled["hits"]] == [made["id"]]
    asked = {"query": "staging", "recent": 3, "session": "h1"}  # h1's turns are its context
    status, recalled = server.json("POST", "/api/v1/recall", asked)
    assert status == 200 and recalled["hits"] == []

    from soloqueue_mem import Store

    with Store(home) as store:
        saved = store.artifact_save(bytes(range(256)) * 4, title="bytes")
    ref = f"/api/v1/artifacts/{saved.artifact.id}"
    status, headers, data = server.call("GET", ref)
    assert status == 200 and data == bytes(range(256)) * 4
    status, headers, data = server.call("GET", ref, headers={"Range": "bytes=10-19"})
    assert (status, data, headers["content-range"]) == (
        206,
        bytes(range(10, 20)),
        "bytes 10-19/1024",
    )
    status, headers, data = server.call("GET", ref, headers={"Range": "bytes=1020-"})
    assert (status, data) == (206, bytes(range(252, 256)))
    assert server.call("GET", ref, headers={"Range": "bytes=5000-"})[0] == 416
    status, meta = server.json("GET", ref + "/meta")
    assert status == 200 and meta["sha256"] == saved.artifact.content_hash


def test_errors_are_json_with_the_cli_codes(home):
    server = Server(home, "--max-body-bytes", "4096")
    try:
        check_errors(server)
    finally:
        server.stop()


def check_errors(server: Server) -> None:
    def error(method: str, path: str, body: Any = None) -> tuple[int, str, int]:
        status, data = server.json(method, path, body)
        return status, data["error"]["code"], data["error"]["exit_code"]

    assert error("GET", "/api/v1/artifacts/99") == (404, "not_found", 3)
    assert error("POST", "/api/v1/trace", {"query": "x", "limit": 0}) == (422, "bad_input", 65)
    assert error("POST", "/api/v1/trace", b"{not json") == (422, "bad_input", 65)
    assert error("POST", "/api/v1/recall", {"query": 5}) == (422, "bad_input", 65)
    assert error("POST", "/api/v1/recall", {"query": "x", "persona": "no"}) == (
        422,
        "bad_input",
        65,
    )
    assert error("POST", "/api/v1/log", {"content": "x", "session": "../x"}) == (
        422,
        "invalid_id",
        65,
    )
    assert error("POST", "/api/v1/nothing", {}) == (404, "not_found", 3)
    assert error("GET", "/api/v1/recall") == (405, "method", 2)
    big = {"content": "x" * 5000}
    assert error("POST", "/api/v1/memory/ingest", big) == (413, "too_large", 65)


def test_off_loopback_only_with_a_token_given_or_stored(home):
    refused = subprocess.run(
        [sys.executable, "-m", "soloqueue_mem", "serve", "--host", "0.0.0.0", "--port", "0"]
        + ["--no-auth"],
        capture_output=True,
        env={**os.environ, "SOLOQUEUE_HOME": str(home)},
        check=False,
        timeout=60,
    )
    assert refused.returncode == 2
    assert refused.stderr.decode().splitlines() == [
        "error: --host 0.0.0.0 is reachable from other machines: --no-auth is for loopback only"
    ]
    server = Server(home, "--host", "0.0.0.0", "--token", "s3cret")
    try:
        assert server.token == "s3cret"
        body = {"query": "x"}
        assert (
            server.json("POST", "/api/v1/recall", body, headers={"Authorization": None})[0] == 401
        )
        wrong = {"Authorization": "Bearer nope"}
        assert server.json("POST", "/api/v1/recall", body, headers=wrong)[0] == 401
        assert server.json("POST", "/api/v1/recall", body) == (
            200,
            {"hits": [], "left_out": 0, "shortened": 0, "notes": []},
        )
        assert server.json("GET", "/health", headers={"Authorization": None})[0] == 200
    finally:
        server.stop()


def test_without_the_extra_one_error_line_names_the_install_command(home):
    probe = (
        "import sys; sys.modules['uvicorn'] = None\n"
        "from soloqueue_mem.cli import main\n"
        "sys.argv = ['soloqueue-mem', 'serve']\n"
        "main()\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, check=False)
    assert result.returncode == 1
    [line] = result.stderr.decode().splitlines()
    # the package is on no index: the hint names this checkout, not 'soloqueue-mem[server]'
    assert line.startswith("error: uvicorn is not installed; install the server extra: ")
    assert line.endswith(f"'{Path(__file__).parents[2]}[server]'")


def test_the_viewers_routes_page_turns_and_edit_and_forget_memories(server, cli):
    events = [{"role": "user", "content": f"turn {n} about the staging deploy"} for n in range(5)]
    assert server.json("POST", "/api/v1/log", {"session": "p1", "events": events})[0] == 200
    base = "/api/v1/sessions/default/default/p1/turns"
    status, first = server.json("GET", f"{base}?limit=3")
    assert status == 200 and [t["turn_index"] for t in first["turns"]] == [0, 1, 2]
    assert first["next"] == 2
    rest = server.json("GET", f"{base}?limit=3&after=2")[1]
    assert ([t["content"] for t in rest["turns"]], rest["next"]) == (
        ["turn 3 about the staging deploy", "turn 4 about the staging deploy"],
        None,
    )
    assert server.json("GET", f"{base}?limit=0")[0] == 422
    assert server.json("GET", "/api/v1/sessions/default/default/nope/turns")[1]["turns"] == []

    made = server.json("POST", "/api/v1/remember", {"content": "staging runs on db-9"})[1]
    path = f"/api/v1/memories/{made['id']}"
    status, edited = server.json("POST", f"{path}/edit", {"content": "staging runs on db-10"})
    assert status == 200 and edited["content"] == "staging runs on db-10"
    assert cli.json("memory", "show", made["id"])["content"] == "staging runs on db-10"
    versions = server.json("GET", f"{path}/history")[1]["versions"]
    assert [v["content"] for v in versions] == ["staging runs on db-10"]
    assert server.json("POST", f"{path}/edit", {"content": " "})[0] == 422
    listed = server.json("GET", "/api/v1/memories?type=FACT")[1]["memories"]
    assert [m["id"] for m in listed] == [made["id"]]
    status, forgotten = server.json("POST", "/api/v1/forget", {"ids": [made["id"]]})
    assert status == 200 and forgotten["forgotten"] == [made["id"]]
    assert server.json("GET", path)[0] == 404
    assert server.json("POST", "/api/v1/forget", {"ids": []})[0] == 422
    assert server.json("GET", "/api/v1/graph/nodes/12")[0] == 404
    assert server.json("GET", "/api/v1/graph")[1] == {"nodes": [], "links": [], "focus": []}

    reply = {"session": "p1", "role": "assistant", "content": "Staging deploys wait for QA."}
    server.json("POST", "/api/v1/log", reply)
    (entry,) = server.json("GET", "/api/v1/working")[1]["entries"]
    assert (entry["content"], entry["expires_in_s"]) == (reply["content"], 24 * 3600)
    assert server.json("GET", "/api/v1/working?limit=51")[0] == 422
    assert server.json("GET", "/api/v1/episodes")[1] == {"episodes": []}
    cli.ok("session", "end", "p1")
    (episode,) = server.json("GET", "/api/v1/episodes?session=p1")[1]["episodes"]
    assert episode["outcome"] and episode["first_turn"] == 0
    pad = server.json("GET", "/api/v1/scratchpad")[1]
    assert pad["updated_at"] and pad["recent_progress"]
    assert server.json("GET", "/api/v1/scratchpad?group=bad/group")[0] == 422
