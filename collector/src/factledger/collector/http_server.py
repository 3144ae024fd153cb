"""The HTTP server under the app: uvicorn on h11, with every connection bounded in time.

A client cannot hold a connection (a socket, a task, the bytes it has sent) for longer
than the limits below, whatever it sends or fails to send:

| stage | limit | what happens |
|---|---|---|
| request line and headers | `header_timeout_seconds` | the connection is closed |
| body | `body_timeout_seconds` (the receiver) | 408, the connection is closed |
| idle between requests | `idle_timeout_seconds` | the connection is closed |
| requests served at once (health checks aside) | `max_connections` | 503 (serving_cap.py) |
| open connections | `max_connections` | the longest idle one is closed |
| request line and headers, in bytes | `MAX_HEADER_BYTES` | 400 |

uvicorn has the idle timeout and the header size; it has no header timeout (a client
that sends half a request line keeps its connection for ever), which `HeaderTimeoutH11`
adds. uvicorn's own connection limit counts every open socket, so a crowd of sockets
that never send a byte would have every request, readiness checks included, answered
503; here a connection that is not in a request (it has sent nothing yet, only part of
its headers, or waits between requests) is closed to make room instead, the longest
idle first, and only requests count against the cap.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from factledger.collector.access_log import redact_access_log
from factledger.collector.gc_tuning import tune_collector
from factledger.collector.settings import ServiceSettings

MAX_HEADER_BYTES = 64 * 1024
"""The request line and headers of an OTLP export are a few hundred bytes; 64 KiB leaves
room for long bearer tokens and proxies' headers."""


class HeaderTimeoutH11(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request headers have not all
    arrived `header_timeout` seconds after the connection opened or the request's first
    byte came in."""

    header_timeout: float = 10.0
    max_connections: int = 1000

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None
        self._idle_since = 0.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._idle_since = self.loop.time()
        self._arm_header_timer()
        if len(self.connections) > self.max_connections:
            self._close_longest_idle()

    def on_response_complete(self) -> None:
        self._idle_since = self.loop.time()
        super().on_response_complete()

    @property
    def in_request(self) -> bool:
        """A request of this connection is being served (its headers are all in and its
        response is not complete)."""
        return self.cycle is not None and not self.cycle.response_complete

    def _close_longest_idle(self) -> None:
        """Make room for this connection: close the open connection that has waited
        longest outside a request (none when every other one is in a request)."""
        idle = [
            c
            for c in self.connections
            if isinstance(c, HeaderTimeoutH11) and not c.in_request and c is not self
        ]
        if idle:
            min(idle, key=lambda c: c._idle_since).transport.close()

    def data_received(self, data: bytes) -> None:
        waiting = self.conn.their_state is h11.IDLE
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm_header_timer()
        elif waiting and self._header_timer is None:
            # The first bytes of a later request on a kept-alive connection.
            self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        super().connection_lost(exc)

    def _arm_header_timer(self) -> None:
        self._disarm_header_timer()
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_late)

    def _disarm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def server_config(app: Any, settings: ServiceSettings) -> uvicorn.Config:
    """The uvicorn configuration of `factledger serve`: the limits in the module docstring."""
    limits = {
        "header_timeout": settings.header_timeout_seconds,
        "max_connections": settings.max_connections,
    }
    protocol = type("HeaderTimeoutH11", (HeaderTimeoutH11,), limits)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level="info",
        http=protocol,
        timeout_keep_alive=max(1, round(settings.idle_timeout_seconds)),
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
    )
    # After the Config: it sets uvicorn's loggers up. A query string may carry a secret.
    if settings.redactor is not None:
        redact_access_log(settings.redactor.text)
    return config


def serve(app: Any, settings: ServiceSettings) -> None:
    """Run `app` until the process is told to stop."""
    tune_collector()
    uvicorn.Server(server_config(app, settings)).run()
