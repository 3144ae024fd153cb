"""An OTLP/HTTP logs receiver on loopback for the export tests and benchmark, free of the
OTel SDK: it decodes each ExportLogsServiceRequest with opentelemetry-proto and keeps
every log record as a flat `Event`. Its answers are scripted: a queue of (status, headers) served
in order, then `status` for every request after them.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


@dataclass(frozen=True)
class Event:
    """One log record as received."""

    event_name: str
    trace_id: str
    span_id: str
    attributes: dict[str, Any]
    service_name: str
    time_unix_nano: int
    received_at: float
    """Wall seconds when the request holding it was answered."""


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, kind) if kind else None


def decode_events(body: bytes, received_at: float = 0.0) -> list[Event]:
    """Every log record of one OTLP/protobuf logs request body."""
    request = ExportLogsServiceRequest.FromString(body)
    events = []
    for resource_logs in request.resource_logs:
        resource = {kv.key: _value(kv.value) for kv in resource_logs.resource.attributes}
        for scope_logs in resource_logs.scope_logs:
            for log_record in scope_logs.log_records:
                events.append(
                    Event(
                        event_name=log_record.event_name,
                        trace_id=log_record.trace_id.hex(),
                        span_id=log_record.span_id.hex(),
                        attributes={kv.key: _value(kv.value) for kv in log_record.attributes},
                        service_name=str(resource.get("service.name", "")),
                        time_unix_nano=log_record.time_unix_nano,
                        received_at=received_at,
                    )
                )
    return events


class LogsSink:
    """Records the events of every request answered 2xx (`events`) and counts all
    requests (`requests`); `delay_seconds` holds each answer back."""

    def __init__(self, status: int = 200, port: int = 0) -> None:
        self.status = status
        self.delay_seconds = 0.0
        self.script: deque[tuple[int, dict[str, str]]] = deque()
        self.events: list[Event] = []
        self.requests = 0
        self._lock = threading.Lock()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with sink._lock:
                    sink.requests += 1
                    status, headers = sink.script.popleft() if sink.script else (sink.status, {})
                    delay = sink.delay_seconds
                if delay:
                    time.sleep(delay)
                if 200 <= status < 300:
                    events = decode_events(body, time.time())
                    with sink._lock:
                        sink.events.extend(events)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/logs"

    def received(self) -> list[Event]:
        with self._lock:
            return list(self.events)

    def wait_for(self, count: int, timeout: float = 30.0) -> list[Event]:
        """At least `count` events, or AssertionError at `timeout`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            events = self.received()
            if len(events) >= count:
                return events
            time.sleep(0.02)
        raise AssertionError(f"{len(self.received())} events received, not {count}")

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
