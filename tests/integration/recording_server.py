"""A product's HTTP intake on loopback for the export target tests: it records every
request (method, path, headers, JSON body) and answers from a script of statuses, or
never answers at all."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass(frozen=True)
class Answer:
    status: int = 200
    body: Any = None
    headers: tuple[tuple[str, str], ...] = ()


class RecordingServer:
    """Answers each request with the next of `answers` (the last one repeats); with
    `hang=True` it reads the request and never answers until closed."""

    def __init__(self, answers: list[Answer] | None = None, hang: bool = False) -> None:
        self.answers = answers or [Answer()]
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._closed = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length) if length else b""
                with server._lock:
                    server.requests.append(
                        Recorded(
                            self.command,
                            self.path,
                            {k.lower(): v for k, v in self.headers.items()},
                            json.loads(raw) if raw else None,
                        )
                    )
                    index = min(len(server.requests), len(server.answers)) - 1
                    answer = server.answers[index]
                if hang:
                    server._closed.wait(30)
                    return
                payload = json.dumps(answer.body).encode() if answer.body is not None else b""
                self.send_response(answer.status)
                for name, value in answer.headers:
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PATCH = _handle

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        self._closed.set()
        self._server.shutdown()
        self._server.server_close()
