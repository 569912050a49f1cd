"""uvicorn's h11 protocol with a deadline on a request's line and headers.

uvicorn closes a kept-alive connection that stays idle, but one that dribbles a header
byte at a time (or connects and says nothing) is kept forever, and each such
connection holds a descriptor: a few hundred of them and the server accepts nobody.
Here the request line and headers must arrive within HEADER_SECONDS of the connection
(or of the previous response); the body has its own limit (``http.BODY_SECONDS``).
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_SECONDS = 10.0


class TimedH11Protocol(H11Protocol):
    _header_timer: asyncio.TimerHandle | None = None
    _waiting_after: object = None  # the request before the one awaited (None: the first)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_headers()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.cycle is not self._waiting_after:  # a request's headers are in
            self._stop_waiting()

    def on_response_complete(self) -> None:
        finished = self.cycle
        super().on_response_complete()  # may start a pipelined request at once
        if self.cycle is finished and not self.transport.is_closing():
            self._await_headers()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)

    def _await_headers(self) -> None:
        self._stop_waiting()
        self._waiting_after = self.cycle
        self._header_timer = self.loop.call_later(HEADER_SECONDS, self._headers_too_slow)

    def _stop_waiting(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.close()
