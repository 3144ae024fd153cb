"""Request bodies at the HTTP edge: a size limit on every route, and a refused body read
to its end before the reply, so the client hears the answer.

| route | limit | over it |
|---|---|---|
| `/v1/traces`, `/v1/logs` | `max_body_bytes` (the receiver checks it) | 413, `google.rpc.Status` |
| every other route | `max_api_body_bytes` | 413, `{"detail": ...}` |

A declared Content-Length over the limit is refused before a byte of the body is read;
a body without one is refused once it passes the limit, having held at most the limit
and one chunk.

A client writes its whole request before it reads the reply (OTLP exporters all do).
When the server answers before the body is read (401, 413, 503) and closes the
connection with the rest still arriving, the kernel resets the connection and the
client reads a reset, not the status: a permanent 413 looks like a network error and is
retried. So, before a reply goes out, whatever of the body the route left unread is
read and discarded, up to `drain_bytes` and for at most `DRAIN_SECONDS`; past either
the reply goes out anyway and the connection is closed. Not drained: a request that
waits for `100 Continue` (its body never comes unless asked for), and a 408 (a client
too slow to send its body is not waited for twice).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from fastapi import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

DRAIN_BYTES = 64 * 1024 * 1024
"""The least of a refused body read before the reply (the default body limit); a larger
`max_body_bytes` raises it."""
DRAIN_SECONDS = 5.0
"""How long a refused request's body is read for before the reply goes out without it."""
OTLP_PATHS = frozenset({"/v1/traces", "/v1/logs"})
"""Routes whose receiver bounds its own body (in OTLP's error format)."""


def body_limit(max_api_body_bytes: int) -> Callable[[str], int | None]:
    """The limit of the route at a path: None where the route bounds its body itself."""

    def limit(path: str) -> int | None:
        return None if path in OTLP_PATHS else max_api_body_bytes

    return limit


class RequestBodies:
    """ASGI middleware bounding every request body (`limit_of(path)` bytes, None: the
    route's own bound) and reading a refused body to its end before the reply."""

    def __init__(
        self, app: ASGIApp, limit_of: Callable[[str], int | None], drain_bytes: int
    ) -> None:
        self.app = app
        self.limit_of = limit_of
        self.drain_bytes = drain_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body = _Body(scope, receive, self.limit_of(scope["path"]))
        reply = _DrainingSend(body, send, self.drain_bytes)
        if body.declared_too_large:
            too_large = JSONResponse({"detail": body.too_large_message}, status_code=413)
            await too_large(scope, body.receive, reply)
            return
        await self.app(scope, body.receive, reply)


class _Body:
    """One request's body as the route receives it: counted against its limit, and
    whether all of it has been received."""

    def __init__(self, scope: Scope, receive: Receive, limit: int | None) -> None:
        self._receive = receive
        self.limit = limit
        self.received = 0
        self.ended = False
        found = dict(scope["headers"])
        self.waits_for_continue = found.get(b"expect", b"").lower() == b"100-continue"
        length = found.get(b"content-length", b"")
        self.declared = int(length) if length.isdigit() else None
        if self.declared == 0 or (self.declared is None and b"transfer-encoding" not in found):
            self.ended = True  # no body at all: nothing to wait for

    @property
    def declared_too_large(self) -> bool:
        return self.limit is not None and self.declared is not None and self.declared > self.limit

    @property
    def too_large_message(self) -> str:
        return f"request body exceeds the limit of {self.limit} bytes"

    async def receive(self) -> Message:
        message = await self._receive()
        if message["type"] == "http.disconnect":
            self.ended = True
        elif message["type"] == "http.request":
            self.received += len(message.get("body", b""))
            if not message.get("more_body", False):
                self.ended = True
            if self.limit is not None and self.received > self.limit:
                raise HTTPException(413, self.too_large_message)
        return message

    async def drain(self, most: int) -> bool:
        """Read and discard the rest of the body, up to `most` bytes in all and
        `DRAIN_SECONDS`; whether it all came."""
        if self.waits_for_continue and self.received == 0:
            return False
        if self.declared is not None and self.declared > most:
            return False  # it could not all be read: close at once
        try:
            async with asyncio.timeout(DRAIN_SECONDS):
                while not self.ended and self.received <= most:
                    message = await self._receive()
                    if message["type"] == "http.disconnect":
                        return False
                    self.received += len(message.get("body", b""))
                    self.ended = not message.get("more_body", False)
        except TimeoutError:
            return False
        return self.ended


class _DrainingSend:
    """The route's `send`, draining what it left of the body before the reply starts;
    a reply that could not wait for all of it closes the connection."""

    def __init__(self, body: _Body, send: Send, drain_bytes: int) -> None:
        self._body = body
        self._send = send
        self._drain_bytes = drain_bytes

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start" and not self._body.ended:
            drained = message["status"] != 408 and await self._body.drain(self._drain_bytes)
            if not drained:
                message = {**message, "headers": [*message.get("headers", []), _CLOSE]}
        await self._send(message)


_CLOSE = (b"connection", b"close")
