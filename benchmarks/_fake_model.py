"""A fake OpenAI-compatible chat-completions server on loopback (standard library only),
for the benchmarks and the tests of the model path: each POST's JSON body goes to
``answer``, which gives (status, content); content None never answers, so the client
times out. Every request body is kept in ``requests``."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = Callable[[dict[str, Any]], tuple[int, "str | None"]]


class FakeChat:
    def __init__(self, answer: Answer) -> None:
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers["Content-Length"])
                body = json.loads(self.rfile.read(length))
                fake.requests.append(body)
                status, content = answer(body)
                if content is None:  # never answer in time
                    fake.release.wait(5)
                    return
                message = {"role": "assistant", "content": content}
                payload = (
                    json.dumps({"choices": [{"message": message}]}) if status == 200 else "oops"
                ).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http.server_address[1]}/v1"

    def __enter__(self) -> FakeChat:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.http.shutdown()
        self.http.server_close()
