"""The cap on requests served at once (`max_connections`), which health checks bypass.

A request past the cap is answered 503 with `Retry-After` at once, before its body is
read. `/healthz` and `/readyz` are answered whatever the load, so an orchestrator never
restarts a service for being busy. Connections that have not sent a request do not
count here: the HTTP server closes the longest idle of them when open connections reach
the cap (`collector.http_server`).
"""

from __future__ import annotations

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

HEALTH_PATHS = frozenset({"/healthz", "/readyz"})
RETRY_AFTER_SECONDS = 2


class ServingCap:
    """ASGI middleware: at most `limit` requests in the app at once, health checks aside.
    Runs on the event loop only, so the count needs no lock."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit
        self.serving = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in HEALTH_PATHS:
            await self.app(scope, receive, send)
            return
        if self.serving >= self.limit:
            busy = JSONResponse(
                {"detail": "the service is serving as many requests as it may, retry later"},
                status_code=503,
                headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
            )
            await busy(scope, receive, send)
            return
        self.serving += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.serving -= 1
