"""A webhook receiver on loopback for the alert tests: it records every POST (when, path,
JSON body) and answers with a chosen status."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver:
    """A webhook receiver on loopback that records every request and answers `status`."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.requests: list[tuple[float, str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver._lock:
                    receiver.requests.append((time.monotonic(), self.path, json.loads(body)))
                self.send_response(receiver.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{path}"

    def bodies(self, path: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [body for _, p, body in self.requests if path is None or p == path]

    def times(self, path: str) -> list[float]:
        with self._lock:
            return [t for t, p, _ in self.requests if p == path]

    def wait_for(self, count: int, timeout: float = 30.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while len(self.bodies()) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.bodies()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
