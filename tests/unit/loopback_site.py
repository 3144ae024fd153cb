"""A small web site on loopback for the verifier tests: each path answers as its route
says, and every request is recorded (method, path, headers) so a test can tell what the
verifier sent, and that it sent nothing."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    headers: Mapping[str, str]


Route = Callable[[BaseHTTPRequestHandler], None]


def status(code: int, headers: Mapping[str, str] | None = None, body: bytes = b"") -> Route:
    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(code)
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        if handler.command != "HEAD":
            handler.wfile.write(body)

    return answer


def redirect(location: str, code: int = 302) -> Route:
    return status(code, {"Location": location})


def json_body(code: int, value: Any) -> Route:
    return status(code, {"Content-Type": "application/json"}, json.dumps(value).encode())


def head_refused(then: Route) -> Route:
    """405 to HEAD, `then` to GET."""
    refuse = status(405, {"Allow": "GET"})
    return lambda handler: (refuse if handler.command == "HEAD" else then)(handler)


def slow(seconds: float, then: Route) -> Route:
    def answer(handler: BaseHTTPRequestHandler) -> None:
        time.sleep(seconds)
        then(handler)

    return answer


class Site:
    """A loopback HTTP server answering `routes` by path (404 for any other path)."""

    def __init__(self, routes: Mapping[str, Route] | None = None) -> None:
        self.routes: dict[str, Route] = dict(routes or {})
        self.seen: list[Seen] = []
        self.bytes_sent = 0
        self._lock = threading.Lock()
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self) -> None:
                with site._lock:
                    site.seen.append(Seen(self.command, self.path, dict(self.headers.items())))
                route = site.routes.get(self.path.split("?", 1)[0], status(404))
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    route(self)
                self.close_connection = True

            do_GET = do_HEAD = _answer

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def paths(self) -> list[str]:
        with self._lock:
            return [seen.path for seen in self.seen]

    def endless(self, chunk: bytes = b"x" * 65536) -> Route:
        """A 200 GET whose body claims a GiB and is written until the reader hangs up."""

        def answer(handler: BaseHTTPRequestHandler) -> None:
            handler.send_response(200)
            handler.send_header("Content-Length", str(1 << 30))
            handler.end_headers()
            for _ in range((1 << 30) // len(chunk)):
                handler.wfile.write(chunk)
                with self._lock:
                    self.bytes_sent += len(chunk)

        return head_refused(answer)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
