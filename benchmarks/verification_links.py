"""A loopback HTTP server for benchmarks.verification, and replies citing it.

The server (stdlib `ThreadingHTTPServer` on 127.0.0.1, a free port) answers by the
path's first segment, for HEAD and GET alike unless said otherwise:

    /docs/N        200
    /gone/N        404
    /moved/N       301 to /docs/N      (exists)
    /moved-gone/N  302 to /gone/N      (does not)
    /get-only/N    405 to HEAD, 200 to GET (exists: the checker falls back to GET)

Every URL of a run is distinct, so a first pass finds the link cache empty.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from factledger.processors.model import ToolCall, Turn
from factledger.processors.verification.base import SubjectKind

from .verification_replies import Planted, Reply

EXISTS = {"docs": True, "gone": False, "moved": True, "moved-gone": False, "get-only": True}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_HEAD(self) -> None:
        self._answer(head=True)

    def do_GET(self) -> None:
        self._answer(head=False)

    def _answer(self, *, head: bool) -> None:
        _, kind, number = [*self.path.split("/"), "", ""][:3]
        if kind == "docs" or (kind == "get-only" and not head):
            self._send(200, b"<html><body>the page</body></html>", head=head)
        elif kind == "moved":
            self._send(301, b"", head=head, location=f"/docs/{number}")
        elif kind == "moved-gone":
            self._send(302, b"", head=head, location=f"/gone/{number}")
        elif kind == "get-only":
            self._send(405, b"", head=head)
        else:
            self._send(404, b"not found", head=head)

    def _send(self, status: int, body: bytes, *, head: bool, location: str = "") -> None:
        self.send_response(status)
        if location:
            self.send_header("Location", location)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: a request line per check would bury the figures."""


@contextmanager
def link_server() -> Iterator[str]:
    """The base URL (`http://127.0.0.1:PORT`) of a running server, stopped on exit."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="bench-links", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def link_replies(base: str, count: int, seed: int = 11) -> list[Reply]:
    """`count` replies, each citing two distinct URLs of the server it did not fetch."""
    rng = random.Random(seed)
    kinds = list(EXISTS)
    out = []
    for i in range(count):
        planted = tuple(
            Planted(SubjectKind.URL, f"{base}/{kind}/{2 * i + j}", EXISTS[kind], kind)
            for j, kind in enumerate(rng.sample(kinds, 2))
        )
        reply = f"According to {planted[0].name} and {planted[1].name}, the limit is 5 per hour."
        call = ToolCall("web_search", call_id="call_1", arguments={"q": "limit"}, result="none")
        turn = Turn(reply=reply, user_message="What is the limit?", tool_calls=(call,))
        out.append(Reply(turn, planted))
    return out
